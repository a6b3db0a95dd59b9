/**
 * Example 12, loaded into the Node-RED runtime (node-red-node-test-helper) with
 * its dashboard, on a simulator on 127.0.0.1:0 whose clock follows @sinonjs/fake-timers (Date,
 * setTimeout, clearTimeout): the inject nodes, the plan node's quarter-hour timer, the schedule and
 * the simulator all move with it, so a quarter hour passes in no time; nothing sleeps.
 *
 * It steers a simulated site of its own, Home (example 12), which the test's simulator runs with the
 * others of the built-in simulator (BUILT_IN_SITES). The test runs the loop: 28 days of history -> load history and PV forecast -> plan of the site ->
 * schedule -> delivery report -> link -> re-plan (only what changed) -> schedule; plan and read SOC
 * and grid power on the dashboard.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { MINUTE_MS } from '../../../src/protocol/time';
import { BUILT_IN_SITES, startSimulator, type StartedSimulator } from '../../../src/simulator';
import { nodeRedVersion, coreNode } from '../../helpers/node-red-path';
import { CORE_NODES, builtInSite, forTest, loadFlow, readExample } from '../../helpers/examples';
import { dashboardData, dashboardModules } from '../../helpers/examples-dashboard';
import { Inbox, NODES, helper, turns, until, useRuntime } from '../../helpers/red';

const FILE = '12 Re-planning - prices and forecasts to a schedule.json';
const EX = readExample(FILE);
const HOME = builtInSite('Home (example 12)');
const steerRoute = /^POST \/sites\/:ref\/steering/;
/** Local 10:03 two days ahead of real time: prices for today and tomorrow, every validUntil in the future. */
const NOW = (() => {
  const date = new Date();
  date.setDate(date.getDate() + 2);
  date.setHours(10, 3, 0, 0);
  return date.getTime();
})();
const one = (test: (n: any) => boolean, what: string) => {
  const found = EX.filter(test);
  assert.equal(found.length, 1, `one ${what} in example 12`);
  return found[0];
};
const plan = one((n) => n.type === 'ems-plan', 'price plan node');
const schedule = one((n) => n.type === 'ems-schedule', 'schedule node');
const linkIn = one((n) => n.type === 'link in', 'link in');
const socChart = one((n) => n.type === 'ui-chart' && /SOC/.test(n.label), 'SOC chart');
const gridChart = one((n) => n.type === 'ui-chart' && /Grid/.test(n.label), 'grid chart');

describe(`examples: 12 re-planning on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(60_000);
  useRuntime();
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  let sim: StartedSimulator | undefined;
  afterEach(async () => {
    clock?.uninstall();
    clock = undefined;
    await sim?.close();
    sim = undefined;
  });
  /** What the function *plan vs read* received: every SOC and grid power read (each 5 minutes) and every plan handed on. */
  let seen: Inbox;
  const reads = () => seen.msgs.filter((m) => /\/(soc|power)$/.test(m.topic)).length;
  /**
   * Moves the clock to `t`, a 5-minute mark at a time: the two reads that each mark starts (real I/O) are
   * awaited before the clock moves on, so no request outlives its (fake) timeout.
   */
  async function moveTo(t: number): Promise<void> {
    for (;;) {
      const mark = (Math.floor(Date.now() / (5 * MINUTE_MS)) + 1) * 5 * MINUTE_MS;
      if (mark > t) break;
      const before = reads();
      await clock!.tickAsync(mark - Date.now());
      await until(
        [seen],
        () => reads() >= before + 2,
        10_000,
        () => `the reads at ${new Date(mark).toISOString()}`,
      );
    }
    await clock!.tickAsync(t - Date.now());
    await turns();
  }
  /** The example as shipped, on a simulator that follows the fake clock. */
  async function start(): Promise<StartedSimulator> {
    clock = FakeTimers.install({ now: NOW, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    sim = await startSimulator({ port: 0, sites: [...BUILT_IN_SITES] });
    const flow = forTest(EX, sim.url).map((n: any) => (n.type === 'ems-partner-config' ? { ...n, coalesceMs: 0 } : n)); // (its window is a timer the fake clock would hold)
    await loadFlow([...NODES, ...CORE_NODES, coreNode('common/60-link.js'), ...dashboardModules(EX)], flow);
    seen = new Inbox(helper.getNode(one((n) => n.type === 'function' && n.name === 'plan vs read', 'plan vs read').id));
    return sim;
  }

  it("ships the loop: re-planning on, the site's prices, limits and battery; its schedule node enabled on its own site, checked, its reports linked back to the plan", () => {
    assert.equal(schedule.d, undefined, 'the schedule node ships enabled');
    assert.deepEqual(
      [schedule.site, schedule.verify, schedule.batteryDevice, schedule.maxEssPower],
      [HOME.siteReference, true, HOME.battery.deviceReference, HOME.battery.maxPowerW],
    );
    assert.deepEqual(schedule.wires[1], [one((n) => n.type === 'link out', 'link out').id]);
    assert.deepEqual(linkIn.wires, [[plan.id]]);
    assert.deepEqual(
      [
        plan.replan,
        plan.idle,
        plan.version,
        plan.capacityKWh,
        plan.maxChargeKW,
        plan.importLimitKW,
        plan.exportLimitKW,
      ],
      [
        true,
        'self-consumption',
        4,
        HOME.battery.capacityWh / 1000,
        HOME.battery.maxPowerW / 1000,
        HOME.grid!.maxImportW / 1000,
        HOME.grid!.maxExportW / 1000,
      ],
    );
    const comment = one((n) => n.type === 'comment', 'comment');
    assert.match(comment.info, /^\*\*Target:\*\* its own simulated site, \*Home \(example 12\)\* \(`ste_jqElHIhVdmoo`/);
    for (const n of EX.filter((x: any) => ['ems-time-series', 'ems-device-read'].includes(x.type))) {
      assert.ok(
        [HOME.battery.deviceReference, HOME.pv.deviceReference, HOME.meter.deviceReference].includes(n.device),
        `${n.name} reads its own site`,
      );
    }
  });

  it('plans the site from 28 days of its own history and a PV forecast, plays it, re-plans on a delivery report and hands on only what changed', async () => {
    const started = await start();
    const handed = new Inbox(helper.getNode(schedule.id));
    const socPoints = new Inbox(helper.getNode(socChart.id));
    const gridPoints = new Inbox(helper.getNode(gridChart.id));
    const errors = new Inbox(helper.getNode(one((n) => n.type === 'debug' && n.name === 'errors', 'errors debug').id));
    const inputs = new Inbox(helper.getNode(plan.id));
    await moveTo(NOW + 3000); // the SOC read (1 s after deploy), then prices and forecasts (2 s)
    await handed.count(1);
    await turns();
    // Slots whose battery just follows PV and load are left to the site (idle: self-consumption): the payload has
    // the others; when slot 0 is left to the site a stop goes first, and a plan with nothing to steer is a stop.
    const first = handed.msgs.find((m: any) => m.plan);
    const firstPlan = first.plan;
    const steered = firstPlan.slots.filter((x: any) => !x.selfConsumption);
    assert.ok(
      firstPlan.slots.some((x: any) => x.selfConsumption),
      'some slots are self-consumption',
    );
    assert.equal(first.replan.selfConsumption, firstPlan.slots.length - steered.length);
    if (handed.msgs[0] !== first) assert.equal(handed.msgs[0].payload, 'stop');
    assert.equal(firstPlan.model, 'site');
    assert.deepEqual([first.replan.trigger, first.replan.socFrom], ['input', 'reading']);
    assert.equal(first.replan.soc, started.sim.measure(HOME.battery.deviceReference, 'soc').value, 'from the SOC read');
    // Today from now and all of tomorrow, every steered slot handed on, the first from now.
    assert.ok(firstPlan.slots[0].start >= NOW && firstPlan.slots[0].start < NOW + 5000);
    if (steered.length === 0) assert.equal(first.payload, 'stop');
    else
      assert.deepEqual(
        first.payload.map((x: any) => [x.start, x.end, x.energyStorage]),
        steered.map((x: any) => [x.start, x.end, x.energyStorage]),
      );
    const midnight = new Date(NOW);
    midnight.setHours(0, 0, 0, 0);
    midnight.setDate(midnight.getDate() + 2);
    assert.equal(firstPlan.slots.at(-1).end, midnight.getTime());
    // The load forecast from the history (500-3000 W at Home), the PV forecast from yesterday's PV (10 kWp).
    // The load history: grid + PV + battery of each of the last 28 days' hours, the site's own load.
    const history = inputs.msgs.find((m: any) => m.payload?.loadHistory)?.payload.loadHistory;
    assert.ok(
      history.length >= 28 * 24 && history.every((x: any) => x.y >= 500 - 1 && x.y <= 3000 + 1),
      "the Home site's load, 500-3000 W",
    );
    assert.ok(
      firstPlan.slots.every((x: any) => x.loadKW >= 0.5 - 1e-6 && x.loadKW <= 3 + 1e-6),
      "load within the Home site's range",
    );
    assert.ok(
      firstPlan.slots.some((x: any) => x.pvKW > 0.1) && firstPlan.slots.some((x: any) => x.pvKW === 0),
      `PV by day, none at night: ${JSON.stringify(firstPlan.slots.map((x: any) => x.pvKW))}`,
    );
    assert.ok(
      firstPlan.slots.every((x: any) => x.importKW <= 17 + 1e-9 && x.exportKW <= 7 + 1e-9),
      'the grid limits',
    );
    // The schedule plays the slot in progress at once, on the Home site, when it is steered; else nothing.
    await moveTo(Date.now() + 100);
    const sent = started.sim.requestLog.filter((e) => steerRoute.test(e.route));
    assert.equal(sent.length, firstPlan.slots[0].selfConsumption ? 0 : 1, JSON.stringify(sent.map((e) => e.body)));
    if (!firstPlan.slots[0].selfConsumption) {
      assert.equal(sent[0].path, `/sites/${HOME.siteReference}/steering/ess`);
      assert.deepEqual((sent[0].body as any).setting, first.payload[0].energyStorage);
    }

    // The dashboard: planned and read SOC and grid power.
    await socPoints.count(1);
    await gridPoints.count(1);
    const series = (id: string) => new Set((dashboardData(id) as any[]).map((d) => d._datapoint.category));
    assert.deepEqual([...series(socChart.id)].sort(), ['planned', 'read']);
    assert.ok(series(gridChart.id).has('planned'));

    // The battery did not deliver slot 0 (a report that says no, as the schedule's check sends it): the plan goes
    // on from the SOC it expected moved by what was missing, and hands on the changed part only, none of it past.
    const slot0 = firstPlan.slots[0];
    await moveTo(NOW + 6 * MINUTE_MS);
    const report = {
      followed: 'no',
      site: HOME.siteReference,
      component: 'energyStorage',
      asked: slot0.energyStorage,
      measured: { value: slot0.energyStorage.value > 0 ? 0 : 3, unit: 'kW' },
      from: slot0.start,
      until: Date.now(),
    };
    const before = handed.msgs.length;
    helper.getNode(linkIn.id).receive({ topic: 'delivery', site: HOME.siteReference, slots: [0], payload: report });
    for (let i = 0; i < 5; i++) await turns();
    const planNodeStatus = () => JSON.stringify((helper.getNode(plan.id) as any).status?.lastCall?.args ?? '');
    const again = handed.msgs.slice(before).find((m: any) => m.plan);
    if (again) {
      // (something changed: what is left to the site is not handed on; the payload is the steered slots, or a stop)
      assert.equal(again.replan.trigger, 'delivery');
      assert.equal(again.replan.socFrom, 'plan+delivery');
      const now = Date.now();
      if (Array.isArray(again.payload)) {
        assert.ok(
          again.payload.every((x: any) => x.end > now && x.start >= now),
          'no slot in the past',
        );
        assert.ok(again.payload.length <= again.plan.slots.filter((x: any) => !x.selfConsumption).length);
      } else assert.equal(again.payload, 'stop');
    } else assert.ok(handed.msgs.length === before, planNodeStatus());
    // The quarter hour: the plan node's timer plans again, the schedule sends the next slot and reports slot 0 back
    // through the links; nothing failed.
    const reported = new Inbox(helper.getNode(linkIn.id));
    await moveTo(slot0.end);
    if (!slot0.selfConsumption) {
      await reported.count(1); // (a slot left to the site is not played: no report)
      assert.equal(reported.msgs[0].topic, 'delivery');
      assert.match(reported.msgs[0].payload.followed, /^(yes|partly|no|unknown)$/);
    }
    await moveTo(slot0.end + 1000);
    assert.ok(
      started.sim.requestLog.filter((e) => steerRoute.test(e.route)).every((e) => (e.body as any).validUntil > e.time),
      'every request ends after it is sent',
    );
    assert.deepEqual(
      errors.msgs.map((m) => m.error?.message),
      [],
    );
  });
});
