/**
 * Self-consumption slots (so that re-planning never loses against no control): among the optimal
 * plans the site planner takes the one nearest self-consumption (a plan that may store PV now or
 * later stores it now), marks the slots whose battery just follows PV and load
 * (`selfConsumption`), and the re-planning helpers hand on only the steered slots, with `stop`
 * first when a slot that was steered is left to the site.
 */
import assert from 'node:assert/strict';
import { changedSlots, handOn, planSite, scheduleSlots, type ScheduleSlot } from '../../src/plan';

const QUARTER_MS = 15 * 60_000;
const T0 = Date.UTC(2030, 0, 7);
const slots = (prices: number[], px: number | number[] = 0.08) =>
  prices.map((p, k) => ({
    start: T0 + k * QUARTER_MS,
    end: T0 + (k + 1) * QUARTER_MS,
    importPrice: p,
    exportPrice: Array.isArray(px) ? px[k] : px,
  }));
const battery = { capacityKWh: 10, maxChargeKW: 5, socMin: 10, socMax: 90, efficiency: 0.9, soc: 30 };

describe('plan: self-consumption slots', () => {
  it('a flat export price: the plan stores the PV surplus at once (not later), at the same optimum, and marks those slots', () => {
    // PV surplus of 2 kW in slots 0-5, then an evening load of 3 kW at a high price
    const pv = [3000, 3000, 3000, 3000, 3000, 3000, 0, 0, 0, 0];
    const load = [1000, 1000, 1000, 1000, 1000, 1000, 3000, 3000, 3000, 3000];
    const plan = planSite({
      prices: slots([0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.4, 0.4, 0.4, 0.4]),
      pvForecast: pv,
      loadForecast: load,
      battery,
      now: T0,
    });
    // the evening's load needs more than the surplus: every kWh of surplus is stored, but the plan could store it in any order; it stores at once
    assert.ok(plan.slots[0].chargeKW > 1.99, `slot 0 charges the surplus: ${plan.slots[0].chargeKW}`);
    assert.equal(plan.slots[0].selfConsumption, true);
    for (const s of plan.slots.slice(6))
      assert.equal(s.selfConsumption, true, 'covering the load from the store is self-consumption');
  });

  it('charging from the grid, discharging to it and holding back are steered slots', () => {
    // cheap import first, dear later, no PV: the plan charges from the grid (steered), then covers the load (self-consumption)
    const plan = planSite({
      prices: slots([0.05, 0.05, 0.5, 0.5], 0),
      loadForecast: [500, 500, 500, 500],
      battery: { ...battery, soc: 10 },
      now: T0,
    });
    const chargeAt = plan.slots.findIndex((x) => x.chargeKW > 0);
    assert.ok(chargeAt >= 0 && plan.slots[chargeAt].importKW > 0.5);
    assert.equal(plan.slots[chargeAt].selfConsumption, false);
    assert.equal(plan.slots[3].selfConsumption, true);
    assert.equal(
      plan.slots[0].selfConsumption,
      chargeAt !== 0,
      'an empty battery importing the load is self-consumption',
    );
    // a cheap slot while the battery holds energy for a dear one: held back (import, no discharge) is steered
    const hold = planSite({
      prices: slots([0.2, 0.5], 0),
      loadForecast: [1000, 1000],
      battery: { ...battery, soc: 12 },
      now: T0,
    });
    assert.equal(hold.slots[0].dischargeKW, 0);
    assert.equal(hold.slots[0].selfConsumption, false);
    assert.equal(hold.slots[1].selfConsumption, true);
    // selling from the store at a high export price is steered
    const sell = planSite({
      prices: slots([0.6, 0.1], [0.5, 0]),
      loadForecast: [0, 0],
      battery: { ...battery, soc: 90 },
      now: T0,
    });
    assert.ok(sell.slots[0].exportKW > 0);
    assert.equal(sell.slots[0].selfConsumption, false);
  });

  it('without PV and load forecasts no slot is self-consumption (the plan knows nothing of the site), and the plan is as before', () => {
    const plan = planSite({ prices: slots([0.1, 0.3, 0.1, 0.3]), battery, now: T0 });
    assert.ok(plan.slots.every((s) => s.selfConsumption === false));
  });

  it('a full battery exporting the rest and an empty one importing the rest follow PV and load', () => {
    const full = planSite({
      prices: slots([0.3, 0.3]),
      pvForecast: [5000, 5000],
      loadForecast: [500, 500],
      battery: { ...battery, soc: 90, endValue: 0.2 },
      now: T0,
    });
    // (without an end value the plan would sell the stored energy at the end: a steered slot)
    assert.ok(
      full.slots.every((s) => s.selfConsumption),
      'full: exports the surplus',
    );
    const empty = planSite({
      prices: slots([0.3, 0.3]),
      loadForecast: [1000, 1000],
      battery: { ...battery, soc: 10 },
      now: T0,
    });
    assert.ok(
      empty.slots.every((s) => s.selfConsumption),
      'empty: imports the load',
    );
  });

  describe('handing on (ems-plan idle: self-consumption)', () => {
    const slotAt = (k: number, kw: number): ScheduleSlot => ({
      start: T0 + k * QUARTER_MS,
      end: T0 + (k + 1) * QUARTER_MS,
      energyStorage: { value: kw, unit: 'kW' },
      price: 0.1,
      energyKWh: kw / 4,
      socStart: 50,
      socEnd: 50,
    });
    const plan = [slotAt(0, 1), slotAt(1, 0), slotAt(2, -2), slotAt(3, 0)];

    it('the steered slots from the first changed one; a stop first when that one is left to the site; stop alone when none is steered', () => {
      assert.deepEqual(handOn(plan, undefined, 1), { payload: plan.slice(1), index: [1, 2, 3], stopFirst: false });
      assert.deepEqual(handOn(plan, [false, false, true, true], 1), {
        payload: [plan[1]],
        index: [1],
        stopFirst: false,
      });
      assert.deepEqual(handOn(plan, [false, true, false, true], 1), {
        payload: [plan[0], plan[2]],
        index: [0, 2],
        stopFirst: true,
      });
      assert.deepEqual(handOn(plan, [true, true, true, true], 0), { payload: 'stop', index: [], stopFirst: false });
    });

    it('a slot changes when it goes from steered to left to the site or back; two left to the site never differ', () => {
      const next = [slotAt(0, 1), slotAt(1, 3), slotAt(2, -2), slotAt(3, 0)];
      assert.deepEqual(changedSlots(plan, next, 0.01), [1]);
      assert.deepEqual(
        changedSlots(plan, next, 0.01, { prev: [false, true, false, false], next: [false, true, false, false] }),
        [],
      );
      assert.deepEqual(
        changedSlots(plan, plan, 0.01, { prev: [false, false, false, false], next: [false, false, true, false] }),
        [2],
      );
      assert.deepEqual(changedSlots(plan, plan, 0.01, { prev: undefined, next: [true, false, false, false] }), [0]);
    });

    it('a site plan with forecasts in the shape the schedule takes: its slots, without selfConsumption', () => {
      const sitePlan = planSite({ prices: slots([0.3, 0.3]), loadForecast: [1000, 1000], battery, now: T0 });
      for (const x of scheduleSlots(sitePlan)) assert.ok(!('selfConsumption' in x));
    });
  });
});
