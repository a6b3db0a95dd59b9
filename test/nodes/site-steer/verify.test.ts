/**
 * Site steer's delivery check in the Node-RED runtime: reports on output 2 against
 * the simulator with a frozen clock, the checks' timers on a @sinonjs/fake-timers clock
 * (setDeliveryClock) advanced in step with the simulator's. yes, partly and no each appear
 * (room to follow, a battery that empties mid-window, a full one asked to charge), unknown on
 * a failed read; the status shows the last verdict; verifyEvery; a later request ends the
 * window before it; a redeploy cancels; a flow without verify behaves as before.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { formatClock, MINUTE_MS } from '../../../src/protocol/time';
import { setDeliveryClock } from '../../../src/runtime/delivery-check';
import { verifySettingsOf } from '../../../src/nodes/shared/steer-verify';
import { startSimulator, type StartedSimulator } from '../../../src/simulator';
import { DELIVERY_SITES as SITES } from '../../helpers/delivery-sites';
import { Inbox, cfg, flow, helper, loadFlow, logged, siteSteer, useRuntime, type Loaded } from '../../helpers/red';

const OK = SITES.ok;

describe('site steer: delivery check (verify)', () => {
  useRuntime();
  let simulator: StartedSimulator;
  let clock: FakeTimers.Clock;

  beforeEach(async () => {
    const t0 = Date.now();
    simulator = await startSimulator({ port: 0, frozen: true, startTime: t0, sites: Object.values(SITES) });
    clock = FakeTimers.createClock(t0);
    setDeliveryClock({
      now: () => clock.now,
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
      clearTimeout: (t) => clock.clearTimeout(t as FakeTimers.TimerId),
    });
  });
  afterEach(async () => {
    setDeliveryClock();
    await simulator.close();
  });

  /** A verifying site steer (ESS, 15 minutes) with output 2 wired to a helper `rep`. */
  async function load(extra: Record<string, unknown> = {}): Promise<Loaded & { reports: Inbox }> {
    const node = siteSteer(OK.siteReference, {
      validity: 'duration',
      duration: 15,
      verify: true,
      batteryDevice: OK.battery.deviceReference,
      batteryDeviceType: 'str',
      pvDevice: OK.pv.deviceReference,
      meterDevice: OK.meter.deviceReference,
      verifyEvery: 0,
      tolerance: 10,
      toleranceMin: 1000,
      outputs: 2,
      version: 4,
      wires: [['out'], ['rep']],
      ...extra,
    });
    const loaded = await loadFlow(flow(node, cfg(simulator.url), { id: 'rep', type: 'helper', wires: [] }));
    return { ...loaded, reports: new Inbox(helper.getNode('rep')) };
  }

  /** The measurement reads the simulator answered (the windows' readings). */
  const reads = () => logged(simulator, 'GET /devices/:ref/measurements').length;

  /** Resolves once the simulator answered `n` reads in all (event-loop turns, bounded; no sleeping). */
  async function answered(n: number): Promise<void> {
    for (let turn = 0; turn < 10_000 && reads() < n; turn++) await new Promise(setImmediate);
    assert.ok(reads() >= n, `${n} readings expected, ${reads()} answered`);
  }

  /** Resolves once no read was answered for 50 event-loop turns (readings that may share one request). */
  async function quiet(): Promise<void> {
    for (let still = 0, n = reads(); still < 50; still++) {
      await new Promise(setImmediate);
      if (reads() !== n) [still, n] = [0, reads()];
    }
  }

  /** Sends, then waits until the windows it opened took their first reading (`devices`: the devices they read). */
  async function steer(f: Loaded, msg: Record<string, unknown>, devices = 1): Promise<any> {
    const before = reads();
    const reply = await f.ask(msg);
    await answered(before + devices);
    return reply;
  }

  /** Moves both clocks by `ms` (the checks' timers due in it run). */
  async function advance(ms: number): Promise<void> {
    simulator.sim.clock.advance(ms);
    await clock.tickAsync(ms);
  }

  it('yes: output 2 carries the report as specified; the status adds the last verdict to what was sent', async () => {
    const loaded = await load();
    const t0 = clock.now;
    const reply = await steer(loaded, { payload: -5 });
    const until = reply.request.body.validUntil;
    await advance(until - t0);
    const rep = await loaded.reports.next();
    assert.deepEqual(
      Object.keys(rep).filter((k) => k !== '_msgid'),
      ['topic', 'site', 'payload'],
    );
    assert.deepEqual([rep.topic, rep.site], ['delivery', OK.siteReference]);
    assert.deepEqual(rep.payload, {
      site: OK.siteReference,
      component: 'energyStorage',
      asked: { value: -5, unit: 'kW' },
      measured: { value: -5, unit: 'kW' },
      deviation: { value: 0, unit: 'kW', percent: 0 },
      followed: 'yes',
      from: t0,
      until,
      source: 'energy counters',
      device: OK.battery.deviceReference,
      tolerance: { value: 1, unit: 'kW' },
      crossCheck: { start: -5, end: 1, unit: 'kW', agrees: true },
    });
    assert.equal(loaded.out.msgs.length, 1, 'output 1: only the response');
    const st = loaded.status.all.at(-1);
    assert.deepEqual(st, {
      fill: 'green',
      shape: 'dot',
      text: `sent ESS −5 kW until ${formatClock(until)} · last: yes (−5 kW)`,
    });
    assert.equal(clock.countTimers(), 0, 'no timer left');
    const after = reads();
    await advance(MINUTE_MS);
    assert.deepEqual(
      [reads(), loaded.reports.msgs.length],
      [after, 1],
      'the window closed: no reading, no report after it',
    );
  });

  it('partly: a discharge as the battery reaches its minimum mid-window; no: charging a full battery (devices from msg)', async () => {
    const loaded = await load({ batteryDevice: 'battery', batteryDeviceType: 'msg' });
    const t0 = clock.now;
    const validUntil = Date.now() + 15 * MINUTE_MS;
    await steer(loaded, {
      payload: { energyStorage: 10, validUntil },
      site: SITES.low.siteReference,
      battery: SITES.low.battery.deviceReference,
    });
    await steer(loaded, {
      payload: { energyStorage: -5, validUntil },
      site: SITES.full.siteReference,
      battery: SITES.full.battery.deviceReference,
    });
    await advance(validUntil - t0);
    await loaded.reports.count(2);
    const by = Object.fromEntries(loaded.reports.msgs.map((r: any) => [r.site, r.payload]));
    const low = by[SITES.low.siteReference];
    assert.equal(low.followed, 'partly');
    assert.ok(low.measured.value > 3.5 && low.measured.value < 4.1, `measured ${low.measured.value} kW`);
    assert.equal(low.device, SITES.low.battery.deviceReference);
    const full = by[SITES.full.siteReference];
    assert.equal(full.followed, 'no');
    assert.deepEqual(
      [full.measured, full.deviation],
      [
        { value: 0, unit: 'kW' },
        { value: 5, unit: 'kW', percent: 100 },
      ],
    );
    assert.match(loaded.status.all.at(-1).text, / · last: (partly \(3\.\d+ kW\)|no \(0 kW\))$/);
  });

  it('unknown: a failed end reading (HTTP 500) is reported with the reason, never yes', async () => {
    const loaded = await load();
    const reply = await steer(loaded, { payload: -5 });
    simulator.sim.setFaults({ rate500: 1 });
    await advance(reply.request.body.validUntil - clock.now);
    const rep = (await loaded.reports.next()).payload;
    assert.equal(rep.followed, 'unknown');
    assert.match(rep.reason, /^end reading failed: .*HTTP 500/);
    assert.deepEqual([rep.measured, rep.deviation], [null, null]);
    assert.match(loaded.status.all.at(-1).text, / · last: unknown$/);
  });

  it('verifyEvery: a report every N minutes while the signal lasts, back to back, the last at its validUntil', async () => {
    const loaded = await load({ verifyEvery: 5 });
    const t0 = clock.now;
    const reply = await steer(loaded, { payload: -5 });
    const until = reply.request.body.validUntil;
    for (let i = 1; i <= 2; i++) {
      await advance(5 * MINUTE_MS);
      await loaded.reports.count(i);
    }
    await advance(until - clock.now);
    await loaded.reports.count(3);
    const windows = loaded.reports.msgs.map((r: any) => [
      r.payload.from - t0,
      r.payload.until - t0,
      r.payload.followed,
    ]);
    assert.deepEqual(windows, [
      [0, 5 * MINUTE_MS, 'yes'],
      [5 * MINUTE_MS, 10 * MINUTE_MS, 'yes'],
      [10 * MINUTE_MS, until - t0, 'yes'],
    ]);
    assert.equal(logged(simulator, 'GET /devices/:ref/measurements').length, 4, 'one reading per boundary');
  });

  it('a later request for the same component ends the window before it (its report covers up to then); combined checks each component with its device', async () => {
    const loaded = await load({ mode: 'combined', curtailmentValue: '0', curtailmentValueType: 'num' });
    const t0 = clock.now;
    await steer(loaded, { payload: -5 }, 2);
    await advance(5 * MINUTE_MS);
    const second = await steer(loaded, { payload: 2 }, 2);
    await loaded.reports.count(2);
    const first = loaded.reports.msgs.map((r: any) => r.payload);
    assert.deepEqual(first.map((r: any) => [r.component, r.from - t0, r.until - t0, r.followed]).sort(), [
      ['curtailment', 0, 5 * MINUTE_MS, 'yes'],
      ['energyStorage', 0, 5 * MINUTE_MS, 'yes'],
    ]);
    assert.equal(first.find((r: any) => r.component === 'curtailment').device, OK.pv.deviceReference);
    await advance(second.request.body.validUntil - clock.now);
    await loaded.reports.count(4);
    const ess = loaded.reports.msgs
      .slice(2)
      .map((r: any) => r.payload)
      .find((r: any) => r.component === 'energyStorage');
    assert.deepEqual([ess.asked, ess.from - t0, ess.followed], [{ value: 2, unit: 'kW' }, 5 * MINUTE_MS, 'yes']);
  });

  it('a request replaced as it began (a burst of messages) gives no report; the last one is checked', async () => {
    const loaded = await load();
    loaded.send({ payload: -3 });
    loaded.send({ payload: -5 });
    const [, last] = await loaded.out.count(2);
    await answered(1);
    await quiet();
    assert.equal(clock.countTimers(), 1, 'one window open');
    await advance(last.request.body.validUntil - clock.now);
    const rep = (await loaded.reports.next()).payload;
    assert.deepEqual([rep.asked, rep.followed], [{ value: -5, unit: 'kW' }, 'yes']);
    await clock.tickAsync(MINUTE_MS);
    assert.equal(loaded.reports.msgs.length, 1);
  });

  it('grid limits are checked on the grid meter as a limit', async () => {
    const loaded = await load({ mode: 'grid-limits', upperLimitValue: '-2', upperLimitValueType: 'num' });
    const reply = await steer(loaded, { payload: {} });
    await advance(reply.request.body.validUntil - clock.now);
    const rep = (await loaded.reports.next()).payload;
    assert.deepEqual([rep.component, rep.device, rep.followed], ['gridLimits', OK.meter.deviceReference, 'yes']);
    assert.deepEqual(rep.asked, { value: -2, unit: 'kW', lower: null, upper: -2 });
  });

  it('a redeploy cancels the open windows: no report, no timer, no read after it', async () => {
    const loaded = await load();
    await steer(loaded, { payload: -5 });
    assert.equal(clock.countTimers(), 1, 'one timer per open window: one window open');
    const reads = logged(simulator, 'GET /devices/:ref/measurements').length;
    await helper.unload();
    assert.equal(clock.countTimers(), 0);
    await advance(20 * MINUTE_MS);
    assert.equal(loaded.reports.msgs.length, 0);
    assert.equal(logged(simulator, 'GET /devices/:ref/measurements').length, reads);
    await loadFlow(flow(siteSteer(OK.siteReference), cfg(simulator.url))); // the helper unloads what loadFlow loaded
  });

  it('a missing device is reported as unknown, naming the property', async () => {
    const loaded = await load({ batteryDevice: '' });
    const reply = await steer(loaded, { payload: -5 }, 0);
    await advance(reply.request.body.validUntil - clock.now);
    const rep = (await loaded.reports.next()).payload;
    assert.deepEqual([rep.followed, rep.reason], ['unknown', 'no battery device given (batteryDevice)']);
  });

  it('a flow saved without verify (version 3) behaves as before: one output, no readings, no verdict in the status', async () => {
    const loaded = await loadFlow(flow(siteSteer(OK.siteReference, { version: 3 }), cfg(simulator.url)));
    const reply = await loaded.ask({ payload: -5 });
    assert.equal(clock.countTimers(), 0, 'no window opened');
    await advance(reply.request.body.validUntil - clock.now);
    assert.equal(logged(simulator, 'GET /devices/:ref/measurements').length, 0);
    assert.equal(loaded.status.all.at(-1).text, `sent ESS −5 kW until ${formatClock(reply.request.body.validUntil)}`);
    assert.equal(clock.countTimers(), 0);
  });

  it('settings: refused with verify on (naming the property), not used with it off', async () => {
    const loaded = await load({ tolerance: 150 });
    const failure = await loaded.fails({ payload: -5 });
    assert.match(failure.error.message, /tolerance must be a number of % from 0 to 100 \(default 10\); got 150/);
    assert.deepEqual(verifySettingsOf({ verify: false, tolerance: 150, verifyEvery: -1 }), {
      on: false,
      everyMs: 0,
      tolerance: { percent: 10, minW: 1000 },
    });
    assert.deepEqual(verifySettingsOf({ verify: true, verifyEvery: 5, tolerance: '5', toleranceMin: 500 }), {
      on: true,
      everyMs: 5 * MINUTE_MS,
      tolerance: { percent: 5, minW: 500 },
    });
    assert.throws(
      () => verifySettingsOf({ verify: true, verifyEvery: 2.5 }),
      /verifyEvery must be a whole number of minutes from 0 to 1440 \(0 = only when a signal ends\)/,
    );
  });
});
