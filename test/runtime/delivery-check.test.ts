/**
 * The delivery check: the pure formulas and verdicts (src/protocol/delivery.ts),
 * and the runtime's check (src/runtime/delivery-check.ts) against the simulator with a frozen
 * clock, driven by a @sinonjs/fake-timers clock advanced in step with the simulator's.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import FakeTimers from '@sinonjs/fake-timers';
import { EmsClient } from '../../src/client';
import type { Asked, DeliveryReport } from '../../src/protocol/delivery';
import { MINUTE_MS } from '../../src/protocol/time';
import { ReadCoalescer } from '../../src/runtime/coalescer';
import { DeliveryCheck, check, type CheckClock } from '../../src/runtime/delivery-check';
import { startSimulator, type SiteDefinition, type StartedSimulator } from '../../src/simulator';
import { DELIVERY_SITES } from '../helpers/delivery-sites';

const kW = (value: number) => ({ value, unit: 'kW' as const });
const setpoint = (value: number, deadbandW?: number): Asked => ({
  kind: 'setpoint',
  value: kW(value),
  ...(deadbandW ? { deadbandW } : {}),
});

describe('delivery check against the simulator (frozen clock, fake timers)', () => {
  const SITES = DELIVERY_SITES;
  let simulator: StartedSimulator;
  let client: EmsClient;
  let reads: ReadCoalescer;
  let clock: FakeTimers.Clock;
  let cc: CheckClock;

  beforeEach(async () => {
    const t0 = Date.now();
    simulator = await startSimulator({ port: 0, frozen: true, startTime: t0, sites: Object.values(SITES) });
    client = new EmsClient({ baseUrl: simulator.url, retries: 0 });
    reads = new ReadCoalescer(client, 2);
    clock = FakeTimers.createClock(t0);
    cc = {
      now: () => clock.now,
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
      clearTimeout: (t) => clock.clearTimeout(t as FakeTimers.TimerId),
    };
  });
  afterEach(async () => {
    reads.close();
    client.close();
    await simulator.close();
  });

  /** Moves both clocks by `ms` and runs the timers due (the readings they start are awaited by the caller). */
  async function advance(ms: number): Promise<void> {
    simulator.sim.clock.advance(ms);
    await clock.tickAsync(ms);
  }

  /** A check on the test clock, once its first reading was taken. */
  async function started(
    req: ConstructorParameters<typeof DeliveryCheck>[0],
    opts: ConstructorParameters<typeof DeliveryCheck>[2] = {},
  ): Promise<DeliveryCheck> {
    const deliveryCheck = new DeliveryCheck(req, { reads }, { clock: cc, ...opts });
    await deliveryCheck.started;
    return deliveryCheck;
  }

  /** Steers ESS on a test site (through the simulator's API) and checks it over `minutes`. */
  async function essCheck(site: SiteDefinition, kw: number, minutes = 15, opts: { everyMs?: number } = {}) {
    const until = clock.now + minutes * MINUTE_MS;
    await client.steerEss(site.siteReference, { setting: kW(kw), validUntil: until });
    const reports: DeliveryReport[] = [];
    const deliveryCheck = new DeliveryCheck(
      {
        site: site.siteReference,
        component: 'energyStorage',
        asked: setpoint(kw),
        from: clock.now,
        until,
        devices: { battery: site.battery.deviceReference },
      },
      { reads },
      { clock: cc, onReport: (r) => reports.push(r), ...opts },
    );
    await deliveryCheck.started;
    return { c: deliveryCheck, reports, until };
  }

  it("yes: ESS charge −5 kW within the battery's means; the report covers the window by the readings' timestamps", async () => {
    const t0 = clock.now;
    const { c, reports } = await essCheck(SITES.ok, -5);
    await advance(15 * MINUTE_MS);
    const report = await c.done;
    assert.deepEqual(reports, [report]);
    assert.equal(report.followed, 'yes');
    assert.equal(report.source, 'energy counters');
    assert.deepEqual(report.asked, { value: -5, unit: 'kW' });
    assert.ok(Math.abs((report.measured!.value as number) + 5) < 0.01, `measured ${report.measured!.value}`);
    assert.deepEqual([report.from, report.until], [t0, t0 + 15 * MINUTE_MS]);
    assert.equal(report.device, SITES.ok.battery.deviceReference);
    // At validUntil the signal has ended: the battery is back to self-consumption (1 kW load, no PV).
    assert.deepEqual(report.crossCheck, { start: -5, end: 1, unit: 'kW', agrees: true });
  });

  it('partly: a 10 kW discharge as the battery reaches its minimum SOC mid-window', async () => {
    const { c } = await essCheck(SITES.low, 10);
    await advance(15 * MINUTE_MS);
    const report = await c.done;
    assert.equal(report.followed, 'partly');
    // 1 kWh above the minimum, √0.9 of it delivered: about 3.8 kW over 15 minutes.
    assert.ok(report.measured!.value > 3.5 && report.measured!.value < 4.1, `measured ${report.measured!.value}`);
    assert.equal(report.crossCheck!.end, 0, 'empty at the end');
  });

  it('no: charging a full battery', async () => {
    const { c } = await essCheck(SITES.full, -5);
    await advance(15 * MINUTE_MS);
    const report = await c.done;
    assert.equal(report.followed, 'no');
    assert.equal(report.measured!.value, 0);
    assert.deepEqual(report.deviation, { value: 5, unit: 'kW', percent: 100 });
  });

  it('grid limits and grid target on the meter; curtailment on the PV; maximize grid import is reported as not measurable', async () => {
    const site = SITES.ok;
    const until = clock.now + 15 * MINUTE_MS;
    const devices = {
      battery: site.battery.deviceReference,
      pv: site.pv.deviceReference,
      meter: site.meter.deviceReference,
    };
    await client.steerGridLimits(site.siteReference, { upperLimit: kW(-2), validUntil: until });
    const limits = await started({
      site: site.siteReference,
      component: 'gridLimits',
      asked: { kind: 'range', upper: kW(-2) },
      from: clock.now,
      until,
      devices,
    });
    const curt = await started({
      site: site.siteReference,
      component: 'curtailment',
      asked: { kind: 'max', value: kW(0) },
      from: clock.now,
      until,
      devices,
    });
    const mgi = await started({
      site: site.siteReference,
      component: 'maximizeGridImport',
      asked: { kind: 'flag', value: true },
      from: clock.now,
      until,
      devices,
    });
    await advance(15 * MINUTE_MS);
    const [l, c, m] = await Promise.all([limits.done, curt.done, mgi.done]);
    assert.equal(l.followed, 'yes');
    assert.ok(
      Math.abs(l.measured!.value + 2) < 0.01,
      `grid ${l.measured!.value} kW: exports 2 kW (1 kW load, battery 3 kW)`,
    );
    assert.deepEqual(l.deviation, { value: 0, unit: 'kW', percent: 0 });
    assert.equal(c.followed, 'yes', 'no PV: 0 ≤ 0');
    assert.equal(m.followed, 'unknown');
    assert.match(m.reason!, /not measurable/);
    assert.ok(m.measured, 'the grid power is given all the same');

    const startedAt = clock.now;
    await client.steerGridTarget(site.siteReference, { setpoint: kW(3), validUntil: startedAt + 15 * MINUTE_MS });
    const gridCheck = await started({
      site: site.siteReference,
      component: 'gridTarget',
      asked: setpoint(3),
      from: startedAt,
      until: startedAt + 15 * MINUTE_MS,
      devices,
    });
    await advance(15 * MINUTE_MS);
    const gr = await gridCheck.done;
    assert.equal(gr.followed, 'yes');
    assert.ok(Math.abs(gr.measured!.value - 3) < 0.01, `grid ${gr.measured!.value} kW`);
  });

  it('unknown: a failed end reading (the service answers 500) says so, never yes', async () => {
    const { c } = await essCheck(SITES.ok, -5);
    simulator.sim.setFaults({ rate500: 1 });
    await advance(15 * MINUTE_MS);
    const report = await c.done;
    assert.equal(report.followed, 'unknown');
    assert.match(report.reason!, /^end reading failed: .*500/);
    assert.equal(report.measured, null);
  });

  it('unknown: a stopped service, a missing device, an unknown device, a window under a minute', async () => {
    const { c } = await essCheck(SITES.ok, -5);
    await simulator.close();
    await advance(15 * MINUTE_MS);
    const report = await c.done;
    assert.equal(report.followed, 'unknown');
    assert.match(report.reason!, /^end reading failed: /);
    simulator = await startSimulator({ port: 0, frozen: true, startTime: clock.now, sites: Object.values(SITES) });
    client.close();
    reads.close();
    client = new EmsClient({ baseUrl: simulator.url, retries: 0 });
    reads = new ReadCoalescer(client, 2);
    const base = {
      site: SITES.ok.siteReference,
      component: 'energyStorage' as const,
      asked: setpoint(1),
      from: clock.now,
      until: clock.now + 5 * MINUTE_MS,
    };
    const none = check({ ...base, devices: {} }, { reads }, { clock: cc });
    const unknown = await started({ ...base, devices: { battery: 'dvc_doesnotexist' } });
    const short = await started({ ...base, devices: { battery: SITES.ok.battery.deviceReference } });
    await advance(30_000);
    short.end();
    assert.match((await short.done).reason!, /window too short to measure: 30 s/);
    await advance(5 * MINUTE_MS);
    assert.equal((await none).reason, 'no battery device given (batteryDevice)');
    assert.match((await unknown.done).reason!, /^start reading failed: .*404/);
  });

  it('everyMs: a report per part while the window lasts, parts back to back, the last at its end', async () => {
    const t0 = clock.now;
    const { c, reports } = await essCheck(SITES.ok, -5, 15, { everyMs: 5 * MINUTE_MS });
    for (let i = 1; i <= 3; i++) {
      await advance(5 * MINUTE_MS);
      while (reports.length < i) await clock.tickAsync(0);
    }
    await c.done;
    assert.deepEqual(
      reports.map((r) => [r.from - t0, r.until - t0]),
      [
        [0, 5 * MINUTE_MS],
        [5 * MINUTE_MS, 10 * MINUTE_MS],
        [10 * MINUTE_MS, 15 * MINUTE_MS],
      ],
    );
    assert.deepEqual(
      reports.map((r) => r.followed),
      ['yes', 'yes', 'yes'],
    );
    assert.equal(clock.countTimers(), 0, 'no timer left');
  });

  it('end() cuts the window at once with a report up to now; cancel() (or the signal) ends it without one, and no timer stays', async () => {
    const t0 = clock.now;
    const { c, reports } = await essCheck(SITES.ok, -5);
    await advance(5 * MINUTE_MS);
    c.end();
    const report = await c.done;
    assert.deepEqual([report.from - t0, report.until - t0, report.followed], [0, 5 * MINUTE_MS, 'yes']);
    assert.equal(reports.length, 1);
    const ac = new AbortController();
    const seen: DeliveryReport[] = [];
    const secondCheck = new DeliveryCheck(
      {
        site: SITES.ok.siteReference,
        component: 'energyStorage',
        asked: setpoint(-5),
        from: clock.now,
        until: clock.now + 15 * MINUTE_MS,
        devices: { battery: SITES.ok.battery.deviceReference },
      },
      { reads },
      { clock: cc, signal: ac.signal, onReport: (x) => seen.push(x) },
    );
    ac.abort();
    const kr = await secondCheck.done;
    assert.equal(kr.followed, 'unknown');
    assert.match(kr.reason!, /cancelled/);
    await advance(20 * MINUTE_MS);
    assert.deepEqual(seen, [], 'no report after a cancel');
    assert.equal(clock.countTimers(), 0);
  });

  it("a finished check stops listening on the signal it was given (a node's signal outlives many checks)", async () => {
    const ac = new AbortController();
    for (let i = 0; i < 12; i++) {
      const deliveryCheck = new DeliveryCheck(
        {
          site: SITES.ok.siteReference,
          component: 'energyStorage',
          asked: setpoint(0),
          from: clock.now,
          until: clock.now + MINUTE_MS,
          devices: { battery: SITES.ok.battery.deviceReference },
        },
        { reads },
        { clock: cc, signal: ac.signal },
      );
      await deliveryCheck.started;
      deliveryCheck.end();
      await deliveryCheck.done;
    }
    await Promise.resolve();
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
  });

  it('a window that starts later is read when it starts', async () => {
    const from = clock.now + 10 * MINUTE_MS;
    const deliveryCheck = new DeliveryCheck(
      {
        site: SITES.ok.siteReference,
        component: 'energyStorage',
        asked: setpoint(0),
        from,
        until: from + 15 * MINUTE_MS,
        devices: { battery: SITES.ok.battery.deviceReference },
      },
      { reads },
      { clock: cc },
    );
    await advance(10 * MINUTE_MS);
    await deliveryCheck.started;
    await advance(15 * MINUTE_MS);
    const report = await deliveryCheck.done;
    assert.deepEqual([report.from, report.until], [from, from + 15 * MINUTE_MS]);
    assert.notEqual(report.followed, 'unknown');
  });
});
