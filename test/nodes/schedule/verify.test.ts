/**
 * The schedule node's delivery check: with `verify` on, one report per slot on
 * output 2, against the simulator, in a real Node-RED runtime. Date is @sinonjs/fake-timers
 * (the simulator's clock follows it); the node's one timer runs on the delivery check's clock
 * (setDeliveryClock), the same fake clock, so `clock.countTimers()` counts the node's timers
 * and nothing else (reads and requests keep their real timers: each step waits, bounded, for
 * what it causes). yes, partly and no appear per slot on a battery that empties in a merged
 * run and is then charged; unknown on a failed read; one timer while playing, a 96-slot day
 * included; stop lets the windows run out, a redeploy cancels them, a dry run checks nothing.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { MINUTE_MS, QUARTER_HOUR_MS, formatClock } from '../../../src/protocol/time';
import { setDeliveryClock } from '../../../src/runtime/delivery-check';
import { startSimulator, type StartedSimulator } from '../../../src/simulator';
import { DELIVERY_SITES as SITES } from '../../helpers/delivery-sites';
import { Inbox, cfg, flow, helper, loadFlow, logged, turns, useRuntime, type Loaded } from '../../helpers/red';
import { scheduleNode } from '../../helpers/schedule';
import { slotAt, T0 } from './flow';

const READS = 'GET /devices/:ref/measurements';

describe('ems-schedule: delivery reports per slot (verify)', () => {
  useRuntime();
  let clock: ReturnType<typeof FakeTimers.install>;
  let sim: StartedSimulator;
  beforeEach(async () => {
    clock = FakeTimers.install({ now: T0 - 2 * MINUTE_MS, toFake: ['Date'] });
    setDeliveryClock({
      now: () => clock.now,
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
      clearTimeout: (t) => clock.clearTimeout(t as FakeTimers.TimerId),
    });
    sim = await startSimulator({ port: 0, sites: Object.values(SITES) }); // its clock follows the fake Date
  });
  afterEach(async () => {
    setDeliveryClock();
    clock.uninstall();
    await sim.close();
  });

  type Flow = Loaded & { reports: Inbox };
  /** A verifying schedule node on `site` (devices: the site's), output 2 wired to `reports`. */
  async function load(site = SITES.low, extra: Record<string, unknown> = {}): Promise<Flow> {
    const node = scheduleNode({
      site: site.siteReference,
      verify: true,
      batteryDevice: site.battery.deviceReference,
      pvDevice: site.pv.deviceReference,
      meterDevice: site.meter.deviceReference,
      ...extra,
    });
    const loaded = await loadFlow(flow(node, cfg(sim.url), { id: 'reports', type: 'helper', wires: [] }));
    return { ...loaded, reports: new Inbox(helper.getNode('reports')) };
  }
  async function accept(f: Loaded, msg: Record<string, unknown>): Promise<void> {
    const shown = f.status.wait((s) => /^(waiting:|slots? )/.test(s.text ?? ''), 10_000, 'the schedule accepted');
    f.send(msg);
    await shown;
  }
  /**
   * Fires the node's one timer (asserting it is the only one) and waits for what it causes:
   * `sent` requests in all on output 1, `reports` reports in all on output 2, and the first
   * readings of the windows it opened.
   */
  async function step(f: Flow, sent: number, reports: number): Promise<void> {
    assert.equal(clock.countTimers(), 1, `one timer (at ${formatClock(clock.now)})`);
    await clock.nextAsync();
    await f.out.count(sent);
    await f.reports.count(reports, 10_000, 'reports');
    await f.node.delivery?.settled();
    await turns();
  }
  const reports = (f: Flow) =>
    f.reports.msgs.map((m: any) => ({
      slots: m.slots,
      followed: m.payload.followed,
      from: m.payload.from - T0,
      until: m.payload.until - T0,
    }));

  it('a merged run reports each slot: partly as the battery empties, no once empty, yes when charged; the status adds the last verdict', async () => {
    const loaded = await load();
    await accept(loaded, {
      payload: [slotAt(0, { energyStorage: 5 }), slotAt(1, { energyStorage: 5 }), slotAt(2, { energyStorage: -5 })],
    });
    await step(loaded, 1, 0); // T0: slots 0-1 as one request
    assert.deepEqual(loaded.out.msgs[0].slots, [0, 1]);
    await step(loaded, 1, 1); // slot 0 ends
    await step(loaded, 2, 2); // slot 1 ends; slot 2 sent
    await step(loaded, 2, 3); // slot 2 ends: done
    const quarter = QUARTER_HOUR_MS;
    assert.deepEqual(reports(loaded), [
      { slots: [0], followed: 'partly', from: 0, until: quarter },
      { slots: [1], followed: 'no', from: quarter, until: 2 * quarter },
      { slots: [2], followed: 'yes', from: 2 * quarter, until: 3 * quarter },
    ]);
    const [r0, r1, r2] = loaded.reports.msgs;
    assert.deepEqual(
      [
        r0.topic,
        r0.site,
        Object.keys(r0)
          .filter((k) => k !== '_msgid')
          .sort(),
      ],
      ['delivery', SITES.low.siteReference, ['payload', 'site', 'slots', 'topic']],
    );
    assert.equal(r0.payload.component, 'energyStorage');
    assert.equal(r0.payload.device, SITES.low.battery.deviceReference);
    assert.deepEqual(r0.payload.asked, { value: 5, unit: 'kW' });
    assert.ok(
      r0.payload.measured.value > 3.5 && r0.payload.measured.value < 4.1,
      `slot 0 measured ${r0.payload.measured.value} kW (the battery empties mid-slot)`,
    );
    assert.deepEqual(
      [r1.payload.measured, r1.payload.deviation],
      [
        { value: 0, unit: 'kW' },
        { value: -5, unit: 'kW', percent: -100 },
      ],
    );
    assert.deepEqual(r2.payload.measured, { value: -5, unit: 'kW' });
    const partly = loaded.status.all.find((s: any) => / · last: partly/.test(s.text));
    assert.match(
      partly.text,
      new RegExp(`^slots 1–2/3 · ESS 5 kW until ${formatClock(T0 + 2 * quarter)} · last: partly \\(3\\.\\d+ kW\\)$`),
    );
    assert.ok(
      loaded.status.all.some((s: any) => / · last: no \(0 kW\)$/.test(s.text)),
      "the status showed slot 1's verdict",
    );
    assert.equal(loaded.status.all.at(-1).text, 'done · last: yes (−5 kW)');
    // One reading per slot boundary within a run; the new run's window starts with a reading of its own
    // (shared with the old one's last when the request's answer came within the coalescing window).
    const reads = logged(sim, READS).length;
    assert.ok(reads >= 4 && reads <= 5, `${reads} readings`);
    assert.equal(clock.countTimers(), 0, 'done: no timer');
    assert.equal(loaded.node.delivery.size, 0);
    assert.equal(loaded.caught.msgs.length, 0);
  });

  it('unknown: a failed end reading (HTTP 500) is reported with the reason and the slot, never yes', async () => {
    const loaded = await load(SITES.ok);
    await accept(loaded, { payload: [slotAt(0, { energyStorage: -5 })] });
    await step(loaded, 1, 0);
    sim.sim.setFaults({ rate500: 1 });
    await step(loaded, 1, 1);
    const [rep] = loaded.reports.msgs;
    assert.deepEqual(rep.slots, [0]);
    assert.equal(rep.payload.followed, 'unknown');
    assert.match(rep.payload.reason, /^end reading failed: .*HTTP 500/);
    assert.deepEqual([rep.payload.measured, rep.payload.deviation], [null, null]);
    assert.equal(loaded.status.all.at(-1).text, 'done · last: unknown');
    assert.equal(loaded.caught.msgs.length, 0, 'a failed read is a report, not an error');
  });

  it('a 96-slot day with verify on: one timer per node all along, one report per slot, one reading per boundary', async () => {
    const values = Array.from({ length: 96 }, (_, i) => [2, -2, 0, 0][Math.floor(i / 4) % 4]);
    const runs = values.filter((v, i) => i === 0 || values[i - 1] !== v).length;
    const loaded = await load(SITES.ok);
    await accept(loaded, { payload: values.map((v, i) => slotAt(i, { energyStorage: v })) });
    let sent = 1;
    await step(loaded, sent, 0);
    for (let k = 0; k < 96; k++) {
      if (k < 95 && values[k + 1] !== values[k]) sent++;
      await step(loaded, sent, k + 1);
    }
    assert.equal(loaded.out.msgs.length, runs, 'one request per change of setting');
    assert.deepEqual(
      loaded.reports.msgs.map((m: any) => m.slots),
      values.map((_, i) => [i]),
      'one report per slot, in order',
    );
    const bad = loaded.reports.msgs
      .filter((m: any) => m.payload.followed !== 'yes')
      .map((m: any) => [m.slots, m.payload.followed, m.payload.reason]);
    assert.deepEqual(bad, [], 'room to follow: every slot yes');
    const reads = logged(sim, READS).length;
    assert.ok(
      reads >= 97 && reads <= 96 + runs,
      `${reads} readings: one per slot end, and one at each request's start`,
    );
    assert.equal(clock.countTimers(), 0);
  });

  it('stop: the windows of the request in force run to its end, with reports; then no timer', async () => {
    const loaded = await load(SITES.ok);
    await accept(loaded, {
      payload: [slotAt(0, { energyStorage: -2 }), slotAt(1, { energyStorage: -2 }), slotAt(2, { energyStorage: 3 })],
    });
    await step(loaded, 1, 0);
    await clock.tickAsync(5 * MINUTE_MS);
    const stopped = loaded.status.wait((s) => /^stopped/.test(s.text));
    loaded.send({ payload: 'stop' });
    await stopped;
    await step(loaded, 1, 1);
    await step(loaded, 1, 2);
    assert.deepEqual(
      reports(loaded).map((r) => [r.slots, r.followed]),
      [
        [[0], 'yes'],
        [[1], 'yes'],
      ],
    );
    assert.equal(clock.countTimers(), 0);
    assert.equal(loaded.out.msgs.length, 1, 'nothing sent after the stop');
  });

  it('a new schedule mid-slot: the same slot asked the same keeps its window; another value ends it there (a report each)', async () => {
    const loaded = await load(SITES.ok);
    await accept(loaded, { payload: [0, 1, 2, 3].map((i) => slotAt(i, { energyStorage: -2 })) });
    await step(loaded, 1, 0);
    await clock.tickAsync(5 * MINUTE_MS);
    loaded.send({
      payload: [slotAt(-1, { energyStorage: 1 }), slotAt(0, { energyStorage: -2 }), slotAt(1, { energyStorage: 3 })],
    }); // slot 0 (index 1 here) sent again, cut at its end
    await loaded.out.count(2);
    await loaded.node.delivery.settled();
    await clock.tickAsync(MINUTE_MS);
    loaded.send({ payload: [slotAt(1, { energyStorage: 2 })] }); // replaces from slot 1: slot 1 at 2 kW
    await step(loaded, 3, 1); // slot 0 ends (one window from T0); slot 1 sent
    await clock.tickAsync(5 * MINUTE_MS);
    loaded.send({ payload: [slotAt(1, { energyStorage: -3 })] }); // slot 1 in progress, another value: its window ends now
    await loaded.out.count(4);
    await loaded.reports.count(2);
    await loaded.node.delivery.settled();
    await step(loaded, 4, 3);
    // slots: indices in the payload of the schedule whose request was in force (the window kept: the second's index 1;
    // the last two: slot 0 of one-slot schedules).
    assert.deepEqual(reports(loaded), [
      { slots: [1], followed: 'yes', from: 0, until: QUARTER_HOUR_MS },
      { slots: [0], followed: 'yes', from: QUARTER_HOUR_MS, until: QUARTER_HOUR_MS + 5 * MINUTE_MS },
      { slots: [0], followed: 'yes', from: QUARTER_HOUR_MS + 5 * MINUTE_MS, until: 2 * QUARTER_HOUR_MS },
    ]);
    assert.deepEqual(
      loaded.reports.msgs.map((m: any) => m.payload.asked.value),
      [-2, 2, -3],
    );
    assert.equal(clock.countTimers(), 0);
  });

  it('a redeploy cancels the open windows: no report, no timer, no reading after it; a dry run checks nothing', async () => {
    const loaded = await load(SITES.ok);
    await accept(loaded, { payload: [slotAt(0, { energyStorage: -2 }), slotAt(1, { energyStorage: 3 })] });
    await step(loaded, 1, 0);
    assert.equal(loaded.node.delivery.size, 1);
    const reads = logged(sim, READS).length;
    await helper.unload();
    assert.equal(clock.countTimers(), 0);
    await clock.tickAsync(20 * MINUTE_MS);
    await turns();
    assert.equal(loaded.reports.msgs.length, 0);
    assert.equal(logged(sim, READS).length, reads);
    const dryRunFlow = await load(SITES.ok, { dryRun: true });
    const plan = await dryRunFlow.ask({ payload: [slotAt(1, { energyStorage: -2 })] });
    assert.equal(plan.payload.length, 1);
    await clock.tickAsync(20 * MINUTE_MS);
    assert.equal(clock.countTimers(), 0);
    assert.equal(dryRunFlow.reports.msgs.length, 0);
    assert.equal(logged(sim, READS).length, reads);
  });

  it('a missing device is an unknown report naming the property; a flow without verify reads nothing', async () => {
    const loaded = await load(SITES.ok, { batteryDevice: '' });
    await accept(loaded, { payload: [slotAt(0, { energyStorage: -2 })] });
    await step(loaded, 1, 0);
    await step(loaded, 1, 1);
    assert.deepEqual(
      [loaded.reports.msgs[0].slots, loaded.reports.msgs[0].payload.followed, loaded.reports.msgs[0].payload.reason],
      [[0], 'unknown', 'no battery device given (batteryDevice)'],
    );
    const unverified = await load(SITES.ok, { verify: false });
    await accept(unverified, { payload: [slotAt(2, { energyStorage: -2 })] });
    assert.equal(unverified.node.delivery, undefined);
    await step(unverified, 1, 0);
    await step(unverified, 1, 0);
    assert.equal(logged(sim, READS).length, 0);
    assert.equal(unverified.status.all.at(-1).text, 'done');
  });
});
