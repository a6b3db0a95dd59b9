/**
 * Site planner (src/plan): the price feeds Node-RED price sources emit (power saver, Tibber,
 * Nord Pool, ENTSO-E) and their units, the price formulas, validation naming the field and
 * slot, refusals of limits no plan keeps, the reasons, never charging and discharging at once, and
 * the router: the price-only planner's result byte for byte where the input is the same.
 * Pure unit tests: no Node-RED, no I/O but the sample day. (Optimality: site-plan-lp.test.ts.)
 */
import assert from 'node:assert/strict';
import { planBattery, planSite, readPriceFeed } from '../../src/plan';
import { slotsOf, close, QUARTER_MS, battery } from '../helpers/site-plan-input';

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
      [QUARTER_MS, QUARTER_MS, QUARTER_MS],
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
