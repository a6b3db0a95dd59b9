/**
 * Forecasts and re-planning, the pure parts: forecasts from a site's own history (same weekday and time over
 * the last weeks, or the last days) and any source's points resampled onto price slots
 * (src/plan/forecast.ts); the re-planning helpers (src/plan/replan.ts): the slots that changed,
 * the SOC a plan expects at an instant, the delivery reports' correction of it.
 */
import assert from 'node:assert/strict';
import { DAY_MS, HOUR_MS, QUARTER_HOUR_MS } from '../src/protocol/time';
import { ValidationError } from '../src/protocol/errors';
import { averageOver, loadForecastFromHistory, readSeries, resampleForecast } from '../src/plan/forecast';
import {
  changeTolerance,
  changedSlots,
  deliveryShiftKWh,
  scheduleSlots,
  socAt,
  type ScheduleSlot,
} from '../src/plan/replan';
import { loadForecastFromHistory as fromEntry, planSite, planFromPrices } from '../src';

const T0 = Date.UTC(2026, 5, 1); // a Monday
const WEEK = 7 * DAY_MS;
const refused = (fn: () => unknown, field: string, text: RegExp) =>
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ValidationError, String(e));
    assert.equal(e.field, field);
    assert.match(e.message, text);
    return true;
  });

/** Hourly points {x, y} from `from` for `hours` hours, the value a function of the hour's start. */
const hourly = (from: number, hours: number, value: (t: number) => number) =>
  Array.from({ length: hours }, (_, k) => ({ x: from + k * HOUR_MS, y: value(from + k * HOUR_MS) }));

describe('plan: forecasts from history and from any source', () => {
  it('readSeries: {x, y}, {start, value}, {time, value}, {timestamp, value} and {time: [], data: []}; a point without an end lasts until the next one', () => {
    const series = readSeries([
      { x: 0, y: 1 },
      { x: 10, y: 2 },
    ]);
    assert.deepEqual(series, [
      { start: 0, end: 10, value: 1 },
      { start: 10, end: 20, value: 2 },
    ]);
    assert.deepEqual(readSeries([{ start: '1970-01-01T00:00:00Z', end: 5, value: 3 }]), [
      { start: 0, end: 5, value: 3 },
    ]);
    assert.deepEqual(
      readSeries([
        { time: 0, value: 1 },
        { timestamp: 4, value: 2 },
      ]),
      [
        { start: 0, end: 4, value: 1 },
        { start: 4, end: 8, value: 2 },
      ],
    );
    assert.deepEqual(readSeries({ time: [0, 10], data: [5, 6] }), [
      { start: 0, end: 10, value: 5 },
      { start: 10, end: 20, value: 6 },
    ]);
    refused(() => readSeries([{ x: 0, y: 1 }]), 'series[0].end', /must be given for a series of one point/);
    refused(
      () =>
        readSeries([
          { x: 10, y: 1 },
          { x: 5, y: 1 },
        ]),
      'series[1].x',
      /must not be before the point before/,
    );
    refused(
      () =>
        readSeries([
          { start: 0, end: 10, value: 1 },
          { start: 5, value: 1 },
        ]),
      'series[1].start',
      /must not be before the end of the point before/,
    );
    refused(
      () =>
        readSeries(
          [
            { x: 0, y: 'much' },
            { x: 5, y: 1 },
          ],
          'msg.pvForecast',
        ),
      'msg.pvForecast[0].y',
      /finite number/,
    );
    refused(
      () =>
        readSeries(
          [
            { start: 0, value: -1 },
            { start: 5, value: 1 },
          ],
          'pv',
          0,
        ),
      'pv[0].value',
      /must be a number of W ≥ 0; got -1/,
    );
    refused(() => readSeries([], 'h'), 'h', /at least one point/);
    refused(() => readSeries('x', 'h'), 'h', /must be an array of points/);
    refused(() => readSeries({ time: [1, 2], data: [1] }, 'h'), 'h.data', /one value per time \(2\); got 1/);
  });

  it('averageOver: time-weighted over the overlap; undefined where nothing overlaps', () => {
    const series = readSeries([
      { start: 0, end: 10, value: 1 },
      { start: 10, end: 20, value: 3 },
      { start: 30, end: 40, value: 10 },
    ]);
    assert.equal(averageOver(series, 5, 15), 2);
    assert.equal(averageOver(series, 0, 40), (10 * 1 + 10 * 3 + 10 * 10) / 30, 'a gap counts as no data, not as 0');
    assert.equal(averageOver(series, 20, 30), undefined);
    assert.equal(averageOver(series, 45, 50), undefined);
  });

  it('loadForecastFromHistory: per slot, the mean of the same weekday and time over the last 4 weeks (hourly history onto quarter hours)', () => {
    // A load that depends on the weekday and hour, plus 100 W more each week back: the mean of weeks 1-4 is base + 250.
    const base = (t: number) => 500 + 100 * new Date(t).getUTCDay() + 10 * new Date(t).getUTCHours();
    const from = T0 - 5 * WEEK;
    const history = hourly(from, 5 * 7 * 24, (t) => base(t) + 100 * Math.ceil((T0 - t) / WEEK));
    const forecast = loadForecastFromHistory(history, { start: T0 + 13 * HOUR_MS, slots: 8, slotMinutes: 15 });
    assert.equal(forecast.length, 8);
    forecast.forEach((v, k) => {
      const slotStart = T0 + 13 * HOUR_MS + k * QUARTER_HOUR_MS;
      assert.equal(v, base(slotStart) + 250, `slot ${k}`);
    });
    // weeks: 1 takes last week alone; days: 1 the day before (a Sunday for Monday).
    assert.equal(loadForecastFromHistory(history, { start: T0, slots: 1, weeks: 1 })[0], base(T0) + 100);
    assert.equal(
      loadForecastFromHistory(history, { start: T0 + HOUR_MS, slots: 1, days: 1 })[0],
      base(T0 - DAY_MS + HOUR_MS) + 100,
    );
    // the slots as a list (the price slots), and the public entry
    assert.deepEqual(fromEntry(history, { slots: [{ start: T0, end: T0 + HOUR_MS }] }), [base(T0) + 250]);
  });

  it('loadForecastFromHistory: weeks without data are left out; a slot no week covers is refused, naming it', () => {
    const history = hourly(T0 - 2 * WEEK, 24, () => 800); // only the Monday two weeks back
    assert.deepEqual(loadForecastFromHistory(history, { start: T0, slots: 2, field: 'msg.loadHistory' }), [800, 800]);
    refused(
      () => loadForecastFromHistory(history, { start: T0 + DAY_MS, slots: 1, field: 'msg.loadHistory' }),
      'msg.loadHistory',
      /has no data for slot 0 \(2026-06-02T00:00:00.000Z\): the same weekday and time of the last 4 week\(s\)/,
    );
    refused(
      () => loadForecastFromHistory(history, { start: T0, slots: 1, weeks: 0 }),
      'weeks',
      /whole number within \[1, 104\]; got 0/,
    );
    refused(() => loadForecastFromHistory(history, { start: T0, slots: 0 }), 'slots', /whole number of slots/);
  });

  it("resampleForecast: a source's points (W) onto the price slots, time-weighted; a slot it does not cover is refused", () => {
    const pv = [
      { start: T0, value: 0 },
      { start: T0 + HOUR_MS, value: 4000 },
      { start: T0 + 2 * HOUR_MS, value: 2000 },
    ];
    const slots = [0, 1, 2, 3, 4, 5].map((k) => ({ start: T0 + k * 30 * 60_000, end: T0 + (k + 1) * 30 * 60_000 }));
    assert.deepEqual(resampleForecast(pv, slots, 'msg.pvForecast'), [0, 0, 4000, 4000, 2000, 2000]);
    const half = [{ start: T0 + 15 * 60_000, end: T0 + 45 * 60_000, value: 1000 }];
    assert.deepEqual(resampleForecast(half, [{ start: T0, end: T0 + HOUR_MS }], 'f'), [1000], 'the covered part');
    refused(
      () => resampleForecast(pv, [...slots, { start: T0 + 4 * HOUR_MS, end: T0 + 5 * HOUR_MS }], 'msg.pvForecast'),
      'msg.pvForecast',
      /must cover every price slot: nothing for slot 6 \(2026-06-01T04:00:00.000Z/,
    );
    refused(
      () =>
        resampleForecast(
          [
            { x: T0, y: -5 },
            { x: T0 + 1, y: 1 },
          ],
          slots,
          'msg.pvForecast',
        ),
      'msg.pvForecast[0].y',
      /W ≥ 0; got -5/,
    );
  });
});

describe('plan: re-planning helpers', () => {
  const slot = (k: number, kw: number, start = T0 + k * QUARTER_HOUR_MS): ScheduleSlot => ({
    start,
    end: T0 + (k + 1) * QUARTER_HOUR_MS,
    energyStorage: { value: kw, unit: 'kW' },
    price: 0,
    energyKWh: 0,
    socStart: 0,
    socEnd: 0,
  });

  it('changedSlots: matched by end; changed when new, moved, or its power differs by more than the tolerance', () => {
    const prev = [slot(0, 5), slot(1, 5), slot(2, -3), slot(3, 0)];
    assert.deepEqual(changedSlots(undefined, prev, 0.1), [0, 1, 2, 3]);
    // the slot in progress starts later (now): unchanged; a power within the tolerance: unchanged
    assert.deepEqual(changedSlots(prev, [slot(0, 5, T0 + 60_000), slot(1, 5.05), slot(2, -3), slot(3, 0)], 0.1), []);
    assert.deepEqual(
      changedSlots(prev, [slot(1, 5), slot(2, -2), slot(3, 0), slot(4, 1)], 0.1),
      [1, 3],
      'a changed power and a new slot',
    );
    assert.deepEqual(changedSlots(prev, [slot(1, 5, T0)], 0.1), [0], 'starts earlier than the slot it was');
    assert.equal(changeTolerance(10), 0.1);
    assert.equal(changeTolerance(0.5), 0.01, 'at least 10 W');
  });

  it('socAt: linear within a slot, the first value before, undefined after the end', () => {
    const curve = [
      { time: 0, soc: 50 },
      { time: 100, soc: 60 },
      { time: 200, soc: 40 },
    ];
    assert.equal(socAt(curve, -5), 50);
    assert.equal(socAt(curve, 50), 55);
    assert.equal(socAt(curve, 150), 50);
    assert.equal(socAt(curve, 200), 40);
    assert.equal(socAt(curve, 201), undefined);
    assert.equal(socAt([], 0), undefined);
  });

  it("deliveryShiftKWh: measured − asked over the window since the plan, through the asked direction's efficiency", () => {
    const hour = HOUR_MS;
    // asked to discharge 4 kW for an hour, measured 1 kW: 3 kWh not taken out, 3/0.95 kWh more in the store
    assert.ok(
      Math.abs(
        deliveryShiftKWh(
          [{ asked: { value: 4, unit: 'kW' }, measured: { value: 1000, unit: 'W' }, from: 0, until: hour }],
          0,
          hour,
          0.9,
          0.95,
        ) -
          3 / 0.95,
      ) < 1e-12,
    );
    // asked to charge 4 kW, measured 1 kW charging: 3 kW less charged, 3·0.9 kWh less stored; only the half hour after the plan counts
    assert.ok(
      Math.abs(
        deliveryShiftKWh(
          [{ asked: { value: -4, unit: 'kW' }, measured: { value: -1, unit: 'kW' }, from: 0, until: hour }],
          hour / 2,
          hour,
          0.9,
          0.95,
        ) +
          1.5 * 0.9,
      ) < 1e-12,
    );
    assert.equal(
      deliveryShiftKWh(
        [{ asked: { value: -4, unit: 'kW' }, measured: null, from: 0, until: hour, followed: 'unknown' }],
        0,
        hour,
        0.9,
        0.95,
      ),
      0,
    );
  });

  it("scheduleSlots: a price plan's own slots; a site plan's without the fields ems-schedule refuses", () => {
    const prices = [0.3, 0.1, 0.4].map((price, k) => ({ start: T0 + k * HOUR_MS, end: T0 + (k + 1) * HOUR_MS, price }));
    const battery = { capacityKWh: 10, maxChargeKW: 5, soc: 50 };
    const pp = planFromPrices({ prices, battery });
    assert.equal(scheduleSlots(pp), pp.slots);
    const sp = planSite({ prices, battery, loadForecast: [500, 500, 500] });
    const out = scheduleSlots(sp);
    assert.deepEqual(Object.keys(out[0]).sort(), [
      'end',
      'energyKWh',
      'energyStorage',
      'price',
      'socEnd',
      'socStart',
      'start',
    ]);
    assert.deepEqual(
      out.map((s) => s.energyStorage),
      sp.slots.map((s) => s.energyStorage),
    );
  });
});
