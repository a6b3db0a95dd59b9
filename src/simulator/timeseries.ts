/**
 * Time series of any property, deterministic for a seed and consistent with the live state.
 *
 * - From the oldest retained sample on (initially the simulator's start), values come from
 *   the recorded quarter-hour samples of the actual state (value at the instant, not an
 *   average), interpolated linearly between samples and between the last sample and now.
 * - Before it, a deterministic baseline is used, anchored so that it meets that sample:
 *   PV and load follow the same profiles as the live model, the battery follows a daily
 *   SOC swing, and counters are the anchor value minus the baseline energy in between,
 *   so they are monotonic and never below 0.
 */
import { DAY_MS, HOUR_MS } from '../protocol/time';
import {
  COUNTER_FIELDS,
  F_BATT_IN,
  F_BATT_OUT,
  F_BATT_P,
  F_GRID_IN,
  F_GRID_OUT,
  F_GRID_P,
  F_PV_OUT,
  F_PV_P,
  F_SOC,
  N_FIELDS,
  roundField,
} from './fields';
import { loadW, pvPotentialW, utcHour } from './profiles';
import type { SiteDefinition } from './sites';

/** Samples kept per site: three years of quarter hours. Older ones are dropped in blocks. */
const MAX_SAMPLES = 3 * 366 * 96;
/** The baseline reaches at most this far back; counters are flat before it. */
const BASELINE_MAX_MS = 10 * 366 * DAY_MS;

/** Recorded samples of the actual state, in ascending time, column-wise. */
export class History {
  readonly times: number[] = [];
  readonly cols: number[][] = Array.from({ length: N_FIELDS }, () => []);

  record(t: number, v: ArrayLike<number>): void {
    const n = this.times.length;
    if (n > 0 && this.times[n - 1] === t) {
      for (let f = 0; f < N_FIELDS; f++) this.cols[f][n - 1] = v[f];
      return;
    }
    this.times.push(t);
    for (let f = 0; f < N_FIELDS; f++) this.cols[f].push(v[f]);
    if (this.times.length > MAX_SAMPLES) {
      const drop = Math.floor(MAX_SAMPLES / 10);
      this.times.splice(0, drop);
      for (const c of this.cols) c.splice(0, drop);
    }
  }

  get firstTime(): number {
    return this.times[0];
  }

  get lastTime(): number {
    return this.times[this.times.length - 1];
  }

  /** Index of the last sample at or before t (t >= firstTime). */
  indexAtOrBefore(t: number): number {
    let lo = 0;
    let hi = this.times.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.times[mid] <= t) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  anchor(): Float64Array {
    const v = new Float64Array(N_FIELDS);
    for (let f = 0; f < N_FIELDS; f++) v[f] = this.cols[f][0];
    return v;
  }
}

/** Counter rates of the baseline, in order: battery in, battery out, PV out, grid in, grid out. */
const RATE_FIELDS = [F_BATT_IN, F_BATT_OUT, F_PV_OUT, F_GRID_IN, F_GRID_OUT];

/** The deterministic model of the past before the oldest sample. */
export class Baseline {
  private readonly amp: number;
  private readonly dayCache = new Map<number, Float64Array>();

  constructor(
    private readonly def: SiteDefinition,
    private readonly seed: number,
    private readonly key: number,
    readonly t0: number,
    private readonly v0: Float64Array,
  ) {
    const soc0 = v0[F_SOC];
    this.amp = Math.max(0, Math.min(15, soc0 / 2, (100 - soc0) / 2));
  }

  /** SOC swing shape, -1..1: lowest at 03 h UTC, highest at 15 h UTC. */
  private shape(t: number): number {
    return Math.sin((2 * Math.PI * (utcHour(t) - 9)) / 24);
  }

  /** Instant powers [battery, pv, grid] in W. */
  powers(t: number): [number, number, number] {
    const { def, seed, key } = this;
    const dShapePerH = ((2 * Math.PI) / 24) * Math.cos((2 * Math.PI * (utcHour(t) - 9)) / 24);
    const batt = -(def.battery.capacityWh / 100) * this.amp * dShapePerH;
    const pv = pvPotentialW(seed, key, def.pv.peakW, t);
    const load = loadW(seed, key, def.load.profile, def.load.minW, def.load.maxW, t);
    return [batt, pv, load - pv - batt];
  }

  /** Energy rates (W) of the hour containing t, taken at mid-hour: piecewise constant per hour. */
  private rates(hourStart: number, out: Float64Array, weightH: number): void {
    const [b, pv, g] = this.powers(hourStart + HOUR_MS / 2);
    out[0] += Math.max(-b, 0) * weightH;
    out[1] += Math.max(b, 0) * weightH;
    out[2] += pv * weightH;
    out[3] += Math.max(g, 0) * weightH;
    out[4] += Math.max(-g, 0) * weightH;
  }

  private dayTotals(day: number): Float64Array {
    let v = this.dayCache.get(day);
    if (!v) {
      v = new Float64Array(5);
      for (let h = 0; h < 24; h++) this.rates(day * DAY_MS + h * HOUR_MS, v, 1);
      if (this.dayCache.size > 20_000) this.dayCache.clear();
      this.dayCache.set(day, v);
    }
    return v;
  }

  /** Adds the baseline energy of [a, b) (Wh, per rate field) to acc. */
  private addEnergy(a: number, b: number, acc: Float64Array): void {
    let t = a;
    while (t < b) {
      if (t % DAY_MS === 0 && t + DAY_MS <= b) {
        const d = this.dayTotals(t / DAY_MS);
        for (let i = 0; i < 5; i++) acc[i] += d[i];
        t += DAY_MS;
        continue;
      }
      const hourStart = Math.floor(t / HOUR_MS) * HOUR_MS;
      const end = Math.min(hourStart + HOUR_MS, b);
      this.rates(hourStart, acc, (end - t) / HOUR_MS);
      t = end;
    }
  }

  /** Values of `field` at ascending points, all before t0. */
  values(field: number, points: number[]): number[] {
    const out = new Array<number>(points.length);
    if (COUNTER_FIELDS.has(field)) {
      const idx = RATE_FIELDS.indexOf(field);
      const floor = this.t0 - BASELINE_MAX_MS;
      const acc = new Float64Array(5);
      let prev = this.t0;
      for (let i = points.length - 1; i >= 0; i--) {
        const p = Math.max(points[i], floor);
        if (p < prev) this.addEnergy(p, prev, acc);
        prev = Math.min(prev, p);
        out[i] = Math.max(0, this.v0[field] - acc[idx]);
      }
      return out;
    }
    for (let i = 0; i < points.length; i++) {
      const p = points[i];
      if (field === F_SOC) {
        const soc = this.v0[F_SOC] + this.amp * (this.shape(p) - this.shape(this.t0));
        out[i] = Math.min(100, Math.max(0, soc));
      } else {
        const [b, pv, g] = this.powers(p);
        out[i] = field === F_BATT_P ? b : field === F_PV_P ? pv : field === F_GRID_P ? g : 0;
      }
    }
    return out;
  }
}

/**
 * Values of `field` at ascending `points` (all <= now). `current` is the state at `now`
 * (the model must have been advanced to now). Values are rounded like live readings.
 */
export function seriesValues(
  history: History,
  baseline: () => Baseline,
  field: number,
  points: number[],
  now: number,
  current: ArrayLike<number>,
): number[] {
  const out = new Array<number>(points.length);
  const t0 = history.firstTime;
  let nPast = 0;
  while (nPast < points.length && points[nPast] < t0) nPast++;
  if (nPast > 0) {
    const past = baseline().values(field, points.slice(0, nPast));
    for (let i = 0; i < nPast; i++) out[i] = past[i];
  }
  const times = history.times;
  const col = history.cols[field];
  const last = history.lastTime;
  let j = nPast < points.length && points[nPast] <= last ? history.indexAtOrBefore(points[nPast]) : 0;
  for (let i = nPast; i < points.length; i++) {
    const p = points[i];
    if (p === now) {
      out[i] = current[field];
    } else if (p >= last) {
      const a = col[times.length - 1];
      out[i] = now > last ? a + ((current[field] - a) * (p - last)) / (now - last) : a;
    } else {
      while (j + 1 < times.length && times[j + 1] <= p) j++;
      const ta = times[j];
      const tb = times[j + 1];
      out[i] = p === ta ? col[j] : col[j] + ((col[j + 1] - col[j]) * (p - ta)) / (tb - ta);
    }
  }
  for (let i = 0; i < out.length; i++) out[i] = roundField(field, out[i]);
  return out;
}
