/**
 * Price → battery plan (src/plan): optimality against an exhaustive search of every sequence
 * of moves on the planner's own SOC grid, negative prices, the battery's limits and losses,
 * slot lengths, gaps, `now`, validation, and a realistic day of quarter-hour prices
 * (test/fixtures/prices-sample-day.json). Pure unit tests: no Node-RED, no I/O but the sample.
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/protocol';
import { planFromPrices, type PricePlan } from '../../src/plan';
import { parsePlanInput } from '../../src/plan/price-input';
import { planGrid } from '../../src/plan/price-plan';
import { mulberry32 } from '../../src/simulator/prng';
import { T0, HOUR_MS, QUARTER_MS, battery, slotsOf, checkLimits } from '../helpers/price-plan';

/** Seeded PRNG (the simulator's mulberry32), so every case is reproducible from its seed. */
const rng = mulberry32;

/**
 * The planner's grid as these tests read it (step `plan.stepKWh`, origin at the current SOC):
 * per slot the price per kWh and the largest whole-step charge and discharge; a move from
 * state i to j is allowed within the SOC window, or from outside it never further out.
 */
function gridOf(input: any, step: number) {
  const storage = {
    maxDischargeKW: input.battery.maxChargeKW,
    socMin: 0,
    socMax: 100,
    efficiency: 0.9,
    ...input.battery,
  };
  const root = Math.sqrt(storage.efficiency);
  const e0 = (storage.soc / 100) * storage.capacityKWh;
  const iMin = Math.ceil(((storage.socMin / 100) * storage.capacityKWh - e0) / step - 1e-9);
  const iMax = Math.floor(((storage.socMax / 100) * storage.capacityKWh - e0) / step + 1e-9);
  const iEnd =
    input.socEnd === undefined
      ? -Infinity
      : Math.min(Math.ceil(((input.socEnd / 100) * storage.capacityKWh - e0) / step - 1e-9), Math.max(0, iMax));
  const per = /mwh$/i.test(input.priceUnit ?? '') ? 1 / 1000 : 1;
  const slots = input.prices.map((s: any) => {
    const hours = (s.end - s.start) / HOUR_MS;
    return {
      price: s.price * per,
      up: Math.floor((storage.maxChargeKW * root * hours) / step + 1e-9),
      down: Math.floor(((storage.maxDischargeKW / root) * hours) / step + 1e-9),
    };
  });
  const allowed = (i: number, j: number) => (j >= iMin && j <= iMax) || (j < iMin && j >= i) || (j > iMax && j <= i);
  const gridKWh = (m: number) => (m > 0 ? -(m * step) / root : -m * step * root);
  return { iMin, iMax, iEnd, slots, allowed, gridKWh, lo: Math.min(0, iMin), hi: Math.max(0, iMax) };
}

/**
 * Exhaustive search: every sequence of whole-step moves on the grid, ending at or above
 * socEnd. Returns the best value (Σ price × grid energy) and the number of sequences tried.
 */
function exhaustive(input: any, step: number): { best: number; sequences: number } {
  const grid = gridOf(input, step);
  let best = -Infinity;
  let sequences = 0;
  const walk = (k: number, i: number, value: number) => {
    if (k === grid.slots.length) {
      sequences++;
      if (i >= grid.iEnd && value > best) best = value;
      return;
    }
    const slot = grid.slots[k];
    for (let m = -slot.down; m <= slot.up; m++) {
      if (grid.allowed(i, i + m)) walk(k + 1, i + m, value + slot.price * grid.gridKWh(m));
    }
  };
  walk(0, 0, 0);
  return { best, sequences };
}

/** A plain backward DP that tries every move of every state (for cases too large to search exhaustively). */
function plainDp(input: any, step: number): number {
  const grid = gridOf(input, step);
  let next = Float64Array.from({ length: grid.hi - grid.lo + 1 }, (_, s) => (s + grid.lo >= grid.iEnd ? 0 : -Infinity));
  for (let k = grid.slots.length - 1; k >= 0; k--) {
    const slot = grid.slots[k];
    const cur = new Float64Array(next.length).fill(-Infinity);
    for (let i = grid.lo; i <= grid.hi; i++) {
      for (let m = -slot.down; m <= slot.up; m++) {
        const target = i + m;
        if (target >= grid.lo && target <= grid.hi && grid.allowed(i, target))
          cur[i - grid.lo] = Math.max(cur[i - grid.lo], slot.price * grid.gridKWh(m) + next[target - grid.lo]);
      }
    }
    next = cur;
  }
  return next[-grid.lo];
}

/** A random small case: 4-6 slots of 15 or 60 min, sometimes a gap, prices from −50 to 250. */
function randomCase(seed: number): any {
  const random = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
  const slotCount = 4 + Math.floor(random() * 3);
  const capacityKWh = 5 + random() * 200;
  const window = [Math.floor(random() * 25), 75 + Math.floor(random() * 26)];
  const prices: any[] = [];
  let slotStart = T0;
  for (let k = 0; k < slotCount; k++) {
    if (random() < 0.15) slotStart += pick([QUARTER_MS, HOUR_MS, 3 * HOUR_MS]);
    const len = pick([QUARTER_MS, HOUR_MS]);
    prices.push({ start: slotStart, end: slotStart + len, price: Math.round((random() * 300 - 50) * 100) / 100 });
    slotStart += len;
  }
  const storage = {
    capacityKWh,
    maxChargeKW: capacityKWh * (0.2 + random() * 1.8),
    maxDischargeKW: random() < 0.5 ? undefined : capacityKWh * (0.2 + random() * 1.8),
    socMin: window[0],
    socMax: window[1],
    efficiency: pick([1, 0.9, 0.81, 0.7 + random() * 0.3]),
    soc: random() < 0.2 ? random() * 100 : window[0] + random() * (window[1] - window[0]),
  };
  if (storage.maxDischargeKW === undefined) delete storage.maxDischargeKW;
  const input: any = {
    prices,
    battery: storage,
    priceUnit: pick(['kWh', 'MWh', 'EUR/MWh']),
    steps: 2 + Math.floor(random() * 4),
  };
  if (random() < 0.3) input.socEnd = window[0] + random() * (window[1] - window[0]);
  return input;
}

describe('planner: optimality against exhaustive search', () => {
  it('200 seeded random cases of 4-6 slots: the plan is worth exactly the best sequence of moves on its grid', () => {
    let sequences = 0;
    let moving = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const input = randomCase(seed);
      let plan: PricePlan;
      try {
        plan = planFromPrices(input);
      } catch (err) {
        // only an unreachable socEnd may refuse, and then the search finds no sequence either
        assert.ok(err instanceof ValidationError && err.field === 'socEnd', `seed ${seed}: ${err}`);
        assert.equal(
          exhaustive(input, planGrid(parsePlanInput(input)).step).best,
          -Infinity,
          `seed ${seed}: a sequence reaches socEnd`,
        );
        continue;
      }
      const search = exhaustive(input, plan.stepKWh);
      sequences += search.sequences;
      assert.ok(
        Math.abs(search.best - plan.value) <= 1e-9,
        `seed ${seed}: plan ${plan.value}, exhaustive ${search.best}`,
      );
      checkLimits(input, plan);
      if (plan.chargedKWh + plan.dischargedKWh > 0) moving++;
    }
    assert.ok(sequences > 100_000, `${sequences} sequences searched`);
    assert.ok(moving > 150, `${moving} of 200 plans move the battery`);
  });

  it('a hand-computed case: charge 1 h at 10, discharge what was stored at 20 (81 % round trip)', () => {
    const input = {
      prices: slotsOf([10, 20]),
      battery: {
        capacityKWh: 10,
        maxChargeKW: 10,
        maxDischargeKW: 10,
        socMin: 0,
        socMax: 100,
        efficiency: 0.81,
        soc: 0,
      },
    };
    const plan = planFromPrices(input);
    // 10 kWh from the grid store 9 kWh; 9 kWh stored give 8.1 kWh to the grid
    assert.deepEqual(
      plan.slots.map((s) => s.energyStorage.value.toFixed(9)),
      ['-10.000000000', '8.100000000'],
    );
    assert.ok(Math.abs(plan.value - (-100 + 162)) < 1e-9);
    assert.ok(Math.abs(plan.soc[1].soc - 90) < 1e-9 && Math.abs(plan.soc[2].soc) < 1e-9);
  });
});

describe('planner: limits and losses', () => {
  it('keeps SOC window, power limits and losses on 100 random days of 24-96 slots, honours socEnd, and is worth what a DP over every move finds', () => {
    for (let seed = 1000; seed < 1100; seed++) {
      const random = rng(seed);
      const slotCount = 24 + Math.floor(random() * 73);
      const prices = Array.from(
        { length: slotCount },
        (_, k) => Math.round((80 + 70 * Math.sin(k / 5 + seed) + 40 * (random() - 0.5)) * 100) / 100,
      );
      const storage = battery({
        capacityKWh: 10 + random() * 990,
        efficiency: 0.75 + random() * 0.25,
        soc: random() * 100,
        socMin: 10,
        socMax: 90,
      });
      storage.maxChargeKW = storage.capacityKWh * (0.1 + random());
      storage.maxDischargeKW = storage.capacityKWh * (0.1 + random());
      const input: any = {
        prices: slotsOf(prices, random() < 0.5 ? QUARTER_MS : HOUR_MS),
        battery: storage,
        priceUnit: 'MWh',
        socEnd: random() < 0.5 ? 50 : undefined,
      };
      let plan: PricePlan;
      try {
        plan = planFromPrices(input);
      } catch (err) {
        assert.ok(err instanceof ValidationError && err.field === 'socEnd' && storage.soc < 50, `seed ${seed}: ${err}`);
        continue;
      }
      checkLimits(input, plan);
      // on a coarser grid (fewer states), the plan is worth what a DP trying every move finds
      const coarse = planFromPrices({ ...input, steps: 40 });
      const best = plainDp(input, coarse.stepKWh);
      assert.ok(
        Math.abs(best - coarse.value) <= 1e-9 * Math.max(1, Math.abs(best)),
        `seed ${seed}: plan ${coarse.value}, every move tried ${best}`,
      );
      checkLimits(input, coarse);
    }
  });

  it('uses full power where it pays: a full move is exactly the limit, not a grid step short', () => {
    // 50 kW charging stores as much as 45 kW discharging takes at 90 %: both full
    const plan = planFromPrices({
      prices: slotsOf([10, 10, 100, 100], QUARTER_MS),
      battery: battery({ soc: 5, maxChargeKW: 50, maxDischargeKW: 45 }),
    });
    assert.deepEqual(
      plan.slots.map((s) => s.energyStorage.value),
      [-50, -50, 45, 45],
    );
    // 15-minute and hourly slots mixed: full power in both
    const mixed = planFromPrices({
      prices: [...slotsOf([10], HOUR_MS), ...slotsOf([100, 101, 102, 103], QUARTER_MS, T0 + HOUR_MS)],
      battery: battery({ soc: 5 }),
    });
    assert.deepEqual(
      mixed.slots.map((s) => s.energyStorage.value === 50),
      [false, false, true, true, true],
    );
    assert.equal(mixed.slots[0].energyStorage.value, -50);
  });

  it('refuses a socEnd it cannot reach, naming socEnd and the highest it can reach', () => {
    const input = { prices: slotsOf([10], QUARTER_MS), battery: battery({ soc: 10 }), socEnd: 90 };
    assert.throws(
      () => planFromPrices(input),
      (e: any) =>
        e instanceof ValidationError &&
        e.field === 'socEnd' &&
        /cannot be reached .* at most 21\.\d+ %/.test(e.message),
    );
    assert.equal(exhaustive(input, planGrid(parsePlanInput(input)).step).best, -Infinity, 'no sequence reaches it');
    const plan = planFromPrices({ prices: slotsOf([10, 200, 200]), battery: battery({ soc: 50 }), socEnd: 50 });
    assert.ok(plan.slots[2].socEnd >= 50 - 1e-9, 'ends at socEnd or above');
  });

  it('flat prices: idle, no pointless cycling (with losses, and on equal value without)', () => {
    // (without socEnd the plan sells what is stored, as stored energy has no value after the last slot)
    for (const efficiency of [0.9, 1]) {
      for (const [soc, socEnd] of [
        [5, undefined],
        [50, 50],
      ] as [number, number | undefined][]) {
        const plan = planFromPrices({
          prices: slotsOf(Array(96).fill(100), QUARTER_MS),
          battery: battery({ efficiency, soc }),
          socEnd,
        });
        assert.ok(
          plan.slots.every((s) => s.energyStorage.value === 0 && s.energyKWh === 0),
          `efficiency ${efficiency}, soc ${soc}`,
        );
        assert.equal(plan.value, 0);
        assert.equal(plan.soc.length, 97);
      }
    }
    const sells = planFromPrices({ prices: slotsOf(Array(8).fill(100), QUARTER_MS), battery: battery({ soc: 50 }) });
    assert.ok(
      sells.slots.every((s) => s.energyStorage.value >= 0) && sells.slots[7].socEnd < 6,
      'no socEnd: sells, never buys',
    );
  });

  it('does not cycle on a spread smaller than the losses', () => {
    // 90 % round trip: buying at 100 and selling at 105 loses money
    const plan = planFromPrices({ prices: slotsOf([100, 105, 100, 105]), battery: battery({ socMin: 50 }) });
    assert.ok(plan.slots.every((s) => s.energyStorage.value === 0));
  });

  it('a SOC outside the window only moves towards it', () => {
    const low = planFromPrices({
      prices: slotsOf([300, 300, 300], QUARTER_MS),
      battery: battery({ soc: 2, socMin: 10 }),
    });
    assert.ok(
      low.slots.every((s) => s.energyStorage.value === 0),
      'no discharge below socMin',
    );
    const high = planFromPrices({ prices: slotsOf([-50, 10, 200], QUARTER_MS), battery: battery({ soc: 99 }) });
    assert.ok(high.slots[0].energyStorage.value >= 0, 'no charge above socMax');
    checkLimits({ prices: slotsOf([-50, 10, 200], QUARTER_MS), battery: battery({ soc: 99 }) }, high);
  });
});
