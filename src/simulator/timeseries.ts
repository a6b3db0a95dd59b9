/**
 * Time series of any property, deterministic for a seed and consistent with the live state,
 * read from a site's History (history.ts): the warm-up's quarter hours before the simulator's
 * start (history-warmup.ts, computed on the first request that reaches before the start) and
 * the recorded quarter hours of the live state after it.
 * What a point of each property is: above seriesValues.
 */
import { HOUR_MS } from './time-units';
import {
  F_BATT_IN,
  F_BATT_OUT,
  F_BATT_P,
  F_GRID_IN,
  F_GRID_OUT,
  F_GRID_P,
  F_PV_OUT,
  F_PV_P,
  roundField,
} from './model-quantities';
import type { History } from './history';

export { History } from './history';

/** Counters whose signed differences make a power field's interval average. */
const POWER_TERMS: Readonly<Record<number, ReadonlyArray<readonly [number, number]>>> = {
  [F_BATT_P]: [
    [F_BATT_OUT, 1],
    [F_BATT_IN, -1],
  ],
  [F_PV_P]: [[F_PV_OUT, 1]],
  [F_GRID_P]: [
    [F_GRID_IN, 1],
    [F_GRID_OUT, -1],
  ],
};

/** Average power (W) of a power field over [a, b] (a < b <= now), from its counters. */
function averagePowerW(
  history: History,
  field: number,
  a: number,
  b: number,
  now: number,
  current: ArrayLike<number>,
): number {
  let wh = 0;
  for (const [col, sign] of POWER_TERMS[field])
    wh += sign * (history.at(col, b, now, current[col]) - history.at(col, a, now, current[col]));
  return wh / ((b - a) / HOUR_MS);
}

/**
 * Values of `field` at ascending `points` (all <= now), rounded like live readings. `current` is the state at
 * `now`; `past` makes the history reach before the simulator's start; `stepMs` is the resolution (from the
 * points' spacing when not given, else 1 h). SOC and counters are values at the instant, linear between
 * samples; a `power` point is the AVERAGE over [t, t + resolution) cut at now (the counters' difference over
 * its length, so counters and power series agree; a point at now is the live reading). Before the oldest
 * sample the site is at rest.
 */
export function seriesValues(
  history: History,
  past: () => unknown,
  field: number,
  points: number[],
  now: number,
  current: ArrayLike<number>,
  stepMs?: number,
): number[] {
  const out = new Array<number>(points.length);
  if (points.length === 0) return out;
  if (points[0] < history.firstTime && !history.pastLoaded) past();
  const step = stepMs ?? (points.length > 1 ? points[1] - points[0] : HOUR_MS);
  const isPower = POWER_TERMS[field] !== undefined;
  for (let i = 0; i < points.length; i++) {
    const at = points[i];
    if (!isPower) {
      out[i] = history.at(field, at, now, current[field]);
    } else {
      const until = Math.min(at + step, now);
      out[i] = until > at ? averagePowerW(history, field, at, until, now, current) : current[field];
    }
  }
  for (let i = 0; i < out.length; i++) out[i] = roundField(field, out[i]);
  return out;
}
