/**
 * PV forecasts as their sources deliver them (src/plan/forecast.ts): Solcast's
 * {forecasts: [{period_end, period, pv_estimate}]} (kW averages over the period ending at
 * period_end), Forecast.Solar's {result: {watts: {"YYYY-MM-DD HH:MM:SS": W}}} (local times) and
 * [{start, value}] (W), resampled onto the plan's slots; refusals name the item.
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../src/protocol';
import { resampleForecast } from '../src/plan';

const Q = 900_000;
const T0 = Date.UTC(2026, 5, 1, 10);
const slots = Array.from({ length: 4 }, (_, k) => ({ start: T0 + k * Q, end: T0 + (k + 1) * Q }));
const local = (t: number) => {
  const date = new Date(t);
  const pad = (v: number) => String(v).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:00`;
};

describe('plan: PV forecasts as their sources deliver them', () => {
  it('Solcast: kW averages over the period that ends at period_end, in W per slot', () => {
    const solcast = {
      forecasts: [
        { period_end: new Date(T0 + 2 * Q).toISOString(), period: 'PT30M', pv_estimate: 1.2 },
        { period_end: new Date(T0 + 4 * Q).toISOString(), period: 'PT30M', pv_estimate: 2.5, pv_estimate10: 1 },
      ],
    };
    assert.deepEqual(resampleForecast(solcast, slots, 'pvForecast'), [1200, 1200, 2500, 2500]);
    const hourly = { forecasts: [{ period_end: new Date(T0 + 4 * Q).toISOString(), period: 'PT1H', pv_estimate: 3 }] };
    assert.deepEqual(resampleForecast(hourly, slots, 'pvForecast'), [3000, 3000, 3000, 3000]);
  });

  it('Forecast.Solar: watts at local times, each until the next, in any key order', () => {
    const watts: Record<string, number> = {};
    for (const k of [3, 0, 2, 1, 4]) watts[local(T0 + k * Q)] = 1000 * k;
    assert.deepEqual(
      resampleForecast({ result: { watts }, message: { code: 0 } }, slots, 'pvForecast'),
      [0, 1000, 2000, 3000],
    );
  });

  it('[{start, value}] in W as before', () => {
    assert.deepEqual(
      resampleForecast(
        [
          { start: T0, value: 500 },
          { start: T0 + 2 * Q, value: 700 },
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
      { forecasts: [{ period_end: new Date(T0 + Q).toISOString(), period: '30 min', pv_estimate: 1 }] },
      'pvForecast.forecasts[0].period',
    );
    refused(
      { forecasts: [{ period_end: new Date(T0 + Q).toISOString(), period: 'PT15M', pv_estimate: 'x' }] },
      'pvForecast.forecasts[0].pv_estimate',
    );
    refused({ result: { watts: { [local(T0)]: 'sunny' } } }, `pvForecast.result.watts["${local(T0)}"]`);
  });
});
