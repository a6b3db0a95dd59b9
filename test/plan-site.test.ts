/**
 * Site planner (src/plan): the price feeds Node-RED price sources emit (power saver, Tibber,
 * Nord Pool, ENTSO-E) and their units, the price formulas, validation naming the field and
 * slot, refusals of limits no plan keeps, the reasons, never charging and discharging at once, and
 * the router: the price-only planner's result byte for byte where the input is the same.
 * Pure unit tests: no Node-RED, no I/O but the sample day. (Optimality: plan-lp-exact.test.ts.)
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ValidationError } from '../src/protocol';
import { isSitePlan, planBattery, planFromPrices, planSite, readPriceFeed, type SitePlan } from '../src/plan';
import { mulberry32 } from '../src/simulator/prng';

const H = 3_600_000;
const Q = 900_000;
const T0 = Date.UTC(2026, 5, 1);
const SAMPLE = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'prices-sample-day.json'), 'utf8'));
const slotsOf = (prices: number[], lenMs = H) =>
  prices.map((price, k) => ({ start: T0 + k * lenMs, end: T0 + (k + 1) * lenMs, price }));
const battery = (o: Record<string, unknown> = {}) => ({
  capacityKWh: 10,
  maxChargeKW: 5,
  maxDischargeKW: 5,
  socMin: 10,
  socMax: 90,
  efficiency: 0.9,
  soc: 50,
  ...o,
});
const close = (a: number, b: number, tol = 1e-9) =>
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${a} ≠ ${b}`);

describe('site planner: price feeds and their units', () => {
  const plan = (prices: unknown, extra: Record<string, unknown> = {}) =>
    planSite({ prices, battery: battery(), loadForecast: undefined, solver: 'lp', ...extra } as any);

  it('ENTSO-E day-ahead [{start, value}] in EUR/MWh, with an import formula (fee, VAT, multiplier) and an export formula', () => {
    const feed = [
      { start: '2026-06-01T00:00:00Z', value: 85.2 },
      { start: '2026-06-01T00:15:00Z', value: -12.5 },
      { start: '2026-06-01T00:30:00Z', value: 140 },
    ];
    const sitePlan = plan(feed, {
      priceUnit: 'EUR/MWh',
      importFormula: { multiplier: 1.02, fee: 0.15, vat: 1.19 },
      exportFormula: { multiplier: 0.9 },
    });
    assert.deepEqual(
      sitePlan.slots.map((s) => s.end - s.start),
      [Q, Q, Q],
    ); // the last lasts as long as the one before
    feed.forEach((f, k) => {
      close(sitePlan.slots[k].importPrice, ((f.value / 1000) * 1.02 + 0.15) * 1.19);
      close(sitePlan.slots[k].exportPrice, (f.value / 1000) * 0.9);
    });
    assert.equal(sitePlan.currency, 'EUR');
  });

  it("node-red-contrib-power-saver's {priceData: [{value, start}]} (per kWh, offsets in the times)", () => {
    const feed = {
      source: 'Tibber',
      priceData: [
        { value: 1.7261, start: '2022-01-16T00:00:00.000+01:00' },
        { value: 1.7153, start: '2022-01-16T01:00:00.000+01:00' },
        { value: 0.5, start: '2022-01-16T02:00:00.000+01:00' },
      ],
    };
    const sitePlan = plan(feed);
    assert.equal(sitePlan.slots[0].start, Date.UTC(2022, 0, 15, 23));
    assert.equal(sitePlan.slots[2].end, Date.UTC(2022, 0, 16, 2));
    assert.deepEqual(
      sitePlan.slots.map((s) => s.price),
      [1.7261, 1.7153, 0.5],
    );
  });

  it('Tibber: {today, tomorrow} of {startsAt, total, energy, tax, currency}, and the whole query answer; total is the price', () => {
    const slot = (h: number, total: number) => ({
      total,
      energy: total * 0.8,
      tax: total * 0.2,
      startsAt: `2026-06-01T${String(h).padStart(2, '0')}:00:00.000+02:00`,
      currency: 'NOK',
      level: 'NORMAL',
    });
    const info = {
      today: [slot(22, 1.2), slot(23, 0.9)],
      tomorrow: [{ ...slot(0, 2.4), startsAt: '2026-06-02T00:00:00.000+02:00' }],
    };
    for (const feed of [info, { viewer: { homes: [{ currentSubscription: { priceInfo: info } }] } }]) {
      const sitePlan = plan(feed);
      assert.deepEqual(
        sitePlan.slots.map((s) => s.price),
        [1.2, 0.9, 2.4],
      );
      assert.equal(sitePlan.currency, 'NOK');
      assert.equal(sitePlan.slots[0].start, Date.UTC(2026, 5, 1, 20));
      assert.match(sitePlan.slots.find((s) => s.energyStorage.value !== 0)!.why, /NOK/);
    }
  });

  it('Nord Pool (node-red-contrib-nordpool-api): [{StartTime, EndTime, Price, Valuta: "EUR/MWh"}] in local time; the unit is read from Valuta', () => {
    const row = (h: number, price: number) => ({
      Area: 'Oslo',
      Timestamp: `2026-06-01 ${String(h).padStart(2, '0')}:00`,
      StartTime: `2026-06-01 ${String(h).padStart(2, '0')}:00`,
      EndTime: `2026-06-01 ${String(h + 1).padStart(2, '0')}:00`,
      Price: price,
      Valuta: 'EUR/MWh',
    });
    const feed = [row(0, 31.5), row(1, 28), row(2, 120.25)];
    const read = readPriceFeed(feed);
    assert.equal(read.unit, 'MWh');
    assert.equal(read.slots[0].start, new Date(2026, 5, 1, 0, 0).getTime());
    assert.equal(read.slots[2].end, new Date(2026, 5, 1, 3, 0).getTime());
    const sitePlan = plan(feed);
    close(sitePlan.slots[2].price, 0.12025);
    // without site inputs the price-only planner takes it, in Valuta's unit
    const dp = planBattery({ prices: feed, battery: battery() } as any);
    assert.ok(!('model' in dp));
    assert.equal(dp.priceUnit, 'MWh');
  });

  it('ct/kWh: prices, fee, cycleCost and endValue in ct; reasons in ct', () => {
    const sitePlan = planSite({
      prices: slotsOf([8, 9, 35, 36]),
      priceUnit: 'ct/kWh',
      importFormula: { fee: 2 },
      battery: battery({ soc: 10, cycleCost: 1 }),
      loadForecast: [500, 500, 3000, 3000],
    } as any);
    assert.equal(sitePlan.currency, 'ct');
    assert.equal(sitePlan.slots[0].importPrice, 10);
    assert.match(
      sitePlan.slots[0].why,
      /charging 5 kW from the grid: import 10 ct, below the 37 ct import it replaces at/,
    );
  });

  it('slotMinutes splits hourly prices into quarter hours for quarter-hour forecasts', () => {
    const sitePlan = planSite({
      prices: slotsOf([10, 30]),
      slotMinutes: 15,
      pvForecast: Array(8).fill(0),
      battery: battery(),
    } as any);
    assert.equal(sitePlan.slots.length, 8);
    assert.deepEqual(
      sitePlan.slots.map((s) => s.price),
      [10, 10, 10, 10, 30, 30, 30, 30],
    );
    assert.throws(
      () => planSite({ prices: slotsOf([10, 30], 20 * 60_000), slotMinutes: 15, battery: battery() } as any),
      /prices\[0\]\.end must make a slot a whole number of slotMinutes \(15\) long/,
    );
  });
});

describe('site planner: validation names the field and the slot', () => {
  const ok = (): any => ({
    prices: slotsOf([10, 20, 30, 40], Q),
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
        i.battery.socTarget = { soc: 95, time: T0 + H };
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
        i.battery.socTarget = { soc: 90, time: T0 + 2 * Q };
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
      prices: slotsOf([30, 30, 30, 30], Q),
      loadForecast: [0, 0, 0, 0],
      battery: battery({
        soc: 20,
        socTarget: [
          { soc: 50, time: T0 + 3 * Q },
          { soc: 90, time: T0 - 1 },
        ],
      }),
    } as any);
    assert.ok(sitePlan.slots[2].socEnd >= 50 - 1e-9);
    assert.deepEqual(sitePlan.targets, [{ soc: 50, time: T0 + 3 * Q, at: T0 + 3 * Q }]);
    assert.ok(sitePlan.slots.some((s) => /to reach 50 % by \d\d:\d\d \(battery.socTarget\[0\]\)/.test(s.why)));
  });

  it('a target reached only at full power all the way (no slack for rounding), and SOC kept across a gap', () => {
    const sitePlan = planSite({
      prices: slotsOf([30, 30, 30, 30], Q),
      loadForecast: [0, 0, 0, 0],
      battery: battery({ soc: 20, chargeEfficiency: 1, socTarget: { soc: 70, time: T0 + 4 * Q } }),
    } as any);
    assert.deepEqual(
      sitePlan.slots.map((s) => s.energyStorage.value),
      [-5, -5, -5, -5],
    );
    close(sitePlan.slots[3].socEnd, 70);
    const gap = planSite({
      prices: [...slotsOf([10], H), { start: T0 + 3 * H, end: T0 + 4 * H, price: 50 }],
      loadForecast: [0, 4000],
      battery: battery({ soc: 10 }),
    } as any);
    assert.equal(gap.slots[1].socStart, gap.slots[0].socEnd);
    assert.deepEqual(
      gap.soc.map((x) => x.time),
      [T0, T0 + H, T0 + 3 * H, T0 + 4 * H],
    );
    assert.ok(gap.slots[0].energyStorage.value < 0 && gap.slots[1].energyStorage.value > 0);
  });

  it('never charges and discharges at once, even when import pays: it charges, then curtails and imports at the paid price', () => {
    const sitePlan = planSite({
      prices: slotsOf([-50, -50, -50, 10], H),
      loadForecast: [0, 0, 0, 0],
      battery: battery({ soc: 80, efficiency: 0.8 }),
    } as any);
    assert.ok(sitePlan.slots.every((s) => Math.min(s.chargeKW, s.dischargeKW) === 0));
    assert.ok(sitePlan.slots.every((s) => !/at once/.test(s.why)));
    assert.ok(sitePlan.slots.slice(0, 3).some((s) => s.chargeKW > 0) && sitePlan.slots[3].dischargeKW > 0);
    const positive = planSite({
      prices: slotsOf([1, 1, 1, 10], H),
      loadForecast: [0, 0, 0, 0],
      battery: battery({ soc: 80, efficiency: 0.8 }),
    } as any);
    assert.ok(positive.slots.every((s) => Math.min(s.chargeKW, s.dischargeKW) === 0));
  });

  it('an export price above the import price plans (a fixed feed-in tariff over a cheap midday): never importing and exporting at once', () => {
    const prices = [5, 5, 30, 30].map((v, k) => ({
      start: T0 + k * H,
      end: T0 + (k + 1) * H,
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
      prices: slotsOf([10, 20, 30, 40], Q),
      loadForecast: [1000, 2000, 3000, 4000],
      now: T0 + Q + 60_000,
      battery: battery(),
    } as any);
    assert.equal(sitePlan.slots.length, 3);
    assert.equal(sitePlan.slots[0].start, T0 + Q + 60_000);
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
        now: T0 + 7 * Q + 1000,
      },
      { prices: slotsOf([40, -20, -35, -10, 60, 120]), battery: battery({ soc: 30, maxDischargeKW: undefined }) },
      { prices: [...slotsOf([10, 20]), { start: T0 + 5 * H, end: T0 + 6 * H, price: 50 }], battery: battery() },
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
      { battery: battery({ socTarget: { soc: 50, time: T0 + H } }) },
      { solver: 'lp' },
    ]) {
      const input: any = { prices: slotsOf([10]), battery: battery(), ...extra };
      assert.equal(isSitePlan(planBattery(input)), true, JSON.stringify(extra));
      assert.equal((planBattery(input) as SitePlan).model, 'site');
    }
    const twoPrices = { prices: [{ start: T0, end: T0 + H, importPrice: 2, exportPrice: 1 }], battery: battery() };
    assert.equal((planBattery(twoPrices) as SitePlan).model, 'site');
  });
});
