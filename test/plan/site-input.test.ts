/**
 * Site planner (src/plan): the price feeds Node-RED price sources emit (power saver, Tibber,
 * Nord Pool, ENTSO-E) and their units, the price formulas, validation naming the field and
 * slot, refusals of limits no plan keeps, the reasons, never charging and discharging at once, and
 * the router: the price-only planner's result byte for byte where the input is the same.
 * Pure unit tests: no Node-RED, no I/O but the sample day. (Optimality: site-plan-lp.test.ts.)
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/protocol';
import { planSite } from '../../src/plan';
import { HOUR_MS, T0, battery, QUARTER_MS, slotsOf } from '../helpers/site-plan-input';

describe('site planner: validation names the field and the slot', () => {
  const ok = (): any => ({
    prices: slotsOf([10, 20, 30, 40], QUARTER_MS),
    loadForecast: [500, 600, 700, 800],
    pvForecast: [0, 100, 200, 0],
    gridImportMax: [null, 5000, 5000, null],
    battery: battery(),
    site: { exportLimitW: 3000, peakCost: 0.1 },
  });
  const cases: [string, (i: any) => any, string, RegExp][] = [
    [
      'load below 0',
      (i) => {
        i.loadForecast[2] = -3;
        return i;
      },
      'loadForecast[2]',
      /must be a finite number of W ≥ 0; got -3/,
    ],
    [
      'load not a number',
      (i) => {
        i.loadForecast[1] = 'lots';
        return i;
      },
      'loadForecast[1]',
      /must be a finite number of W ≥ 0; got "lots"/,
    ],
    [
      'pv length',
      (i) => {
        i.pvForecast.pop();
        return i;
      },
      'pvForecast',
      /one value per price slot: 4; got 3/,
    ],
    [
      'pv not an array',
      (i) => ({ ...i, pvForecast: 5 }),
      'pvForecast',
      /must be an array with one value per price slot \(4\)/,
    ],
    [
      'import max',
      (i) => {
        i.gridImportMax[3] = 'x';
        return i;
      },
      'gridImportMax[3]',
      /W ≥ 0, or null for no limit; got "x"/,
    ],
    ['export max single', (i) => ({ ...i, gridExportMax: -1 }), 'gridExportMax', /W ≥ 0, or null for no limit; got -1/],
    [
      'site',
      (i) => ({ ...i, site: 7 }),
      'site',
      /must be an object \{importLimitW\?, exportLimitW\?, peakCost\?, peakSoFarW\?\}/,
    ],
    [
      'site key',
      (i) => {
        i.site.peakcost = 1;
        return i;
      },
      'site.peakcost',
      /not a field of site; did you mean peakCost\? Accepted: importLimitW, exportLimitW, peakCost, peakSoFarW/,
    ],
    [
      'peak cost',
      (i) => {
        i.site.peakCost = -1;
        return i;
      },
      'site.peakCost',
      /cost per kW of the highest import ≥ 0; got -1/,
    ],
    [
      'export limit',
      (i) => {
        i.site.exportLimitW = 'x';
        return i;
      },
      'site.exportLimitW',
      /finite number/,
    ],
    [
      'charge efficiency',
      (i) => {
        i.battery.chargeEfficiency = 1.2;
        return i;
      },
      'battery.chargeEfficiency',
      /within \(0, 1\] \(0\.95 for 95 %\); got 1.2/,
    ],
    [
      'discharge efficiency',
      (i) => {
        i.battery.dischargeEfficiency = 0;
        return i;
      },
      'battery.dischargeEfficiency',
      /within \(0, 1\]/,
    ],
    [
      'cycle cost',
      (i) => {
        i.battery.cycleCost = -0.01;
        return i;
      },
      'battery.cycleCost',
      /per kWh of throughput ≥ 0; got -0.01/,
    ],
    [
      'end value',
      (i) => {
        i.battery.endValue = 'high';
        return i;
      },
      'battery.endValue',
      /finite number/,
    ],
    [
      'target object',
      (i) => {
        i.battery.socTarget = 80;
        return i;
      },
      'battery.socTarget',
      /must be an object \{soc, time\}/,
    ],
    [
      'target soc',
      (i) => {
        i.battery.socTarget = { soc: 95, time: T0 + HOUR_MS };
        return i;
      },
      'battery.socTarget.soc',
      /within battery.socMin and battery.socMax \[10, 90\]; got 95/,
    ],
    [
      'target time',
      (i) => {
        i.battery.socTarget = [
          { soc: 50, time: T0 },
          { soc: 50, time: 'soon' },
        ];
        return i;
      },
      'battery.socTarget[1].time',
      /epoch milliseconds, an ISO 8601 string or a Date/,
    ],
    [
      'target key',
      (i) => {
        i.battery.socTarget = { soc: 50, time: T0, by: 1 };
        return i;
      },
      'battery.socTarget.by',
      /Accepted: soc, time/,
    ],
    [
      'formula',
      (i) => ({ ...i, importFormula: { VAT: 1.19 } }),
      'importFormula.VAT',
      /not a field of importFormula; accepted: multiplier, fee \(per kWh\), vat/,
    ],
    [
      'formula vat',
      (i) => ({ ...i, exportFormula: { vat: 0 } }),
      'exportFormula.vat',
      /factor above 0 \(1.19 for 19 % VAT\); got 0/,
    ],
    [
      'import without export',
      (i) => {
        i.prices[2] = { start: i.prices[2].start, end: i.prices[2].end, importPrice: 20 };
        return i;
      },
      'prices[2].exportPrice',
      /must be given with importPrice \(or price, meaning both\)/,
    ],
    [
      'feed item',
      (i) => {
        i.prices[0] = { begin: T0, cost: 1 };
        return i;
      },
      'prices[0].start',
      /must be given .* Tibber's \{startsAt, total\}/,
    ],
    [
      'feed',
      (i) => ({ ...i, prices: { data: 1 } }),
      'prices',
      /non-empty array of price slots .* \{priceData: \[...\]\} or Tibber's \{today, tomorrow\}/,
    ],
    [
      'tibber total',
      (i) => ({ ...i, prices: { today: [{ startsAt: T0, total: 'x' }] } }),
      'prices.today[0].total',
      /finite number/,
    ],
    ['slotMinutes', (i) => ({ ...i, slotMinutes: 7.5 }), 'slotMinutes', /whole number of minutes within \[1, 1440\]/],
    ['currency', (i) => ({ ...i, currency: 12 }), 'currency', /short text/],
    ['socEnd', (i) => ({ ...i, socEnd: 95 }), 'socEnd', /within battery.socMin and battery.socMax \[10, 90\]/],
    [
      'battery (as the price planner)',
      (i) => {
        i.battery.capacityKWh = 0;
        return i;
      },
      'battery.capacityKWh',
      /a number above 0; got 0/,
    ],
    [
      'target unreachable',
      (i) => {
        i.battery.socTarget = { soc: 90, time: T0 + 2 * QUARTER_MS };
        return i;
      },
      'battery.socTarget.soc',
      /cannot be reached by 2026-06-01T00:30:00.000Z .*: at most 72.53 % from battery.soc 50 % within the limits; got 90/,
    ],
    [
      'socEnd unreachable',
      (i) => ({ ...i, socEnd: 90, gridImportMax: 1000 }),
      'socEnd',
      /cannot be reached by the end of the last slot: at most \d+(\.\d+)? % from battery.soc 50 %/,
    ],
    [
      'load beyond every source',
      (i) => {
        i.loadForecast[2] = 20_000;
        return i;
      },
      'loadForecast[2]',
      /cannot be met in that slot: at most 5 kW import \+ 0.2 kW PV \+ 5 kW from the battery .*; got 20000/,
    ],
    [
      'load draining the battery',
      (i) => ({ ...i, loadForecast: [6000, 6000, 6000, 6000], gridImportMax: 1000, battery: battery({ soc: 20 }) }),
      'loadForecast[0]',
      /cannot be covered within the import limits: the battery would have to go below 10 % by 2026-06-01T00:15:00.000Z \(at best 6.82 %\)/,
    ],
  ];
  for (const [name, mutate, field, message] of cases) {
    it(`${name}: ${field}`, () => {
      assert.throws(
        () => planSite(mutate(ok())),
        (e: any) => {
          assert.ok(e instanceof ValidationError, String(e));
          assert.equal(e.field, field);
          assert.ok(e.message.startsWith(`${field} `), e.message);
          assert.match(e.message, message);
          return true;
        },
      );
    });
  }
});
