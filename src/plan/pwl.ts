/**
 * Continuous piecewise-linear functions of one variable, convex or not, for the site
 * planner's dynamic programme (site-solve.ts). Pure arithmetic, no I/O.
 * A function is its points (x ascending, value), linear between them and +∞ outside
 * [first x, last x]. Its infimal convolution (infConv) is exact: that is what makes the
 * planner's optimum the true one.
 */

/** A growable piecewise-linear function as points. */
export class Fn {
  xs: Float64Array;
  fs: Float64Array;
  n = 0;

  constructor(capacity = 64) {
    this.xs = new Float64Array(capacity);
    this.fs = new Float64Array(capacity);
  }

  /** Room for `count` points from index 0 (contents are dropped). */
  reset(count: number): void {
    if (this.xs.length < count) {
      const size = Math.max(count, this.xs.length * 2);
      this.xs = new Float64Array(size);
      this.fs = new Float64Array(size);
    }
    this.n = 0;
  }

  /** Appends a point; one at the last point's x keeps the lower value. */
  push(x: number, f: number): void {
    const n = this.n;
    if (n > 0 && x <= this.xs[n - 1]) {
      if (f < this.fs[n - 1]) this.fs[n - 1] = f;
      return;
    }
    if (n === this.xs.length) {
      const xs = new Float64Array(n * 2);
      const fs = new Float64Array(n * 2);
      xs.set(this.xs);
      fs.set(this.fs);
      this.xs = xs;
      this.fs = fs;
    }
    this.xs[n] = x;
    this.fs[n] = f;
    this.n = n + 1;
  }

  get lo(): number {
    return this.xs[0];
  }

  get hi(): number {
    return this.xs[this.n - 1];
  }

  /** The value at x (x within the domain up to `tol`, clamped onto it), or +∞ outside. */
  value(x: number, tol: number): number {
    const { xs, fs, n } = this;
    if (n === 0 || x < xs[0] - tol || x > xs[n - 1] + tol) return Infinity;
    if (x <= xs[0]) return fs[0];
    if (x >= xs[n - 1]) return fs[n - 1];
    let a = 0;
    let b = n - 1;
    while (b - a > 1) {
      const m = (a + b) >> 1;
      if (xs[m] <= x) a = m;
      else b = m;
    }
    return fs[a] + ((fs[b] - fs[a]) * (x - xs[a])) / (xs[b] - xs[a]);
  }

  /**
   * Restricts the domain to [lo, hi]. An empty result within `tol` (rounding) becomes the
   * single point nearest to the old domain; returns false when it is empty beyond that.
   */
  clip(lo: number, hi: number, tol: number): boolean {
    const { xs, fs } = this;
    const first = xs[0];
    const last = xs[this.n - 1];
    if (first > hi + tol || last < lo - tol) return false;
    if (first >= hi || last <= lo) {
      const at = first >= hi ? 0 : this.n - 1;
      xs[0] = xs[at];
      fs[0] = fs[at];
      this.n = 1;
      return true;
    }
    if (first >= lo && last <= hi) return true;
    const a = Math.max(lo, first);
    const b = Math.min(hi, last);
    const fa = this.value(a, 0);
    const fb = this.value(b, 0);
    let j = 0;
    while (j < this.n && xs[j] <= a) j++;
    let k = this.n - 1;
    while (k >= 0 && xs[k] >= b) k--;
    // points strictly inside (a, b) are j .. k; move them to 1 ..
    let w = 1;
    if (j !== 1)
      for (let i = j; i <= k; i++, w++) {
        xs[w] = xs[i];
        fs[w] = fs[i];
      }
    else w = k + 1;
    xs[0] = a;
    fs[0] = fa;
    if (b > a) {
      xs[w] = b;
      fs[w++] = fb;
    }
    this.n = w;
    return true;
  }

  copyFrom(o: Fn): void {
    this.reset(o.n);
    this.xs.set(o.xs.subarray(0, o.n));
    this.fs.set(o.fs.subarray(0, o.n));
    this.n = o.n;
  }
}

/** Slopes that fall by less than this (relative) count as convex: a kink of float noise. */
const KINK = 1e-10;

/** The starts of f's convex runs (point indices), and n − 1 at the end. */
function runs(f: Fn, out: number[]): number[] {
  out.length = 0;
  out.push(0);
  let prev = -Infinity;
  for (let j = 0; j + 1 < f.n; j++) {
    const s = (f.fs[j + 1] - f.fs[j]) / (f.xs[j + 1] - f.xs[j]);
    if (s < prev - KINK * (1 + Math.abs(prev))) out.push(j);
    prev = s;
  }
  out.push(Math.max(0, f.n - 1));
  return out;
}

/** out = the convolution of f's convex run [a0, a1] and g's [b0, b1]: both runs' segments merged by slope. */
function mergeRuns(f: Fn, a0: number, a1: number, g: Fn, b0: number, b1: number, out: Fn): void {
  out.reset(a1 - a0 + b1 - b0 + 1);
  let x = f.xs[a0] + g.xs[b0];
  let v = f.fs[a0] + g.fs[b0];
  out.push(x, v);
  let i = a0;
  let j = b0;
  while (i < a1 || j < b1) {
    const sf = i < a1 ? (f.fs[i + 1] - f.fs[i]) / (f.xs[i + 1] - f.xs[i]) : Infinity;
    const sg = j < b1 ? (g.fs[j + 1] - g.fs[j]) / (g.xs[j + 1] - g.xs[j]) : Infinity;
    if (sf <= sg) {
      x += f.xs[i + 1] - f.xs[i];
      v += f.fs[i + 1] - f.fs[i];
      i++;
    } else {
      x += g.xs[j + 1] - g.xs[j];
      v += g.fs[j + 1] - g.fs[j];
      j++;
    }
    out.push(x, v);
  }
}

/** Scratch shared by every convolution (the planner is synchronous). */
const pool: Fn[] = [];
const runsF: number[] = [];
const runsG: number[] = [];
let grid = new Float64Array(1024);
let ptr = new Int32Array(16);
let fu = new Float64Array(16);
let fv = new Float64Array(16);
let act = new Int32Array(16);
let order = new Int32Array(16);

/**
 * out = f □ g, the infimal convolution (f □ g)(x) = min_y f(x − y) + g(y), exact: each of f and
 * g splits into its convex runs (between the points where the slope falls), f = min over its
 * runs, so f □ g = min over pairs of runs of (run □ run); the convolution of two convex runs is
 * their segments merged by slope (the Minkowski sum of the epigraphs), and the lower envelope
 * of those is taken interval by interval, where every one is linear, with the points where two
 * of them cross. No grid, no tolerance but float rounding.
 */
export function infConv(f: Fn, g: Fn, out: Fn): void {
  runs(f, runsF);
  runs(g, runsG);
  if (runsF.length === 2 && runsG.length === 2) {
    mergeRuns(f, 0, f.n - 1, g, 0, g.n - 1, out);
    return;
  }
  let count = 0;
  for (let a = 0; a + 1 < runsF.length; a++) {
    for (let b = 0; b + 1 < runsG.length; b++) {
      if (pool.length <= count) pool.push(new Fn());
      mergeRuns(f, runsF[a], runsF[a + 1], g, runsG[b], runsG[b + 1], pool[count++]);
    }
  }
  envelope(pool, count, out);
}

/** out = min(a, b), each +∞ outside its domain (the minimum must be continuous on the union, an interval). */
export function lowerEnvelope(a: Fn, b: Fn, out: Fn): void {
  envelope([a, b], 2, out);
}

/** out = f restricted to [lo, hi] (a copy; n = 0 when empty). */
export function restricted(f: Fn, lo: number, hi: number, out: Fn): void {
  out.copyFrom(f);
  if (!(lo <= hi) || !out.clip(lo, hi, 0)) out.n = 0;
}

/** out = the lower envelope of pieces[0 .. count − 1] (continuous, on an interval together). */
function envelope(pieces: Fn[], count: number, out: Fn): void {
  let total = 0;
  for (let p = 0; p < count; p++) total += pieces[p].n;
  if (grid.length < total) grid = new Float64Array(total * 2);
  if (ptr.length < count) {
    ptr = new Int32Array(count * 2);
    fu = new Float64Array(count * 2);
    fv = new Float64Array(count * 2);
    act = new Int32Array(count * 2);
    order = new Int32Array(count * 2);
  }
  // every breakpoint, ascending: a merge of the pieces' sorted points (no sort, no boxing)
  for (let p = 0; p < count; p++) {
    ptr[p] = 0;
    order[p] = p;
  }
  for (let t = 0; t < total; t++) {
    let at = -1;
    let x = Infinity;
    for (let p = 0; p < count; p++) {
      const j = ptr[p];
      if (j < pieces[p].n && !(pieces[p].xs[j] >= x)) {
        x = pieces[p].xs[j];
        at = p;
      }
    }
    grid[t] = x;
    ptr[at]++;
  }
  for (let p = 0; p < count; p++) ptr[p] = 0;
  const xs = grid;
  out.reset(total);
  if (xs[total - 1] <= xs[0]) {
    let best = Infinity;
    for (let p = 0; p < count; p++) for (let j = 0; j < pieces[p].n; j++) best = Math.min(best, pieces[p].fs[j]);
    out.push(xs[0], best);
    return;
  }
  // the pieces by first x (insertion sort: a few dozen), entering the active set as the sweep reaches them
  for (let i = 1; i < count; i++) {
    const o = order[i];
    const x0 = pieces[o].xs[0];
    let j = i;
    for (; j > 0 && pieces[order[j - 1]].xs[0] > x0; j--) order[j] = order[j - 1];
    order[j] = o;
  }
  let next = 0;
  let nAct = 0;
  for (let q = 0; q + 1 < total; q++) {
    const u = xs[q];
    const v = xs[q + 1];
    if (!(v > u)) continue;
    while (next < count && pieces[order[next]].xs[0] <= u) {
      if (pieces[order[next]].n >= 2) act[nAct++] = order[next];
      next++;
    }
    // each active piece that spans [u, v] is linear there (every breakpoint is on the grid); drop the ended ones
    let cur = -1;
    let w = 0;
    for (let i = 0; i < nAct; i++) {
      const p = act[i];
      const f = pieces[p];
      const fx = f.xs;
      if (fx[f.n - 1] < v) {
        fu[p] = NaN;
        continue;
      }
      act[w++] = p;
      let j = ptr[p];
      while (j + 2 < f.n && fx[j + 1] <= u) j++;
      ptr[p] = j;
      const s = (f.fs[j + 1] - f.fs[j]) / (fx[j + 1] - fx[j]);
      fu[p] = f.fs[j] + s * (u - fx[j]);
      fv[p] = v >= fx[j + 1] ? f.fs[j + 1] : f.fs[j] + s * (v - fx[j]);
      if (cur < 0 || fu[p] < fu[cur] || (fu[p] === fu[cur] && fv[p] < fv[cur])) cur = p;
    }
    nAct = w;
    if (cur < 0) continue;
    out.push(u, fu[cur]);
    let pos = u;
    const span = v - u;
    for (let guard = 0; guard < nAct; guard++) {
      let nxt = -1;
      let at = v;
      const here = fu[cur] + ((fv[cur] - fu[cur]) * (pos - u)) / span;
      for (let i = 0; i < nAct; i++) {
        const p = act[i];
        if (p === cur || !(fv[p] < fv[cur])) continue;
        const d0 = fu[p] + ((fv[p] - fu[p]) * (pos - u)) / span - here;
        const d1 = fv[p] - fv[cur];
        const x = d0 <= 0 ? pos : pos + ((v - pos) * d0) / (d0 - d1);
        if (x < at) {
          at = x;
          nxt = p;
        }
      }
      if (nxt < 0) break;
      if (at > pos) out.push(at, fu[cur] + ((fv[cur] - fu[cur]) * (at - u)) / span);
      cur = nxt;
      pos = at;
    }
    out.push(v, fv[cur]);
  }
  simplify(out);
}

/** Drops points on a line with their neighbours, and points within rounding of the one before. */
function simplify(f: Fn): void {
  const { xs, fs } = f;
  if (f.n < 3) return;
  const width = xs[f.n - 1] - xs[0];
  let w = 1;
  for (let j = 1; j < f.n; j++) {
    const last = j === f.n - 1;
    if (!last && xs[j] - xs[w - 1] <= 1e-13 * width) continue;
    if (!last) {
      const a = w - 1;
      const interp = fs[a] + ((fs[j + 1] - fs[a]) * (xs[j] - xs[a])) / (xs[j + 1] - xs[a]);
      if (Math.abs(fs[j] - interp) <= 1e-13 * (1 + Math.abs(fs[j]))) continue;
    }
    xs[w] = xs[j];
    fs[w++] = fs[j];
  }
  f.n = w;
}

/** Stored copies of functions (one per boundary of the plan), for the forward pass. */
export class FnStore {
  private xs = new Float64Array(1024);
  private fs = new Float64Array(1024);
  private used = 0;
  private off: Int32Array;
  private cnt: Int32Array;

  constructor(count: number) {
    this.off = new Int32Array(count);
    this.cnt = new Int32Array(count);
  }

  save(k: number, p: Fn): void {
    if (this.used + p.n > this.xs.length) {
      const size = Math.max(this.used + p.n, this.xs.length * 2);
      const x = new Float64Array(size);
      const f = new Float64Array(size);
      x.set(this.xs.subarray(0, this.used));
      f.set(this.fs.subarray(0, this.used));
      this.xs = x;
      this.fs = f;
    }
    const { xs, fs } = this;
    for (let j = 0, o = this.used; j < p.n; j++, o++) {
      xs[o] = p.xs[j];
      fs[o] = p.fs[j];
    }
    this.off[k] = this.used;
    this.cnt[k] = p.n;
    this.used += p.n;
  }

  /** Loads function k into `p` (a view on the store's arrays: read it, do not grow it). */
  load(k: number, p: Fn): void {
    p.xs = this.xs.subarray(this.off[k], this.off[k] + this.cnt[k]);
    p.fs = this.fs.subarray(this.off[k], this.off[k] + this.cnt[k]);
    p.n = this.cnt[k];
  }

  /** Drops every stored function (a new solve). */
  clear(): void {
    this.used = 0;
  }
}
