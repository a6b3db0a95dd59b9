/**
 * Price → battery plan (src/plan): optimality against an exhaustive search of every sequence
 * of moves on the planner's own SOC grid, negative prices, the battery's limits and losses,
 * slot lengths, gaps, `now`, validation, and a realistic day of quarter-hour prices
 * (test/fixtures/prices-sample-day.json). Pure unit tests: no Node-RED, no I/O but the sample.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ValidationError } from '../../src/protocol';
import { planFromPrices } from '../../src/plan';
import { T0, QUARTER_MS, HOUR_MS, checkLimits, battery, slotsOf } from '../helpers/price-plan';

const SAMPLE = path.join(__dirname, '..', 'fixtures', 'prices-sample-day.json');

describe('planner: negative prices', () => {
  it('charges while paid to, and does not discharge into a negative price', () => {
    const input = { prices: slotsOf([40, -20, -35, -10, 60, 120]), battery: battery({ soc: 30 }) };
    const plan = planFromPrices(input);
    checkLimits(input, plan);
    const charged = plan.slots.filter((s) => s.price < 0).reduce((a, s) => a - s.energyKWh, 0);
    assert.ok(charged > 50, `charged ${charged} kWh at negative prices`);
    for (const s of plan.slots) if (s.price < 0) assert.ok(s.energyStorage.value <= 0, `no discharge at ${s.price}`);
    assert.ok(plan.slots[5].energyStorage.value > 0, 'sells at the peak');
  });

  it('charges at a negative price even with nothing to sell for later (it is paid to), and idles on a full battery', () => {
    const plan = planFromPrices({ prices: slotsOf([-10, -10, 0]), battery: battery({ soc: 20 }) });
    assert.ok(plan.slots.every((s) => s.energyStorage.value <= 0));
    assert.ok(Math.abs(plan.slots[2].socEnd - 95) < 0.5, `charged to socMax: ${plan.slots[2].socEnd} %`);
    assert.ok(plan.value > 0);
    const full = planFromPrices({ prices: slotsOf([-30]), battery: battery({ soc: 95 }) });
    assert.equal(full.slots[0].energyStorage.value, 0);
    assert.equal(full.value, 0);
  });

  it('discharges at a negative price only to make room for being paid more to charge later', () => {
    const plan = planFromPrices({ prices: slotsOf([-10, -100], HOUR_MS), battery: battery({ soc: 95 }) });
    assert.ok(plan.slots[0].energyStorage.value > 0 && plan.slots[1].energyStorage.value < 0);
    assert.ok(plan.value > 0);
    // the last negative slot has nothing after it to make room for: no discharge there
    const end = planFromPrices({ prices: slotsOf([-100, -10], HOUR_MS), battery: battery({ soc: 95 }) });
    assert.deepEqual(
      end.slots.map((s) => s.energyStorage.value),
      [0, 0],
    );
  });
});

describe('planner: slot lengths, gaps, now', () => {
  it('15-minute and hourly slots of the same prices plan the same value', () => {
    const hourly = [90, 40, 30, 120, 150, 60];
    const storage = battery({ capacityKWh: 100, maxChargeKW: 50, efficiency: 0.81, socMin: 0, socMax: 100, soc: 0 });
    const hourlyPlan = planFromPrices({ prices: slotsOf(hourly, HOUR_MS), battery: storage });
    const quarterPlan = planFromPrices({
      prices: slotsOf(
        hourly.flatMap((p) => [p, p, p, p]),
        QUARTER_MS,
      ),
      battery: storage,
    });
    assert.equal(quarterPlan.slots.length, 24);
    assert.ok(
      quarterPlan.slots.every(
        (s) => s.end - s.start === QUARTER_MS && Math.abs(s.energyKWh - s.energyStorage.value / 4) < 1e-9,
      ),
    );
    assert.ok(
      Math.abs(hourlyPlan.value - quarterPlan.value) < 1e-9,
      `hourly ${hourlyPlan.value}, quarter-hourly ${quarterPlan.value}`,
    );
    assert.ok(hourlyPlan.value > 0);
  });

  it('takes end or duration, and mixed lengths', () => {
    const prices = [
      { start: T0, duration: 60, price: 10 },
      { start: new Date(T0 + HOUR_MS).toISOString(), end: new Date(T0 + HOUR_MS + QUARTER_MS), price: 80 },
    ];
    const plan = planFromPrices({ prices, battery: battery({ soc: 5 }) });
    assert.deepEqual(
      plan.slots.map((s) => [s.start, s.end]),
      [
        [T0, T0 + HOUR_MS],
        [T0 + HOUR_MS, T0 + HOUR_MS + QUARTER_MS],
      ],
    );
    assert.ok(plan.slots[0].energyStorage.value < 0 && plan.slots[1].energyStorage.value === 50);
  });

  it('is idle in a gap: charges before it, sells after it, and the SOC curve holds over it', () => {
    const prices = [
      { start: T0, end: T0 + HOUR_MS, price: 10 },
      { start: T0 + 3 * HOUR_MS, end: T0 + 4 * HOUR_MS, price: 200 },
    ];
    const plan = planFromPrices({ prices, battery: battery({ soc: 20 }) });
    assert.equal(plan.slots.length, 2, 'no slot for the gap');
    assert.ok(plan.slots[0].energyStorage.value < 0 && plan.slots[1].energyStorage.value > 0);
    assert.deepEqual(
      plan.soc.map((p) => p.time),
      [T0, T0 + HOUR_MS, T0 + 3 * HOUR_MS, T0 + 4 * HOUR_MS],
    );
    assert.equal(plan.soc[1].soc, plan.soc[2].soc);
  });

  it('with now: drops slots that ended, starts the one in progress at now (shorter, so less energy)', () => {
    const now = T0 + HOUR_MS + 30 * 60_000;
    const plan = planFromPrices({
      prices: slotsOf([500, 10, 200, 300]),
      battery: battery({ soc: 50 }),
      now: new Date(now).toISOString(),
    });
    assert.equal(plan.slots.length, 3);
    assert.equal(plan.slots[0].start, now);
    // full power in what is left of the slot, to within one grid step (the cut slot's full move need not be a whole number of steps)
    const first = plan.slots[0];
    assert.ok(
      first.energyStorage.value <= -50 + plan.stepKWh / Math.sqrt(0.9) / 0.5 && first.energyStorage.value >= -50,
      `${first.energyStorage.value} kW`,
    );
    assert.ok(Math.abs(first.energyKWh - first.energyStorage.value / 2) < 1e-9, 'half an hour');
    assert.throws(
      () => planFromPrices({ prices: slotsOf([1, 2]), battery: battery(), now: T0 + 2 * HOUR_MS }),
      (e: any) => e instanceof ValidationError && e.field === 'prices' && /every slot is in the past/.test(e.message),
    );
  });
});

describe('planner: a realistic day (test/fixtures/prices-sample-day.json)', () => {
  const sample = JSON.parse(fs.readFileSync(SAMPLE, 'utf8'));
  /** The sample shifted to a day: what an example does for "tomorrow". */
  const dayAt = (midnight: number) =>
    sample.slots.map((s: any) => ({
      start: midnight + s.offsetMinutes * 60_000,
      end: midnight + (s.offsetMinutes + sample.resolutionMinutes) * 60_000,
      price: s.price,
    }));

  it('is 96 quarter hours in EUR/MWh with morning and evening peaks and negative prices at midday', () => {
    assert.equal(sample.unit, 'EUR/MWh');
    assert.equal(sample.resolutionMinutes, 15);
    assert.deepEqual(
      sample.slots.map((s: any) => s.offsetMinutes),
      Array.from({ length: 96 }, (_, k) => k * 15),
    );
    const at = (h: number) => sample.slots.slice(h * 4, h * 4 + 4).map((s: any) => s.price);
    assert.ok(Math.max(...at(8)) > 1.5 * Math.max(...at(3)), 'morning peak');
    assert.ok(Math.max(...at(19)) > Math.max(...at(8)), 'evening peak above the morning one');
    assert.ok(
      at(13).every((p: number) => p < 0),
      'negative at midday',
    );
  });

  it('charges at midday, sells at the morning and evening peaks, never discharges into a negative price', () => {
    const midnight = T0 + 86_400_000; // "tomorrow"
    const input = { prices: dayAt(midnight), priceUnit: sample.unit, battery: battery({ soc: 50 }) };
    const plan = planFromPrices(input);
    checkLimits(input, plan);
    assert.equal(plan.slots.length, 96);
    assert.equal(plan.soc.length, 97);
    const hour = (s: any) => (s.start - midnight) / HOUR_MS;
    const kWh = (from: number, to: number, sign: 1 | -1) =>
      plan.slots
        .filter((s) => hour(s) >= from && hour(s) < to && Math.sign(s.energyKWh) === sign)
        .reduce((a, s) => a + Math.abs(s.energyKWh), 0);
    assert.ok(kWh(11, 16, -1) > 80, `charges at midday: ${kWh(11, 16, -1)} kWh`);
    assert.ok(kWh(6, 11, 1) > 60, `sells in the morning peak: ${kWh(6, 11, 1)} kWh`);
    assert.ok(kWh(17, 22, 1) > 60, `sells in the evening peak: ${kWh(17, 22, 1)} kWh`);
    assert.ok(kWh(11, 16, 1) === 0 && kWh(17, 22, -1) === 0, 'no selling at midday, no buying at the evening peak');
    for (const s of plan.slots) if (s.price < 0) assert.ok(s.energyStorage.value <= 0, `no discharge at ${s.price}`);
    const buys = plan.slots.filter((s) => s.energyKWh < 0).map((s) => s.price);
    const sells = plan.slots.filter((s) => s.energyKWh > 0).map((s) => s.price);
    assert.ok(Math.max(...buys) < Math.min(...sells), 'buys low, sells high');
    assert.ok(plan.value > 20, `value ${plan.value} EUR`);
    // the slots are a schedule: contiguous, each {start, end, energyStorage: {value, unit: 'kW'}}
    plan.slots.forEach((s, k) => assert.equal(s.start, midnight + k * QUARTER_MS));
  });

  it('with socEnd = the starting SOC (a plan to repeat daily) still earns, and ends at 50 % or above', () => {
    const plan = planFromPrices({ prices: dayAt(T0), priceUnit: 'MWh', battery: battery({ soc: 50 }), socEnd: 50 });
    assert.ok(plan.slots[95].socEnd >= 50 - 1e-9);
    assert.ok(plan.value > 10, `value ${plan.value}`);
  });
});
