/**
 * The site model as the node takes it: `ems-plan` with the site planner's inputs in a real Node-RED
 * runtime (node-red-node-test-helper). Per-slot import and export prices, PV and load forecasts
 * (as one value per slot, or as points from any source, or a load history), grid limits, price
 * feeds (Tibber, power-saver, {start, value}), the price formulas, efficiencies, wear, a SOC
 * target by a time of day, an end value and the site's limits, from the message or the node's
 * settings (version 2); the payload stays what ems-schedule takes; every refusal names the msg
 * field and the slot, or the node's setting. The clock is @sinonjs/fake-timers (Date only).
 */
import assert from 'node:assert/strict';
import { DAY_MS, HOUR_MS, QUARTER_HOUR_MS } from '../../../src/protocol/time';
import { DEFAULT_SITES, startSimulator } from '../../../src/simulator';
import { nextAt } from '../../../src/nodes/plan/message';
import { cfg, flow, loadFlow, useRuntime } from '../../helpers/red';
import { useFakeClock } from '../../helpers/clock';
import { scheduleNode } from '../../helpers/schedule';
import { hours, planFlow, T0 } from './flow';
import { planNode } from './site-flow';

const SCHEDULE_KEYS = ['end', 'energyKWh', 'energyStorage', 'price', 'socEnd', 'socStart', 'start'];

describe('nodes: ems-plan with the site model', () => {
  useRuntime();
  useFakeClock(
    () => ({ now: T0 - HOUR_MS, toFake: ['Date'] }),
    () => undefined, // Date alone is faked, at a fixed time: no test moves the clock
  );
  const load = (extra: Record<string, unknown> = {}) => loadFlow(planFlow(planNode(extra)));

  it('PV and load forecasts, import and export prices: a site plan; the payload is what ems-schedule takes, the whole plan in msg.plan, grid power in msg.chart', async () => {
    const deployed = await load();
    const prices = [0.3, 0.1, 0.4, 0.25].map((p, k) => ({
      start: T0 + k * HOUR_MS,
      end: T0 + (k + 1) * HOUR_MS,
      importPrice: p,
      exportPrice: 0.08,
    }));
    const reply = await deployed.ask({
      payload: { prices, pvForecast: [0, 4000, 6000, 0], loadForecast: [1000, 1000, 1000, 3000] },
      soc: 50,
      topic: 'plan',
    });
    assert.equal(reply.plan.model, 'site');
    assert.equal(reply.topic, 'plan');
    assert.equal(reply.payload.length, 4);
    for (const s of reply.payload) assert.deepEqual(Object.keys(s).sort(), SCHEDULE_KEYS);
    reply.plan.slots.forEach((s: any, k: number) => {
      assert.deepEqual(reply.payload[k].energyStorage, s.energyStorage);
      assert.ok(
        Math.abs(s.gridKW - (s.loadKW - s.pvKW + s.curtailKW + s.chargeKW - s.dischargeKW)) < 1e-9,
        'energy balance',
      );
    });
    assert.deepEqual(
      reply.plan.slots.map((s: any) => [s.pvKW, s.loadKW]),
      [
        [0, 1],
        [4, 1],
        [6, 1],
        [0, 3],
      ],
    );
    assert.deepEqual(Object.keys(reply.chart).sort(), ['grid', 'power', 'price', 'soc']);
    assert.deepEqual(reply.chart.grid.slice(0, 2), [
      { x: T0, y: Math.round(reply.plan.slots[0].gridKW * 1000) / 1000 },
      { x: T0 + HOUR_MS, y: Math.round(reply.plan.slots[0].gridKW * 1000) / 1000 },
    ]);
    // Stores PV (worth 0.08 exported) for the 0.40 and 0.25 hours rather than exporting it.
    assert.ok(reply.plan.slots[1].chargeKW + reply.plan.slots[2].chargeKW > 0);
    assert.ok(reply.plan.slots[3].dischargeKW > 0);
    assert.match(deployed.status.all.at(-1).text, /^plan: 4 slots · cost -?[\d.]+ · charge [\d.]+ kWh · \d\d:\d\d$/);
  });

  it("the site plan's payload plays on ems-schedule (dry run on the simulator)", async () => {
    const sim = await startSimulator({ port: 0 });
    try {
      const deployed = await loadFlow([
        ...flow(planNode({ wires: [['sched']] }), cfg(sim.url)),
        {
          id: 'sched',
          z: 'tab',
          x: 300,
          y: 100,
          ...scheduleNode({ server: 'cfg', site: DEFAULT_SITES[1].siteReference, dryRun: true, wires: [['out'], []] }),
        },
      ]);
      deployed.send({ payload: { prices: hours([0.3, 0.1, 0.4]), loadForecast: [800, 800, 2500] }, soc: 50 });
      const [dry] = await deployed.out.count(1);
      assert.equal(deployed.caught.msgs.length, 0, JSON.stringify(deployed.caught.msgs[0]?.error));
      assert.deepEqual(
        dry.payload.flatMap((r: any) => r.slots),
        [0, 1, 2],
      );
    } finally {
      await sim.close();
    }
  });

  it("the node's price formulas, limits, efficiencies, wear, end value and SOC target by a time of day", async () => {
    const deployed = await load({
      priceUnit: 'MWh',
      importFee: '0.15',
      importVat: '1.19',
      exportMultiplier: '0',
      exportFee: '0.08',
      exportLimitKW: '2',
      importLimitKW: '9',
      chargeEfficiency: '0.96',
      dischargeEfficiency: '0.94',
      cycleCost: '0.01',
      endValue: '0.05',
      socTarget: '70',
      socTargetTime: '02:00',
    });
    const reply = await deployed.ask({
      payload: [
        { start: T0, value: 100 },
        { start: T0 + HOUR_MS, value: -20 },
        { start: T0 + 2 * HOUR_MS, value: 250 },
        { start: T0 + 3 * HOUR_MS, value: 90 },
      ],
      soc: 40,
      pvForecast: [0, 8000, 0, 0],
    });
    const plan = reply.plan;
    assert.equal(plan.model, 'site');
    assert.deepEqual(
      plan.slots.map((s: any) => Math.round(s.importPrice * 1e6) / 1e6),
      [0.2975, 0.1547, 0.476, 0.2856],
      '(spot/1000 + 0.15) × 1.19',
    );
    assert.ok(
      plan.slots.every((s: any) => s.exportPrice === 0.08),
      'a fixed feed-in of 0.08',
    );
    assert.ok(
      plan.slots.every((s: any) => s.exportKW <= 2 + 1e-9 && s.importKW <= 9 + 1e-9),
      "the node's grid limits",
    );
    assert.ok(plan.slots[1].curtailKW > 0, 'curtails what neither the battery nor the export limit takes');
    assert.ok(plan.cost.wear > 0, 'cycleCost');
    // The target: 70 % by the next 02:00 local time.
    assert.deepEqual(
      plan.targets.map((t: any) => [t.soc, t.time]),
      [[70, nextAt(120, Date.now())]],
    );
    const at = plan.targets[0].at;
    const boundary = plan.soc.find((x: any) => x.time === at);
    assert.ok(boundary.soc >= 70 - 1e-6, `SOC ${boundary.soc} at the target's boundary`);
    // Charging at 5 kW for an hour stores 5 × 0.96 kWh = 48 % of 10 kWh.
    const full = plan.slots.find((s: any) => s.chargeKW === 5 && s.dischargeKW === 0);
    if (full) assert.ok(Math.abs(full.socEnd - full.socStart - 48) < 1e-6);
  });

  it("the message first: msg.importFormula.X over the node's, msg.payload.site over the node's limits, msg.battery.socTarget over the node's", async () => {
    const deployed = await load({ importFee: '0.1', exportLimitKW: '1', socTarget: '80', socTargetTime: '23:00' });
    const target = { soc: 30, time: T0 + 2 * HOUR_MS };
    const reply = await deployed.ask({
      payload: { prices: hours([0.2, 0.2, 0.2]), pvForecast: [6000, 6000, 6000], site: { exportLimitW: 3000 } },
      importFormula: { fee: 0.02 },
      battery: { socTarget: target },
      soc: 20,
    });
    assert.deepEqual(
      reply.plan.slots.map((s: any) => Math.round(s.importPrice * 1e9) / 1e9),
      [0.22, 0.22, 0.22],
    );
    assert.ok(
      reply.plan.slots.some((s: any) => s.exportKW > 1 + 1e-9),
      "msg.payload.site.exportLimitW (3 kW), not the node's 1 kW",
    );
    assert.deepEqual(
      reply.plan.targets.map((t: any) => [t.soc, t.time]),
      [[30, target.time]],
    );
  });

  it('price feeds as msg.payload: Tibber {today, tomorrow} (per kWh, its currency), power-saver {priceData}, {start, value} per MWh', async () => {
    const deployed = await load();
    const iso = (t: number) => new Date(t).toISOString();
    const tibber = {
      today: [0.3, 0.1].map((total, k) => ({ startsAt: iso(T0 + k * HOUR_MS), total, currency: 'NOK' })),
      tomorrow: [{ startsAt: iso(T0 + 2 * HOUR_MS), total: 0.5, currency: 'NOK' }],
    };
    const fromTibber = await deployed.ask({ payload: tibber, soc: 50 });
    assert.deepEqual(
      fromTibber.payload.map((s: any) => [s.start, s.end, s.price]),
      [
        [T0, T0 + HOUR_MS, 0.3],
        [T0 + HOUR_MS, T0 + 2 * HOUR_MS, 0.1],
        [T0 + 2 * HOUR_MS, T0 + 3 * HOUR_MS, 0.5],
      ],
    );
    const fromPriceData = await deployed.ask({
      payload: {
        priceData: [
          { start: iso(T0), value: 0.2 },
          { start: iso(T0 + HOUR_MS), value: 0.4 },
        ],
      },
      soc: 50,
    });
    assert.equal(fromPriceData.payload.length, 2);
    const perMWh = await deployed.ask({
      payload: [
        { start: T0, value: 100 },
        { start: T0 + HOUR_MS, value: 300 },
      ],
      soc: 50,
      priceUnit: 'EUR/MWh',
    });
    assert.deepEqual(
      perMWh.payload.map((s: any) => s.price),
      [100, 300],
    );
  });

  it('forecasts as points from any source (W) are resampled onto the price slots; a load history becomes the load forecast (same weekday and time, last 4 weeks)', async () => {
    const deployed = await load();
    const quarter = (k: number) => ({
      start: T0 + k * QUARTER_HOUR_MS,
      end: T0 + (k + 1) * QUARTER_HOUR_MS,
      price: [0.3, 0.3, 0.1, 0.1, 0.5, 0.5, 0.2, 0.2][k],
    });
    const prices = Array.from({ length: 8 }, (_, k) => quarter(k));
    const pvForecast = [
      { start: T0, value: 1000 },
      { start: T0 + HOUR_MS, value: 3000 },
    ]; // hourly, from a forecast service
    const loadHistory = Array.from({ length: 4 * 7 * 24 }, (_, k) => ({
      x: T0 - 28 * DAY_MS + k * HOUR_MS,
      y: 400 + (k % 24) * 10,
    }));
    const reply = await deployed.ask({ payload: { prices, pvForecast, loadHistory }, soc: 50 });
    assert.deepEqual(
      reply.plan.slots.map((s: any) => s.pvKW),
      [1, 1, 1, 1, 3, 3, 3, 3],
    );
    const hourOf = new Date(T0).getUTCHours();
    assert.deepEqual(
      reply.plan.slots.map((s: any) => Math.round(s.loadKW * 1000)),
      [0, 0, 0, 0, 1, 1, 1, 1].map((h) => 400 + ((hourOf + h) % 24) * 10),
    );
  });

  it('a PV forecast as Solcast delivers it ({forecasts: [{period_end, period, pv_estimate}]}, kW) in msg.pvForecast', async () => {
    const deployed = await load();
    const prices = Array.from({ length: 4 }, (_, k) => ({
      start: T0 + k * QUARTER_HOUR_MS,
      end: T0 + (k + 1) * QUARTER_HOUR_MS,
      price: 0.3,
    }));
    const half = (k: number) => new Date(T0 + (k + 1) * 30 * 60_000).toISOString();
    const pvForecast = {
      forecasts: [
        { period_end: half(0), period: 'PT30M', pv_estimate: 1.5 },
        { period_end: half(1), period: 'PT30M', pv_estimate: 2 },
      ],
    };
    const reply = await deployed.ask({ payload: { prices, pvForecast }, soc: 50 });
    assert.deepEqual(
      reply.plan.slots.map((s: any) => s.pvKW),
      [1.5, 1.5, 2, 2],
    );
  });
});
