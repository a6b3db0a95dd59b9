/**
 * The price plan as a node: `ems-plan` ("price plan") in a real Node-RED runtime
 * (node-red-node-test-helper). The sample day of 96 quarter-hour prices becomes a plan whose
 * slots `ems-schedule` takes (a dry run on the simulator); message overrides and node
 * defaults; every refusal a Catch-able error naming the field, with no output; the status; the
 * chart series. The clock is @sinonjs/fake-timers (Date only): the planner's `now`.
 */
import assert from 'node:assert/strict';
import { HOUR_MS, MINUTE_MS, formatClock } from '../../../src/protocol/time';
import { DEFAULT_SITES, startSimulator, type StartedSimulator } from '../../../src/simulator';
import { cfg, flow, loadFlow, useRuntime, type Loaded } from '../../helpers/red';
import { useFakeClock, type InstalledClock } from '../../helpers/clock';
import { scheduleNode } from '../../helpers/schedule';
import { hours, planFlow, T0 } from './flow';
import { day, planNode, quarters } from './price-flow';

describe('nodes: ems-plan (price plan)', () => {
  useRuntime();
  let clock: InstalledClock;
  useFakeClock(
    () => ({ now: T0 - HOUR_MS, toFake: ['Date'] }),
    (c) => {
      clock = c;
    },
  );
  const load = (extra: Record<string, unknown> = {}) => loadFlow(planFlow(planNode(extra)));

  describe('a plan from the sample day', () => {
    it('96 quarter hours: one message with the slots as payload, the whole plan and chart series; the status says what was planned', async () => {
      const deployed = await load();
      const reply = await deployed.ask({ payload: day(), soc: 50, topic: 'tomorrow' });
      assert.equal(reply.topic, 'tomorrow', 'the message is passed on');
      assert.equal(reply.payload.length, 96);
      assert.equal(reply.payload, reply.plan.slots, 'payload = plan.slots');
      assert.deepEqual(Object.keys(reply.plan).sort(), [
        'chargedKWh',
        'dischargedKWh',
        'priceUnit',
        'slots',
        'soc',
        'stepKWh',
        'value',
      ]);
      assert.equal(reply.plan.priceUnit, 'MWh');
      assert.equal(reply.payload[0].start, T0);
      assert.equal(reply.payload[95].end, T0 + 24 * HOUR_MS);
      for (const s of reply.payload) {
        assert.deepEqual(Object.keys(s).sort(), [
          'end',
          'energyKWh',
          'energyStorage',
          'price',
          'socEnd',
          'socStart',
          'start',
        ]);
        assert.equal(s.energyStorage.unit, 'kW');
        assert.ok(Math.abs(s.energyStorage.value) <= 50 + 1e-9, `within 50 kW: ${s.energyStorage.value}`);
        assert.ok(s.socStart >= 5 - 1e-6 && s.socEnd <= 95 + 1e-6, "within the node's SOC window");
      }
      // Negative prices around midday: it charges there; the evening peak: it discharges.
      const at = (hh: number, mm: number) =>
        reply.payload.find((s: any) => s.start === T0 + hh * HOUR_MS + mm * MINUTE_MS);
      const negative = reply.payload.filter((s: any) => s.price < 0);
      assert.ok(
        negative.length > 0 && negative.every((s: any) => s.energyStorage.value <= 0),
        'no discharge at negative prices',
      );
      assert.ok(
        negative.some((s: any) => s.energyStorage.value < 0),
        'charges while paid to',
      );
      assert.ok(
        reply.payload.some((s: any) => s.energyStorage.value > 0 && s.start >= T0 + 17 * HOUR_MS),
        'discharges in the evening',
      );
      assert.ok(at(0, 0));
      assert.ok(reply.plan.value > 0, `value ${reply.plan.value}`);
      assert.ok(reply.plan.chargedKWh > 0 && reply.plan.dischargedKWh > 0);
      assert.equal(deployed.status.all.at(-1).fill, 'green');
      const value = Math.round(reply.plan.value * 100) / 100;
      const charged = Math.round(reply.plan.chargedKWh * 10) / 10;
      assert.equal(
        deployed.status.all.at(-1).text,
        `plan: 96 slots · value ${value} · charge ${charged} kWh · ${formatClock(T0 - HOUR_MS)}`,
      );
      assert.equal(deployed.caught.msgs.length, 0);
    });

    it("ems-plan → ems-schedule (dry run on the simulator): the schedule takes the plan's slots as they are, and its plan of requests covers every slot", async () => {
      const sim: StartedSimulator = await startSimulator({ port: 0 });
      try {
        const site = DEFAULT_SITES[0];
        const deployed = await loadFlow([
          ...flow(
            planNode({
              capacityKWh: site.battery.capacityWh / 1000,
              maxChargeKW: site.battery.maxPowerW / 1000,
              wires: [['sched']],
            }),
            cfg(sim.url),
          ),
          {
            id: 'sched',
            z: 'tab',
            x: 300,
            y: 100,
            ...scheduleNode({ server: 'cfg', dryRun: true, wires: [['out'], []] }),
          },
        ]);
        deployed.send({ payload: day(), soc: site.battery.initialSoc });
        const [dry] = await deployed.out.count(1);
        assert.equal(deployed.caught.msgs.length, 0, JSON.stringify(deployed.caught.msgs[0]?.error));
        assert.equal(dry.dryRun, true);
        assert.equal(dry.site, site.siteReference);
        const requests: any[] = dry.payload;
        assert.ok(requests.length > 0 && requests.length <= 96, `${requests.length} requests`);
        // Every slot of the plan is in exactly one request, in order; each request is the ESS setpoint of its slots, until the last one's end.
        const plan = dry.plan; // (the plan node's msg.plan, passed through by the schedule)
        assert.deepEqual(
          requests.flatMap((r) => r.slots),
          plan.slots.map((_s: any, i: number) => i),
        );
        for (const r of requests) {
          assert.equal(r.request.method, 'POST');
          assert.equal(r.request.path, `/sites/${site.siteReference}/steering/ess`);
          const slots = r.slots.map((i: number) => plan.slots[i]);
          assert.equal(r.at, slots[0].start, "sent at its first slot's start");
          assert.equal(r.request.body.validUntil, slots[slots.length - 1].end);
          for (const s of slots) assert.deepEqual(r.request.body.setting, s.energyStorage);
        }
        assert.equal(sim.sim.requestLog.filter((e) => /steering/.test(e.route)).length, 0, 'a dry run sends nothing');
      } finally {
        await sim.close();
      }
    });

    it('slots that ended are dropped and the one in progress starts now', async () => {
      clock.setSystemTime(T0 + 20 * MINUTE_MS);
      const deployed = await load();
      const reply = await deployed.ask({ payload: day(), soc: 50 });
      assert.equal(reply.payload.length, 95);
      assert.equal(reply.payload[0].start, T0 + 20 * MINUTE_MS);
      assert.equal(reply.payload[0].end, T0 + 30 * MINUTE_MS);
      assert.equal(reply.plan.soc[0].time, T0 + 20 * MINUTE_MS);
    });
  });

  describe('settings: the message first, then the node', () => {
    const prices = () => hours([100, 10, 300, 10, 300, 100]);

    it('node defaults: capacity, power, SOC window, efficiency, price unit', async () => {
      const deployed = await load({
        capacityKWh: 20,
        maxChargeKW: 5,
        maxDischargeKW: 10,
        socMin: 10,
        socMax: 90,
        priceUnit: 'kWh',
      });
      const reply = await deployed.ask({ payload: quarters([100, 10, 300, 10, 300, 100]), soc: 50 });
      assert.equal(reply.plan.priceUnit, 'kWh');
      assert.ok(
        reply.payload.every((s: any) => s.energyStorage.value >= -5 - 1e-9 && s.energyStorage.value <= 10 + 1e-9),
      );
      assert.ok(
        reply.payload.some((s: any) => Math.abs(s.energyStorage.value - 10) < 1e-9),
        "discharges at the node's maxDischargeKW",
      );
      assert.ok(
        reply.plan.soc.every((p: any) => p.soc >= 10 - 1e-6 && p.soc <= 90 + 1e-6),
        "within the node's window",
      );
      assert.ok(
        reply.plan.soc.some((p: any) => p.soc < 10 + 0.5),
        'uses the window down to socMin',
      );
    });

    it("msg.battery overrides the node's battery; msg.payload.battery too, below msg.battery", async () => {
      const deployed = await load();
      const reply = await deployed.ask({
        payload: { prices: prices(), battery: { maxChargeKW: 2, capacityKWh: 40 } },
        battery: { maxChargeKW: 4, soc: 10 },
      });
      const kw = reply.payload.map((s: any) => s.energyStorage.value);
      assert.equal(Math.min(...kw), -4, 'msg.battery.maxChargeKW over msg.payload.battery');
      assert.equal(Math.max(...kw), 4, 'maxDischargeKW = maxChargeKW');
      // 40 kWh (msg.payload.battery, not the node's 100): an hour at 4 kW stores 4·√0.9 kWh = 9.49 % of it.
      const full = reply.payload.find((s: any) => s.energyStorage.value === -4);
      assert.ok(
        Math.abs(full.socEnd - full.socStart - ((4 * Math.sqrt(0.9)) / 40) * 100) < 1e-6,
        `${full.socStart} → ${full.socEnd}`,
      );
    });

    it('the current SOC: msg.soc, then msg.payload.soc, then msg.battery.soc, then msg.payload.battery.soc', async () => {
      const deployed = await load();
      const first = async (msg: Record<string, unknown>) => (await deployed.ask(msg)).plan.soc[0].soc;
      const body = (o: Record<string, unknown>) => ({ prices: prices(), ...o });
      assert.equal(
        await first({ payload: body({ soc: 20, battery: { soc: 40 } }), soc: 80, battery: { soc: 30 } }),
        80,
      );
      assert.equal(await first({ payload: body({ soc: 20, battery: { soc: 40 } }), battery: { soc: 30 } }), 20);
      assert.equal(await first({ payload: body({ battery: { soc: 40 } }), battery: { soc: 30 } }), 30);
      assert.equal(await first({ payload: body({ battery: { soc: 40 } }) }), 40);
      assert.equal(await first({ payload: prices(), soc: '55' }), 55, 'a numeric string');
    });

    it("socEnd, priceUnit and steps: msg.X, then msg.payload.X, then the node's", async () => {
      const deployed = await load({ socEnd: 30, priceUnit: 'kWh' });
      const endOf = (m: any) => m.plan.soc.at(-1).soc;
      const byNode = await deployed.ask({ payload: prices(), soc: 50 });
      assert.ok(endOf(byNode) >= 30 - 1, `node socEnd: ${endOf(byNode)}`);
      assert.equal(byNode.plan.priceUnit, 'kWh');
      const byPayload = await deployed.ask({
        payload: { prices: prices(), soc: 50, socEnd: 80, priceUnit: 'EUR/MWh', steps: 10 },
      });
      assert.ok(endOf(byPayload) >= 80 - 1, `msg.payload.socEnd: ${endOf(byPayload)}`);
      assert.equal(byPayload.plan.priceUnit, 'MWh');
      assert.ok(
        byPayload.plan.stepKWh > 4 && byPayload.plan.stepKWh <= 9 + 1e-9,
        `steps 10: a coarse grid (${byPayload.plan.stepKWh} kWh)`,
      );
      const byMsg = await deployed.ask({
        payload: { prices: prices(), soc: 50, socEnd: 80, priceUnit: 'EUR/MWh' },
        socEnd: 60,
        priceUnit: 'kWh',
      });
      assert.ok(endOf(byMsg) >= 60 - 1 && endOf(byMsg) < 80 - 1, `msg.socEnd: ${endOf(byMsg)}`);
      assert.equal(byMsg.plan.priceUnit, 'kWh');
      // The value is in the prices' currency per priceUnit: the same plan per MWh is worth 1/1000.
      const kwh = await deployed.ask({ payload: prices(), soc: 50, socEnd: 50 });
      const mwh = await deployed.ask({ payload: prices(), soc: 50, socEnd: 50, priceUnit: 'MWh' });
      assert.deepEqual(
        mwh.payload.map((s: any) => s.energyStorage.value),
        kwh.payload.map((s: any) => s.energyStorage.value),
      );
      assert.ok(Math.abs(mwh.plan.value * 1000 - kwh.plan.value) < 1e-6);
    });
  });

  it('status texts come from the catalog, and the node has no server (no "no server configured")', async () => {
    const deployed: Loaded = await load();
    assert.ok(!deployed.status.all.some((s: any) => s.fill === 'red'), JSON.stringify(deployed.status.all));
    await deployed.ask({ payload: quarters([1, 2]), soc: 50 });
    assert.match(deployed.status.all.at(-1).text, /^plan: 2 slots · value -?[\d.]+ · charge [\d.]+ kWh · \d\d:\d\d$/);
  });
});
