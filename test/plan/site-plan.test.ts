/**
 * Site planner (src/plan): the price feeds Node-RED price sources emit (power saver, Tibber,
 * Nord Pool, ENTSO-E) and their units, the price formulas, validation naming the field and
 * slot, refusals of limits no plan keeps, the reasons, never charging and discharging at once, and
 * the router: the price-only planner's result byte for byte where the input is the same.
 * Pure unit tests: no Node-RED, no I/O but the sample day. (Optimality: site-plan-lp.test.ts.)
 */
import assert from 'node:assert/strict';
import { planBattery, planFromPrices, planSite, type SitePlan } from '../../src/plan';
import { mulberry32 } from '../../src/simulator/prng';
import { HOUR_MS, QUARTER_MS, T0, SAMPLE, close, battery, slotsOf } from '../helpers/site-plan-input';

describe('site planner: what the plan says', () => {
  it('a hand-computed case: charge 1 h at 10, the load takes what was stored at 20 (81 % round trip)', () => {
    const sitePlan = planSite({
      prices: slotsOf([10, 20]),
      loadForecast: [0, 20_000],
      battery: battery({
        capacityKWh: 10,
        maxChargeKW: 10,
        maxDischargeKW: 10,
        socMin: 0,
        socMax: 100,
        efficiency: 0.81,
        soc: 0,
      }),
    } as any);
    assert.deepEqual(
      sitePlan.slots.map((s) => +s.energyStorage.value.toFixed(9)),
      [-10, 8.1],
    );
    close(sitePlan.cost.total, 100 + (20 - 8.1) * 20); // 10 kWh at 10, then 11.9 kWh imported at 20
    close(sitePlan.value!, 400 - sitePlan.cost.total);
    assert.deepEqual(
      sitePlan.slots.map((s) => +s.gridKW.toFixed(9)),
      [10, 11.9],
    );
    assert.match(
      sitePlan.slots[0].why,
      /^charging 10 kW from the grid: import 10, below the 20 import it replaces at \d\d:\d\d$/,
    );
    assert.match(
      sitePlan.slots[1].why,
      /^discharging 8.1 kW: replaces import at 20, above the 10 it was charged at \(\d\d:\d\d\)$/,
    );
  });

  it('a PV day: curtails at the export limit, charges from PV, holds the import peak, and says why', () => {
    const prices = SAMPLE.slots.map((s: any) => ({ start: T0 + s.offsetMinutes * 60_000, value: s.price }));
    const pv = prices.map((_: unknown, k: number) => Math.max(0, 9000 * Math.sin(((k / 4 - 6) / 14) * Math.PI)));
    const load = prices.map((_: unknown, k: number) => 400 + (k >= 68 && k < 88 ? 2500 : 0));
    const sitePlan = planSite({
      prices,
      priceUnit: 'EUR/MWh',
      importFormula: { fee: 0.15, vat: 1.19 },
      pvForecast: pv,
      loadForecast: load,
      battery: battery({ soc: 20, cycleCost: 0.01 }),
      site: { exportLimitW: 3000, peakCost: 0.3 },
    } as any);
    assert.ok(sitePlan.slots.some((s) => /PV curtailed .*\(export (limit|costs)/.test(s.why)));
    assert.ok(sitePlan.slots.some((s) => /^charging .* from PV: export would pay/.test(s.why)));
    assert.ok(sitePlan.slots.some((s) => /holds import at the [\d.]+ kW peak/.test(s.why)));
    assert.ok(sitePlan.slots.every((s) => s.exportKW <= 3 + 1e-9));
    close(sitePlan.cost.peak, 0.3 * sitePlan.peakImportKW);
    assert.ok(sitePlan.value! > 0, `the battery saves ${sitePlan.value}`);
    assert.ok(sitePlan.solver.gap <= 1e-9 * Math.abs(sitePlan.cost.total) + 1e-12);
  });

  it('a socTarget is met at its boundary and a charge for it says so; one before the plan is passed', () => {
    const sitePlan = planSite({
      prices: slotsOf([30, 30, 30, 30], QUARTER_MS),
      loadForecast: [0, 0, 0, 0],
      battery: battery({
        soc: 20,
        socTarget: [
          { soc: 50, time: T0 + 3 * QUARTER_MS },
          { soc: 90, time: T0 - 1 },
        ],
      }),
    } as any);
    assert.ok(sitePlan.slots[2].socEnd >= 50 - 1e-9);
    assert.deepEqual(sitePlan.targets, [{ soc: 50, time: T0 + 3 * QUARTER_MS, at: T0 + 3 * QUARTER_MS }]);
    assert.ok(sitePlan.slots.some((s) => /to reach 50 % by \d\d:\d\d \(battery.socTarget\[0\]\)/.test(s.why)));
  });

  it('a target reached only at full power all the way (no slack for rounding), and SOC kept across a gap', () => {
    const sitePlan = planSite({
      prices: slotsOf([30, 30, 30, 30], QUARTER_MS),
      loadForecast: [0, 0, 0, 0],
      battery: battery({ soc: 20, chargeEfficiency: 1, socTarget: { soc: 70, time: T0 + 4 * QUARTER_MS } }),
    } as any);
    assert.deepEqual(
      sitePlan.slots.map((s) => s.energyStorage.value),
      [-5, -5, -5, -5],
    );
    close(sitePlan.slots[3].socEnd, 70);
    const gap = planSite({
      prices: [...slotsOf([10], HOUR_MS), { start: T0 + 3 * HOUR_MS, end: T0 + 4 * HOUR_MS, price: 50 }],
      loadForecast: [0, 4000],
      battery: battery({ soc: 10 }),
    } as any);
    assert.equal(gap.slots[1].socStart, gap.slots[0].socEnd);
    assert.deepEqual(
      gap.soc.map((x) => x.time),
      [T0, T0 + HOUR_MS, T0 + 3 * HOUR_MS, T0 + 4 * HOUR_MS],
    );
    assert.ok(gap.slots[0].energyStorage.value < 0 && gap.slots[1].energyStorage.value > 0);
  });

  it('never charges and discharges at once, even when import pays: it charges, then curtails and imports at the paid price', () => {
    const sitePlan = planSite({
      prices: slotsOf([-50, -50, -50, 10], HOUR_MS),
      loadForecast: [0, 0, 0, 0],
      battery: battery({ soc: 80, efficiency: 0.8 }),
    } as any);
    assert.ok(sitePlan.slots.every((s) => Math.min(s.chargeKW, s.dischargeKW) === 0));
    assert.ok(sitePlan.slots.every((s) => !/at once/.test(s.why)));
    assert.ok(sitePlan.slots.slice(0, 3).some((s) => s.chargeKW > 0) && sitePlan.slots[3].dischargeKW > 0);
    const positive = planSite({
      prices: slotsOf([1, 1, 1, 10], HOUR_MS),
      loadForecast: [0, 0, 0, 0],
      battery: battery({ soc: 80, efficiency: 0.8 }),
    } as any);
    assert.ok(positive.slots.every((s) => Math.min(s.chargeKW, s.dischargeKW) === 0));
  });

  it('an export price above the import price plans (a fixed feed-in tariff over a cheap midday): never importing and exporting at once', () => {
    const prices = [5, 5, 30, 30].map((v, k) => ({
      start: T0 + k * HOUR_MS,
      end: T0 + (k + 1) * HOUR_MS,
      importPrice: v / 100,
      exportPrice: 0.08,
    }));
    const sitePlan = planSite({
      prices,
      loadForecast: [500, 500, 500, 500],
      pvForecast: [0, 0, 0, 0],
      battery: battery({ soc: 10 }),
    } as any);
    assert.ok(sitePlan.slots.every((s) => Math.min(s.importKW, s.exportKW) === 0));
    assert.ok(sitePlan.slots[0].chargeKW > 0, 'charges at 5 ct to sell at 8 ct or save 30 ct later');
    assert.ok(sitePlan.slots[2].dischargeKW > 0 || sitePlan.slots[3].dischargeKW > 0);
  });

  it('now drops slots that ended with their forecasts, and the slot in progress starts now', () => {
    const sitePlan = planSite({
      prices: slotsOf([10, 20, 30, 40], QUARTER_MS),
      loadForecast: [1000, 2000, 3000, 4000],
      now: T0 + QUARTER_MS + 60_000,
      battery: battery(),
    } as any);
    assert.equal(sitePlan.slots.length, 3);
    assert.equal(sitePlan.slots[0].start, T0 + QUARTER_MS + 60_000);
    assert.deepEqual(
      sitePlan.slots.map((s) => s.loadKW),
      [2, 3, 4],
    );
  });

  it('price-only with solver "lp": the exact optimum is worth at least the grid planner\'s (within its step), never much more', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const random = mulberry32(seed);
      const prices = slotsOf(Array.from({ length: 24 }, () => Math.round((random() * 300 - 50) * 100) / 100));
      const input = {
        prices,
        priceUnit: 'EUR/MWh',
        battery: battery({
          capacityKWh: 5 + random() * 50,
          maxChargeKW: 1 + random() * 10,
          soc: 10 + random() * 80,
          efficiency: 0.8 + random() * 0.2,
        }),
      };
      const dp = planFromPrices(input);
      const lp = planBattery({ ...input, solver: 'lp' }) as SitePlan;
      assert.equal(lp.model, 'site');
      const lpValue = -lp.cost.total;
      assert.ok(lpValue >= dp.value - 1e-9, `seed ${seed}: LP ${lpValue} below DP ${dp.value}`);
      assert.ok(lpValue - dp.value <= 0.02 * Math.abs(dp.value) + 0.05, `seed ${seed}: LP ${lpValue}, DP ${dp.value}`);
    }
  });
});
