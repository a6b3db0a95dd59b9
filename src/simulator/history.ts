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
    const t = new Float64Array(cap);
    t.set(this.t.subarray(0, this.n));
    this.t = t;
    this.c = this.c.map((col) => {
      const x = new Float64Array(cap);
      x.set(col.subarray(0, this.n));
      return x;
    });
  }

  /** Appends a sample (`v` has N_FIELDS values; `loadWh` the load counter); replaces one at the same instant. */
  record(t: number, v: ArrayLike<number>, loadWh: number): void {
    let i = this.n;
    if (i > 0 && this.t[i - 1] === t) i--;
    else {
      if (i >= this.t.length) this.grow(i + 1);
      this.n++;
    }
    this.t[i] = t;
    for (let f = 0; f < N_FIELDS; f++) this.c[f][i] = v[f];
    this.c[H_LOAD][i] = loadWh;
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
    const k = Math.max(0, Math.min(to, past.n) - from);
    const total = Math.min(MAX_SAMPLES, k + this.n);
    const keep = total - this.n; // the newest `keep` samples of the past fit
    const skip = from + (k - keep);
    const t = new Float64Array(Math.max(total, 96));
    t.set(past.t.subarray(skip, skip + keep), 0);
    t.set(this.t.subarray(0, this.n), keep);
    this.t = t;
    this.c = this.c.map((col, ci) => {
      const x = new Float64Array(t.length);
      const src = past.c[ci];
      const off = offsets[ci];
      for (let i = 0; i < keep; i++) x[i] = src[skip + i] + off;
      x.set(col.subarray(0, this.n), keep);
      return x;
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
    const n = this.n;
    if (n === 0 || t === now) return current;
    const c = this.c[col];
    if (t <= this.t[0]) return c[0];
    const last = this.t[n - 1];
    if (t >= last) return now > last ? c[n - 1] + ((current - c[n - 1]) * (t - last)) / (now - last) : c[n - 1];
    const j = this.indexAtOrBefore(t);
    const ta = this.t[j];
    return t === ta ? c[j] : c[j] + ((c[j + 1] - c[j]) * (t - ta)) / (this.t[j + 1] - ta);
  }
}
