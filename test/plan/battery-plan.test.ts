/**
 * Site planner (src/plan): the price feeds Node-RED price sources emit (power saver, Tibber,
 * Nord Pool, ENTSO-E) and their units, the price formulas, validation naming the field and
 * slot, refusals of limits no plan keeps, the reasons, never charging and discharging at once, and
 * the router: the price-only planner's result byte for byte where the input is the same.
 * Pure unit tests: no Node-RED, no I/O but the sample day. (Optimality: site-plan-lp.test.ts.)
 */
import assert from 'node:assert/strict';
import { isSitePlan, planBattery, planFromPrices, type SitePlan } from '../../src/plan';
import { HOUR_MS, slotsOf, QUARTER_MS, battery, T0, SAMPLE } from '../helpers/site-plan-input';

describe('planBattery: the price-only planner where the input is the same', () => {
  it("gives planFromPrices' result byte for byte for its inputs (sample day, hourly, gaps, now, socEnd, steps)", () => {
    const sample = SAMPLE.slots.map((s: any) => ({
      start: T0 + s.offsetMinutes * 60_000,
      duration: 15,
      price: s.price,
    }));
    const inputs: any[] = [
      { prices: sample, priceUnit: 'EUR/MWh', battery: battery() },
      {
        prices: sample,
        priceUnit: 'EUR/MWh',
        battery: battery({ soc: 5 }),
        socEnd: 50,
        steps: 300,
        now: T0 + 7 * QUARTER_MS + 1000,
      },
      { prices: slotsOf([40, -20, -35, -10, 60, 120]), battery: battery({ soc: 30, maxDischargeKW: undefined }) },
      {
        prices: [...slotsOf([10, 20]), { start: T0 + 5 * HOUR_MS, end: T0 + 6 * HOUR_MS, price: 50 }],
        battery: battery(),
      },
    ];
    for (const input of inputs) {
      assert.equal(isSitePlan(planBattery(input)), false);
      assert.equal(JSON.stringify(planBattery(input)), JSON.stringify(planFromPrices(input)));
    }
  });

  it('refuses as planFromPrices does, in the same words', () => {
    for (const bad of [
      { prices: [], battery: battery() },
      { prices: slotsOf([1]), battery: battery({ soc: 101 }) },
      { prices: [{ start: T0, price: 1 }], battery: battery() },
      'x',
    ]) {
      let priceError = '';
      let batteryError = '';
      try {
        planFromPrices(bad as any);
      } catch (e) {
        priceError = String(e);
      }
      try {
        planBattery(bad as any);
      } catch (e) {
        batteryError = String(e);
      }
      assert.ok(priceError.length > 0);
      assert.equal(batteryError, priceError);
    }
  });

  it('takes the site planner for any site input', () => {
    for (const extra of [
      { loadForecast: [0] },
      { pvForecast: [0] },
      { gridExportMax: 1000 },
      { site: { peakCost: 1 } },
      { importFormula: { vat: 1.2 } },
      { battery: battery({ cycleCost: 0.01 }) },
      { battery: battery({ socTarget: { soc: 50, time: T0 + HOUR_MS } }) },
      { solver: 'lp' },
    ]) {
      const input: any = { prices: slotsOf([10]), battery: battery(), ...extra };
      assert.equal(isSitePlan(planBattery(input)), true, JSON.stringify(extra));
      assert.equal((planBattery(input) as SitePlan).model, 'site');
    }
    const twoPrices = {
      prices: [{ start: T0, end: T0 + HOUR_MS, importPrice: 2, exportPrice: 1 }],
      battery: battery(),
    };
    assert.equal((planBattery(twoPrices) as SitePlan).model, 'site');
  });
});
