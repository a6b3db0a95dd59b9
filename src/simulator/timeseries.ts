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
 * Values of `field` at ascending `points` (all <= now), rounded like live readings.
 * `current` is the state at `now` (the model must have been advanced to now); `past` makes
 * the history reach before the simulator's start (called only when a point does);
 * `stepMs` is the resolution (taken from the points' spacing when not given, else 1 h).
 *
 * - SOC is the value at the point's instant, linear between samples.
 * - Counters are the value at the point's instant, linear between samples (so their
 *   differences are the integral of the powers).
 * - A `power` point is the AVERAGE power over its interval [t, t + resolution), cut at now:
 *   the difference of the device's counters over the interval divided by its length (battery
 *   discharged − charged, grid imported − exported, PV produced). So a counter's difference
 *   over whole intervals equals the energy of the power series over them. A point at now
 *   (an empty interval) is the instantaneous power, as a live reading.
 * - Before the oldest sample the site is at rest: counters and SOC keep the oldest sample's
 *   value, powers are 0.
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
