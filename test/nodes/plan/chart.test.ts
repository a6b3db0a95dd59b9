/**
 * The price plan as a node: `ems-plan` ("price plan") in a real Node-RED runtime
 * (node-red-node-test-helper). The sample day of 96 quarter-hour prices becomes a plan whose
 * slots `ems-schedule` takes (a dry run on the simulator); message overrides and node
 * defaults; every refusal a Catch-able error naming the field, with no output; the status; the
 * chart series. The clock is @sinonjs/fake-timers (Date only): the planner's `now`.
 */
import assert from 'node:assert/strict';
import { HOUR_MS } from '../../../src/protocol/time';
import { loadFlow, useRuntime } from '../../helpers/red';
import { useFakeClock } from '../../helpers/clock';
import { hours, planFlow, T0 } from './flow';
import { day, planNode } from './price-flow';

describe('nodes: ems-plan (price plan)', () => {
  useRuntime();
  useFakeClock(
    () => ({ now: T0 - HOUR_MS, toFake: ['Date'] }),
    () => {},
  );
  const load = (extra: Record<string, unknown> = {}) => loadFlow(planFlow(planNode(extra)));

  describe('chart series', () => {
    it("soc, power and price as {x, y} points: SOC at each point of the curve, power and price as steps (a point at each slot's start and end)", async () => {
      const deployed = await load();
      const reply = await deployed.ask({ payload: day(), soc: 50 });
      assert.deepEqual(Object.keys(reply.chart).sort(), ['power', 'price', 'soc']);
      const { soc, power, price } = reply.chart;
      assert.equal(soc.length, 97);
      soc.forEach((p: any, i: number) => {
        assert.deepEqual(Object.keys(p), ['x', 'y']);
        assert.equal(p.x, reply.plan.soc[i].time);
        assert.ok(Math.abs(p.y - reply.plan.soc[i].soc) <= 0.005);
      });
      assert.equal(power.length, 192);
      assert.equal(price.length, 192);
      reply.payload.forEach((s: any, k: number) => {
        assert.deepEqual(power.slice(2 * k, 2 * k + 2), [
          { x: s.start, y: Math.round(s.energyStorage.value * 1000) / 1000 },
          { x: s.end, y: Math.round(s.energyStorage.value * 1000) / 1000 },
        ]);
        assert.deepEqual(price.slice(2 * k, 2 * k + 2), [
          { x: s.start, y: s.price },
          { x: s.end, y: s.price },
        ]);
      });
      for (const series of [soc, power, price])
        for (let i = 1; i < series.length; i++) assert.ok(series[i].x >= series[i - 1].x, 'in time order');
    });

    it('a gap between price slots: power 0 across it, the SOC curve restarts at the next slot', async () => {
      const deployed = await load();
      const prices = [...hours([300, 10]), ...hours([300, 10], T0 + 3 * HOUR_MS)];
      const reply = await deployed.ask({ payload: prices, soc: 50 });
      assert.equal(reply.payload.length, 4);
      assert.equal(reply.chart.power.length, 10);
      assert.deepEqual(reply.chart.power.slice(4, 6), [
        { x: T0 + 2 * HOUR_MS, y: 0 },
        { x: T0 + 3 * HOUR_MS, y: 0 },
      ]);
      assert.equal(reply.chart.soc.length, 6);
      assert.deepEqual(
        reply.chart.soc.map((p: any) => p.x),
        [T0, T0 + HOUR_MS, T0 + 2 * HOUR_MS, T0 + 3 * HOUR_MS, T0 + 4 * HOUR_MS, T0 + 5 * HOUR_MS],
      );
      assert.equal(reply.chart.price.length, 8);
    });
  });
});
