/**
 * Recorded samples of a site's state, in ascending time, in growable Float64 columns: the
 * quantities of model-quantities.ts plus the site's consumption counter (H_LOAD, internal). The live model
 * records one sample at the simulator's start and at every quarter-hour boundary after it;
 * the warm-up (history-warmup.ts) prepends the quarter hours of the past once, lazily.
 * Time series (timeseries.ts) read SOC and the counters; the power columns hold the
 * instantaneous flows at the sample and are not read (a series' power is an interval average
 * derived from the counters).
 */
import { N_FIELDS } from './model-quantities';

/** Internal column: energy consumed by the site's load, Wh (a counter; no device property). */
export const H_LOAD = N_FIELDS;
/** Columns per sample. */
export const H_COLS = N_FIELDS + 1;
/** Samples kept per site: three years of quarter hours (warm-up included). Older ones are dropped in blocks. */
const MAX_SAMPLES = 3 * 366 * 96;

export class History {
  private t: Float64Array;
  private c: Float64Array[];
  private n = 0;
  /** True once the past has been prepended (or can no longer be). */
  pastLoaded = false;

  constructor(capacity = 96) {
    this.t = new Float64Array(capacity);
    this.c = Array.from({ length: H_COLS }, () => new Float64Array(capacity));
  }

  get length(): number {
    return this.n;
  }

  get firstTime(): number {
    return this.n > 0 ? this.t[0] : NaN;
  }

  get lastTime(): number {
    return this.n > 0 ? this.t[this.n - 1] : NaN;
  }

  time(i: number): number {
    return this.t[i];
  }

  value(col: number, i: number): number {
    return this.c[col][i];
  }

  private grow(min: number): void {
    const cap = Math.max(min, this.t.length * 2);
    const times = new Float64Array(cap);
    times.set(this.t.subarray(0, this.n));
    this.t = times;
    this.c = this.c.map((col) => {
      const grown = new Float64Array(cap);
      grown.set(col.subarray(0, this.n));
      return grown;
    });
  }

  /** Appends a sample (`v` has N_FIELDS values; `loadWh` the load counter); replaces one at the same instant. */
  record(t: number, v: ArrayLike<number>, loadWh: number): void {
    let row = this.n;
    if (row > 0 && this.t[row - 1] === t) row--;
    else {
      if (row >= this.t.length) this.grow(row + 1);
      this.n++;
    }
    this.t[row] = t;
    for (let f = 0; f < N_FIELDS; f++) this.c[f][row] = v[f];
    this.c[H_LOAD][row] = loadWh;
    if (this.n > MAX_SAMPLES) this.dropOldest(Math.floor(MAX_SAMPLES / 10));
  }

  private dropOldest(k: number): void {
    this.t.copyWithin(0, k, this.n);
    for (const col of this.c) col.copyWithin(0, k, this.n);
    this.n -= k;
    this.pastLoaded = true;
  }

  /**
   * Puts the samples [from, to) of `past` (all before firstTime) in front of the recorded
   * samples, adding `offsets[col]` to each of their columns.
   */
  prepend(past: History, from: number, to: number, offsets: ArrayLike<number>): void {
    const available = Math.max(0, Math.min(to, past.n) - from);
    const total = Math.min(MAX_SAMPLES, available + this.n);
    const keep = total - this.n; // the newest `keep` samples of the past fit
    const skip = from + (available - keep);
    const times = new Float64Array(Math.max(total, 96));
    times.set(past.t.subarray(skip, skip + keep), 0);
    times.set(this.t.subarray(0, this.n), keep);
    this.t = times;
    this.c = this.c.map((col, ci) => {
      const column = new Float64Array(times.length);
      const src = past.c[ci];
      const off = offsets[ci];
      for (let i = 0; i < keep; i++) column[i] = src[skip + i] + off;
      column.set(col.subarray(0, this.n), keep);
      return column;
    });
    this.n = total;
    this.pastLoaded = true;
  }

  /** Index of the last sample at or before t (t >= firstTime). */
  indexAtOrBefore(t: number): number {
    let lo = 0;
    let hi = this.n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.t[mid] <= t) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * Value of a column at t: flat before the first sample, linear between samples, and linear
   * from the last sample to `current` at `now` after it (t <= now).
   */
  at(col: number, t: number, now: number, current: number): number {
    const count = this.n;
    if (count === 0 || t === now) return current;
    const values = this.c[col];
    if (t <= this.t[0]) return values[0];
    const last = this.t[count - 1];
    if (t >= last)
      return now > last
        ? values[count - 1] + ((current - values[count - 1]) * (t - last)) / (now - last)
        : values[count - 1];
    const before = this.indexAtOrBefore(t);
    const ta = this.t[before];
    return t === ta
      ? values[before]
      : values[before] + ((values[before + 1] - values[before]) * (t - ta)) / (this.t[before + 1] - ta);
  }
}
