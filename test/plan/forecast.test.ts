/**
 * Forecasts and re-planning, the pure parts: forecasts from a site's own history (same weekday and time over
 * the last weeks, or the last days) and any source's points resampled onto price slots
 * (src/plan/forecast.ts); the re-planning helpers (src/plan/replan.ts): the slots that changed,
 * the SOC a plan expects at an instant, the delivery reports' correction of it.
 */
import assert from 'node:assert/strict';
import { DAY_MS, HOUR_MS, QUARTER_HOUR_MS } from '../../src/protocol/time';
import { ValidationError } from '../../src/protocol/errors';
import { averageOver, loadForecastFromHistory, readSeries, resampleForecast } from '../../src/plan/forecast';
import { loadForecastFromHistory as fromEntry } from '../../src';

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

const QUARTER_MS = 900_000;
const SOURCES_T0 = Date.UTC(2026, 5, 1, 10);
const slots = Array.from({ length: 4 }, (_, k) => ({
  start: SOURCES_T0 + k * QUARTER_MS,
  end: SOURCES_T0 + (k + 1) * QUARTER_MS,
}));
const local = (t: number) => {
  const date = new Date(t);
  const pad = (v: number) => String(v).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:00`;
};

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

/**
 * PV forecasts as their sources deliver them (src/plan/forecast.ts): Solcast's
 * {forecasts: [{period_end, period, pv_estimate}]} (kW averages over the period ending at
 * period_end), Forecast.Solar's {result: {watts: {"YYYY-MM-DD HH:MM:SS": W}}} (local times) and
 * [{start, value}] (W), resampled onto the plan's slots; refusals name the item.
 */
describe('plan: PV forecasts as their sources deliver them', () => {
  it('Solcast: kW averages over the period that ends at period_end, in W per slot', () => {
    const solcast = {
      forecasts: [
        { period_end: new Date(SOURCES_T0 + 2 * QUARTER_MS).toISOString(), period: 'PT30M', pv_estimate: 1.2 },
        {
          period_end: new Date(SOURCES_T0 + 4 * QUARTER_MS).toISOString(),
          period: 'PT30M',
          pv_estimate: 2.5,
          pv_estimate10: 1,
        },
      ],
    };
    assert.deepEqual(resampleForecast(solcast, slots, 'pvForecast'), [1200, 1200, 2500, 2500]);
    const hourly = {
      forecasts: [{ period_end: new Date(SOURCES_T0 + 4 * QUARTER_MS).toISOString(), period: 'PT1H', pv_estimate: 3 }],
    };
    assert.deepEqual(resampleForecast(hourly, slots, 'pvForecast'), [3000, 3000, 3000, 3000]);
  });

  it('Forecast.Solar: watts at local times, each until the next, in any key order', () => {
    const watts: Record<string, number> = {};
    for (const k of [3, 0, 2, 1, 4]) watts[local(SOURCES_T0 + k * QUARTER_MS)] = 1000 * k;
    assert.deepEqual(
      resampleForecast({ result: { watts }, message: { code: 0 } }, slots, 'pvForecast'),
      [0, 1000, 2000, 3000],
    );
  });

  it('[{start, value}] in W as before', () => {
    assert.deepEqual(
      resampleForecast(
        [
          { start: SOURCES_T0, value: 500 },
          { start: SOURCES_T0 + 2 * QUARTER_MS, value: 700 },
        ],
        slots,
        'pvForecast',
      ),
      [500, 500, 700, 700],
    );
  });

  it('refusals name the item: a bad Solcast period, a bad estimate, a bad Forecast.Solar value', () => {
    const refused = (input: unknown, field: string) =>
      assert.throws(
        () => resampleForecast(input, slots, 'pvForecast'),
        (e: unknown) => e instanceof ValidationError && e.field === field,
      );
    refused(
      {
        forecasts: [{ period_end: new Date(SOURCES_T0 + QUARTER_MS).toISOString(), period: '30 min', pv_estimate: 1 }],
      },
      'pvForecast.forecasts[0].period',
    );
    refused(
      {
        forecasts: [{ period_end: new Date(SOURCES_T0 + QUARTER_MS).toISOString(), period: 'PT15M', pv_estimate: 'x' }],
      },
      'pvForecast.forecasts[0].pv_estimate',
    );
    refused({ result: { watts: { [local(SOURCES_T0)]: 'sunny' } } }, `pvForecast.result.watts["${local(SOURCES_T0)}"]`);
  });
});
