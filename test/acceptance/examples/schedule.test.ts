/**
 * Examples 06 and 09, loaded as shipped into the Node-RED runtime (node-red-node-test-helper),
 * steering the simulator on 127.0.0.1:0. Time is @sinonjs/fake-timers (Date, setTimeout,
 * clearTimeout): the schedule node's timer, the inject nodes', Node-RED's and the simulator's
 * clock all follow it, so a night or a day passes in no time; nothing sleeps. Each step moves
 * the clock to a slot's start and waits (bounded) for what the flow sends.
 *
 * 06: a night window as a schedule of one slot, played by ems-schedule in 15-minute requests
 * (its config node's Max. validity). 09: a day of sample prices planned by ems-plan, charted on
 * the dashboard (Dashboard 2, loaded for real), played with the delivery check on, its reports
 * in a dashboard table. Each steers a site of its own (06: Home (example 06), 09: Home (example 09)).
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { MINUTE_MS, QUARTER_HOUR_MS, formatClock } from '../../../src/protocol/time';
import { BUILT_IN_SITES, startSimulator, type StartedSimulator } from '../../../src/simulator';
import { nodeRedVersion } from '../../helpers/node-red-path';
import { builtInSite, loadExample, readExample } from '../../helpers/examples';
import { dashboardData, loadDashboardExample } from '../../helpers/examples-dashboard';
import { Inbox, turns, useRuntime } from '../../helpers/red';

const steerRoute = /^POST \/sites\/:ref\/steering/;
const PLAN_FILE = '09 Price plan - charge cheap, sell dear.json';
const SAMPLE = require('../../fixtures/prices-sample-day.json');
/** Reads sent at once: the coalescer's 2 ms window is a timer, which the fake clock would hold. */
const NO_WINDOW = { coalesceMs: 0 };
/** Local midnight two days ahead of real time: every request's validUntil is in the future for real clocks too. */
const DAY = (() => {
  const date = new Date();
  date.setHours(0, 0, 0, 0);
  date.setDate(date.getDate() + 2);
  return date.getTime();
})();
/** Epoch ms of HH:MM local time on DAY (+ days). */
const at = (h: number, m = 0, days = 0) => {
  const date = new Date(DAY);
  date.setDate(date.getDate() + days);
  date.setHours(h, m, 0, 0);
  return date.getTime();
};

/** Example 06's function node, run outside Node-RED with its clock at `now`. */
function windowFunction() {
  const fn = readExample('06 Night charging schedule.json').find((n) => n.type === 'function');
  const body = new Function('msg', 'node', 'Date', fn.func);
  return (now: number, payload: unknown) => {
    const RealDate = Date;
    class At extends RealDate {
      static now() {
        return now;
      }
    }
    const node = {
      status() {},
      error(e: unknown) {
        throw new Error(String(e));
      },
    };
    return body({ payload }, node, At);
  };
}

describe(`examples: schedules (06, 09) on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(60_000);
  useRuntime();
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  let sim: StartedSimulator | undefined;
  /** Installs the fake clock at `now` and starts a simulator that follows it. */
  async function startAt(now: number): Promise<StartedSimulator> {
    clock = FakeTimers.install({ now, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    sim = await startSimulator({ port: 0, sites: [...BUILT_IN_SITES] });
    return sim;
  }
  afterEach(async () => {
    // (useRuntime's afterEach unloaded the flow first, on the fake clock)
    clock?.uninstall();
    clock = undefined;
    await sim?.close();
    sim = undefined;
  });
  const requests = () => sim!.sim.requestLog.filter((e) => steerRoute.test(e.route));
  /** Moves the clock to `t` (firing every timer due on the way). */
  async function moveTo(t: number): Promise<void> {
    await clock!.tickAsync(t - Date.now());
    await turns();
  }

  describe('06 night charging schedule', () => {
    const NIGHT = '06 Night charging schedule.json';
    const HOME = builtInSite('Home (example 06)');
    const SCHEDULE = 'Home battery schedule (max 10 kW)';

    it('ships a window for the schedule node: 01:00-05:00 at 5 kW, on deploy and daily, on its own site, limit 10 kW, 15-minute requests', () => {
      const nodes = readExample(NIGHT);
      const inject = nodes.find((n) => n.type === 'inject');
      assert.deepEqual(JSON.parse(inject.payload), { start: '01:00', end: '05:00', powerKw: 5 });
      assert.deepEqual([inject.once, inject.crontab, inject.repeat], [true, '00 12 * * *', '']);
      const schedule = nodes.find((n) => n.type === 'ems-schedule');
      assert.deepEqual(
        [schedule.name, schedule.site, schedule.essUnit, schedule.maxEssPower, schedule.dryRun],
        [SCHEDULE, HOME.siteReference, 'kW', 10_000, false],
      );
      assert.equal(nodes.find((n) => n.type === 'ems-partner-config').maxValidity, 15);
      assert.equal(
        nodes.filter((n) => n.type === 'ems-site-steer').length,
        0,
        'no hand-written renewal: the schedule node plays it',
      );
    });

    it('deployed in the evening: waits for 01:00, then charges at 5 kW in 15-minute requests, each sent at its start, none after 05:00', async () => {
      const simulator = await startAt(at(22, 30, -1));
      const ex = await loadExample(NIGHT, simulator.url);
      const sent = ex.inbox('sent');
      const status = ex.status(SCHEDULE);
      const fn = ex.status("tonight's window");
      const waiting = status.wait((x) => /^waiting:/.test(x.text));
      await moveTo(at(22, 30, -1) + 1000); // the inject fires once, 1 s after the deploy
      assert.equal((await waiting).text, `waiting: slot 1/1 at ${formatClock(at(1))}`);
      assert.equal(fn.all.at(-1).text, `${new Date(at(1)).toLocaleDateString()} 01:00-05:00, charge 5 kW`);
      assert.equal(requests().length, 0, 'nothing before 01:00');

      await moveTo(at(0, 59));
      assert.equal(requests().length, 0, 'nothing before 01:00, not even a minute early');
      for (let k = 0; k < 16; k++) {
        await moveTo(at(1) + k * QUARTER_HOUR_MS);
        const msg = (await sent.count(k + 1))[k];
        const request = requests()[k];
        assert.equal(request.time, at(1) + k * QUARTER_HOUR_MS, `request ${k} at its start`);
        assert.equal(request.path, `/sites/${HOME.siteReference}/steering/ess`);
        assert.deepEqual(request.body, {
          setting: { value: -5, unit: 'kW' },
          validUntil: at(1) + (k + 1) * QUARTER_HOUR_MS,
        });
        assert.deepEqual(msg.request.body, request.body);
        assert.deepEqual(msg.slots, [0]);
      }
      assert.equal(status.all.filter((x) => /^slot 1\/1 · ESS −5 kW until /.test(x.text)).length, 16);
      const setting = simulator.sim.steeringState(HOME.siteReference).components.energyStorageSetting!;
      assert.deepEqual([setting.value, setting.unit, setting.validUntil], [-5, 'kW', at(5)]);

      await moveTo(at(5));
      assert.equal(status.all.at(-1).text, 'done');
      await moveTo(at(6));
      assert.equal(requests().length, 16, 'nothing after 05:00');
      assert.equal(sent.msgs.length, 16);
    });

    it('deployed inside the window (02:07): the 15 minutes in progress go out at once, the rest at each quarter hour', async () => {
      const simulator = await startAt(at(2, 7));
      const ex = await loadExample(NIGHT, simulator.url);
      const sent = ex.inbox('sent');
      const fn = ex.status("tonight's window");
      await moveTo(at(2, 7) + 1000);
      const [first] = await sent.count(1);
      assert.equal(requests()[0].time, at(2, 7) + 1000, 'at once');
      assert.deepEqual(first.request.body, { setting: { value: -5, unit: 'kW' }, validUntil: at(2, 15) });
      await moveTo(at(2, 15));
      const [, second] = await sent.count(2);
      assert.equal(requests()[1].time, at(2, 15));
      assert.equal(second.request.body.validUntil, at(2, 30));
      assert.equal(fn.all.at(-1).text, 'now 01:00-05:00, charge 5 kW');
    });

    it('the window in progress or the next one, also across midnight, at every minute of a day (the function node, run with its clock set)', () => {
      const run = windowFunction();
      const window = { start: '22:00', end: '02:00', powerKw: 3 };
      for (let t = at(0); t < at(0, 0, 1); t += MINUTE_MS) {
        const [slot] = run(t, window).payload;
        // The window that ends first after t: 02:00 today, or 02:00 tomorrow once today's has ended.
        const [start, end] = t < at(2) ? [at(22, 0, -1), at(2)] : [at(22), at(2, 0, 1)];
        assert.deepEqual(slot, { start, end, energyStorage: -3 }, new Date(t).toString());
      }
      const [slot] = run(at(5, 0), { start: '01:00', end: '05:00', powerKw: 5 }).payload;
      assert.deepEqual(
        slot,
        { start: at(1, 0, 1), end: at(5, 0, 1), energyStorage: -5 },
        'at 05:00 the window has ended: the next night',
      );
    });

    it('a bad window is an error naming the fields; more than the 10 kW limit is refused by the schedule node naming the slot; nothing is sent', async () => {
      const simulator = await startAt(at(23, 10, -1));
      const ex = await loadExample(NIGHT, simulator.url);
      const errors = ex.inbox('errors');
      ex.fire("tonight's window", { payload: { start: '1am', end: '05:00', powerKw: 5 } });
      const [bad] = await errors.count(1);
      assert.match(
        bad.error.message,
        /msg\.payload must be \{start: "HH:MM", end: "HH:MM" \(another time\), powerKw: > 0\}; got \{"start":"1am"/,
      );
      ex.fire("tonight's window", { payload: { start: '01:00', end: '05:00', powerKw: 12 } });
      const [, over] = await errors.count(2);
      assert.match(
        over.error.message,
        /^ValidationError: msg\.payload\[0\]\.energyStorage must be within the node's limit maxEssPower = 10000 W \(either sign\); got -12 kW; nothing was sent$/,
      );
      assert.equal(over.error.source.name, SCHEDULE);
      await turns(20);
      assert.equal(requests().length, 0);
      assert.equal(simulator.sim.steeringState(HOME.siteReference).components.energyStorageSetting, null);
    });
  });
  describe('09 price plan', () => {
    const EX = readExample(PLAN_FILE);
    const HOME = builtInSite('Home (example 09)');
    const one = (test: (n: any) => boolean, what: string) => {
      const found = EX.filter(test);
      assert.equal(found.length, 1, `one ${what} in example 09`);
      return found[0];
    };
    const planNode = one((n) => n.type === 'ems-plan', 'price plan node');
    const schedule = one((n) => n.type === 'ems-schedule', 'schedule node');
    const priceChart = one((n) => n.type === 'ui-chart' && /price/.test(n.label), 'price chart');
    const planChart = one((n) => n.type === 'ui-chart' && /SOC/.test(n.label), 'plan chart');
    const table = one((n) => n.type === 'ui-table', 'table');
    const summary = one((n) => n.type === 'ui-text', 'plan text');

    it("ships the sample day in the flow (96 quarter hours, EUR/MWh) and plans its site's battery as GET /sites describes it", async () => {
      const inject = one((n) => n.type === 'inject', 'inject');
      const sample = JSON.parse(inject.props.find((p: any) => p.p === 'sample').v);
      assert.deepEqual(
        sample,
        { unit: SAMPLE.unit, resolutionMinutes: SAMPLE.resolutionMinutes, slots: SAMPLE.slots },
        'the sample of test/fixtures',
      );
      assert.equal(sample.slots.length, 96);
      const simulator = await startAt(at(12, 40));
      const { sites } = (await (await fetch(`${simulator.url}/sites`)).json()) as any;
      const home = sites.find((x: any) => x.siteReference === HOME.siteReference);
      assert.deepEqual(
        [planNode.maxChargeKW, planNode.maxDischargeKW, planNode.capacityKWh],
        [home.batteryMaxPower / 1000, home.batteryMaxPower / 1000, home.batteryCapacity / 1000],
      );
      assert.deepEqual(
        [schedule.site, schedule.maxEssPower, schedule.verify, schedule.batteryDevice],
        [HOME.siteReference, home.batteryMaxPower, true, HOME.battery.deviceReference],
      );
      assert.equal(one((n) => n.type === 'ems-device-read', 'SOC read').device, HOME.battery.deviceReference);
    });

    it("on deploy: plans from the battery's SOC (charges at the negative midday prices, discharges in the peaks), charts it, and plays the slot in progress at once", async () => {
      const now = at(12, 40);
      const simulator = await startAt(now);
      const ex = await loadDashboardExample(PLAN_FILE, simulator.url, NO_WINDOW);
      const planned = new Inbox(ex.byId(schedule.id));
      const sent = ex.inbox('sent');
      const texts = new Inbox(ex.byId(summary.id));
      const prices = new Inbox(ex.byId(priceChart.id));
      const curves = new Inbox(ex.byId(planChart.id));
      await moveTo(now + 2000); // the inject fires once, 2 s after the deploy
      const [m] = await planned.count(1);
      const plan = m.plan;
      const soc = simulator.sim.measure(HOME.battery.deviceReference, 'soc').value;
      assert.equal(plan.slots[0].socStart, soc, 'planned from the SOC read');

      // Today from now (the slot in progress starts now) and all of tomorrow, quarter hours.
      assert.equal(m.payload, plan.slots);
      assert.equal(plan.slots[0].start, now + 2000);
      assert.equal(plan.slots.at(-1).end, at(0, 0, 2));
      const price = (t: number) =>
        SAMPLE.slots[Math.floor((t - (t >= at(0, 0, 1) ? at(0, 0, 1) : at(0))) / QUARTER_HOUR_MS)].price;
      for (const x of plan.slots) assert.equal(x.price, price(x.start));
      const charging = plan.slots.filter((x: any) => x.energyStorage.value < 0);
      const discharging = plan.slots.filter((x: any) => x.energyStorage.value > 0);
      const kWh = (xs: any[]) => xs.reduce((a, x) => a + Math.abs(x.energyKWh), 0);
      const within = (xs: any[], from: number, to: number) => xs.filter((x) => x.start >= from && x.end <= to);
      // Paid to charge: tomorrow's negative midday prices fill the battery (16 kWh of SOC 10 -> 90 %, more on the AC side).
      const paid = (xs: any[]) =>
        within(
          xs.filter((x) => x.price < 0),
          at(0, 0, 1),
          at(0, 0, 2),
        );
      assert.ok(
        kWh(paid(charging)) - kWh(paid(discharging)) > 15,
        `charged at negative prices tomorrow: ${kWh(paid(charging))} kWh (discharged ${kWh(paid(discharging))})`,
      );
      // Buy low, sell high: at positive prices every charge is cheaper than every discharge. (At negative
      // prices the plan may also discharge to charge again at a lower price: the round trip's losses are paid.)
      const positive = (xs: any[]) => xs.filter((x) => x.price >= 0).map((x) => x.price);
      assert.ok(
        Math.max(...positive(charging)) < Math.min(...positive(discharging)),
        `${Math.max(...positive(charging))} < ${Math.min(...positive(discharging))}`,
      );
      // Discharges in the evening peak (today and tomorrow) and tomorrow's morning peak.
      for (const [from, to, what] of [
        [at(18), at(22), 'this evening'],
        [at(6, 0, 1), at(10, 0, 1), 'tomorrow morning'],
        [at(18, 0, 1), at(22, 0, 1), 'tomorrow evening'],
      ] as const) {
        assert.ok(
          kWh(within(discharging, from, to)) > 10,
          `discharges ${what}: ${kWh(within(discharging, from, to))} kWh`,
        );
        assert.equal(kWh(within(charging, from, to)), 0, `no charging ${what}`);
      }
      assert.ok(plan.value > 0);

      // The charts get their series (what the dashboard sends a browser), the text the plan's value.
      await prices.count(1);
      await curves.count(1);
      const points = (id: string) => (dashboardData(id) as any[]).map((d) => d._datapoint);
      const series = (id: string, name: string) => points(id).filter((d) => d.category === name);
      assert.equal(series(priceChart.id, 'price (EUR/MWh)').length, 2 * plan.slots.length, 'a step per slot');
      assert.deepEqual(series(priceChart.id, 'price (EUR/MWh)').slice(0, 2), [
        { category: 'price (EUR/MWh)', x: plan.slots[0].start, y: plan.slots[0].price },
        { category: 'price (EUR/MWh)', x: plan.slots[0].end, y: plan.slots[0].price },
      ]);
      assert.deepEqual(
        series(planChart.id, 'SOC (%)').map((d) => [d.x, d.y]),
        plan.soc.map((p: any) => [p.time, Math.round(p.soc * 100) / 100]),
      );
      assert.equal(series(planChart.id, 'battery (kW, + discharges)').length, 2 * plan.slots.length);
      const [text] = await texts.count(1);
      const day = (t: number) => `${new Date(t).toLocaleDateString('en', { weekday: 'short' })} ${formatClock(t)}`;
      assert.match(
        text.payload,
        new RegExp(
          `^${plan.slots.length} slots, ${day(plan.slots[0].start)} to ${day(plan.slots.at(-1).end)}: charge ${plan.chargedKWh.toFixed(1)} kWh, discharge ${plan.dischargedKWh.toFixed(1)} kWh, expected value ${plan.value.toFixed(2)} EUR$`,
        ),
      );
      assert.equal(dashboardData(summary.id).payload, text.payload);

      // The schedule node plays the slot in progress at once: the first run, valid until its end.
      const [first] = await sent.count(1);
      const setting = plan.slots[0].energyStorage;
      let last = 0;
      while (last + 1 < plan.slots.length && plan.slots[last + 1].energyStorage.value === setting.value) last++;
      assert.deepEqual(first.request.body, {
        setting: { value: setting.value, unit: 'kW' },
        validUntil: plan.slots[last].end,
      });
      assert.equal(requests()[0].time, now + 2000);
      assert.equal(requests().length, 1);
    });

    it('once a slot ends, its delivery report reaches the dashboard table: slot, time, asked, measured, followed', async () => {
      const now = at(12, 40);
      const simulator = await startAt(now);
      const ex = await loadDashboardExample(PLAN_FILE, simulator.url, NO_WINDOW);
      const planned = new Inbox(ex.byId(schedule.id));
      const rows = new Inbox(ex.byId(table.id));
      const sent = ex.inbox('sent');
      await moveTo(now + 2000);
      const [m] = await planned.count(1);
      await sent.count(1);
      const slot0 = m.plan.slots[0];
      assert.equal(rows.msgs.length, 0, 'no report before the slot ends');
      await moveTo(slot0.end);
      const [r] = await rows.count(1);
      const row = r.payload[0];
      assert.equal(row.slot, '1');
      assert.equal(row.time, `${formatClock(now + 2000)}–${formatClock(slot0.end)}`);
      assert.equal(row.asked, `${Math.round(slot0.energyStorage.value * 100) / 100} kW`);
      assert.match(row.followed, /^(yes|partly|no)$/, `a verdict from two readings: ${JSON.stringify(row)}`);
      assert.match(row.measured, /^-?\d+(\.\d+)? kW$/);
      assert.deepEqual(dashboardData(table.id).payload, r.payload, 'what the dashboard shows');
      // The next slot's report comes first (newest first).
      await moveTo(m.plan.slots[1].end);
      const [, r2] = await rows.count(2);
      assert.deepEqual(
        Array.from(r2.payload, (x: any) => x.slot),
        ['2', '1'],
      ); // (an array of the function node's realm)
    });
  });
});
