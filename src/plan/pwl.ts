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
    const count = this.n;
    if (count > 0 && x <= this.xs[count - 1]) {
      if (f < this.fs[count - 1]) this.fs[count - 1] = f;
      return;
    }
    if (count === this.xs.length) {
      const xs = new Float64Array(count * 2);
      const fs = new Float64Array(count * 2);
      xs.set(this.xs);
      fs.set(this.fs);
      this.xs = xs;
      this.fs = fs;
    }
    this.xs[count] = x;
    this.fs[count] = f;
    this.n = count + 1;
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
    let below = 0;
    let above = n - 1;
    while (above - below > 1) {
      const mid = (below + above) >> 1;
      if (xs[mid] <= x) below = mid;
      else above = mid;
    }
    return fs[below] + ((fs[above] - fs[below]) * (x - xs[below])) / (xs[above] - xs[below]);
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
    const from = Math.max(lo, first);
    const to = Math.min(hi, last);
    const fa = this.value(from, 0);
    const fb = this.value(to, 0);
    let firstInside = 0;
    while (firstInside < this.n && xs[firstInside] <= from) firstInside++;
    let lastInside = this.n - 1;
    while (lastInside >= 0 && xs[lastInside] >= to) lastInside--;
    // points strictly inside (a, b) are j .. k; move them to 1 ..
    let write = 1;
    if (firstInside !== 1)
      for (let i = firstInside; i <= lastInside; i++, write++) {
        xs[write] = xs[i];
        fs[write] = fs[i];
      }
    else write = lastInside + 1;
    xs[0] = from;
    fs[0] = fa;
    if (to > from) {
      xs[write] = to;
      fs[write++] = fb;
    }
    this.n = write;
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
    const slope = (f.fs[j + 1] - f.fs[j]) / (f.xs[j + 1] - f.xs[j]);
    if (slope < prev - KINK * (1 + Math.abs(prev))) out.push(j);
    prev = slope;
  }
  out.push(Math.max(0, f.n - 1));
  return out;
}

/** out = the convolution of f's convex run [a0, a1] and g's [b0, b1]: both runs' segments merged by slope. */
function mergeRuns(f: Fn, a0: number, a1: number, g: Fn, b0: number, b1: number, out: Fn): void {
  out.reset(a1 - a0 + b1 - b0 + 1);
  let sumX = f.xs[a0] + g.xs[b0];
  let sumF = f.fs[a0] + g.fs[b0];
  out.push(sumX, sumF);
  let fPoint = a0;
  let gPoint = b0;
  while (fPoint < a1 || gPoint < b1) {
    const sf = fPoint < a1 ? (f.fs[fPoint + 1] - f.fs[fPoint]) / (f.xs[fPoint + 1] - f.xs[fPoint]) : Infinity;
    const sg = gPoint < b1 ? (g.fs[gPoint + 1] - g.fs[gPoint]) / (g.xs[gPoint + 1] - g.xs[gPoint]) : Infinity;
    if (sf <= sg) {
      sumX += f.xs[fPoint + 1] - f.xs[fPoint];
      sumF += f.fs[fPoint + 1] - f.fs[fPoint];
      fPoint++;
    } else {
      sumX += g.xs[gPoint + 1] - g.xs[gPoint];
      sumF += g.fs[gPoint + 1] - g.fs[gPoint];
      gPoint++;
    }
    out.push(sumX, sumF);
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
    let smallest = Infinity;
    for (let p = 0; p < count; p++) {
      const point = ptr[p];
      if (point < pieces[p].n && !(pieces[p].xs[point] >= smallest)) {
        smallest = pieces[p].xs[point];
        at = p;
      }
    }
    grid[t] = smallest;
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
    const pieceIndex = order[i];
    const x0 = pieces[pieceIndex].xs[0];
    let insertAt = i;
    for (; insertAt > 0 && pieces[order[insertAt - 1]].xs[0] > x0; insertAt--) order[insertAt] = order[insertAt - 1];
    order[insertAt] = pieceIndex;
  }
  let next = 0;
  let nAct = 0;
  for (let q = 0; q + 1 < total; q++) {
    const left = xs[q];
    const right = xs[q + 1];
    if (!(right > left)) continue;
    while (next < count && pieces[order[next]].xs[0] <= left) {
      if (pieces[order[next]].n >= 2) act[nAct++] = order[next];
      next++;
    }
    // each active piece that spans [u, v] is linear there (every breakpoint is on the grid); drop the ended ones
    let cur = -1;
    let kept = 0;
    for (let i = 0; i < nAct; i++) {
      const pieceIndex = act[i];
      const piece = pieces[pieceIndex];
      const fx = piece.xs;
      if (fx[piece.n - 1] < right) {
        fu[pieceIndex] = NaN;
        continue;
      }
      act[kept++] = pieceIndex;
      let segment = ptr[pieceIndex];
      while (segment + 2 < piece.n && fx[segment + 1] <= left) segment++;
      ptr[pieceIndex] = segment;
      const slope = (piece.fs[segment + 1] - piece.fs[segment]) / (fx[segment + 1] - fx[segment]);
      fu[pieceIndex] = piece.fs[segment] + slope * (left - fx[segment]);
      fv[pieceIndex] =
        right >= fx[segment + 1] ? piece.fs[segment + 1] : piece.fs[segment] + slope * (right - fx[segment]);
      if (cur < 0 || fu[pieceIndex] < fu[cur] || (fu[pieceIndex] === fu[cur] && fv[pieceIndex] < fv[cur]))
        cur = pieceIndex;
    }
    nAct = kept;
    if (cur < 0) continue;
    out.push(left, fu[cur]);
    let pos = left;
    const span = right - left;
    for (let guard = 0; guard < nAct; guard++) {
      let nextPiece = -1;
      let at = right;
      const here = fu[cur] + ((fv[cur] - fu[cur]) * (pos - left)) / span;
      for (let i = 0; i < nAct; i++) {
        const pieceIndex = act[i];
        if (pieceIndex === cur || !(fv[pieceIndex] < fv[cur])) continue;
        const d0 = fu[pieceIndex] + ((fv[pieceIndex] - fu[pieceIndex]) * (pos - left)) / span - here;
        const d1 = fv[pieceIndex] - fv[cur];
        const crossing = d0 <= 0 ? pos : pos + ((right - pos) * d0) / (d0 - d1);
        if (crossing < at) {
          at = crossing;
          nextPiece = pieceIndex;
        }
      }
      if (nextPiece < 0) break;
      if (at > pos) out.push(at, fu[cur] + ((fv[cur] - fu[cur]) * (at - left)) / span);
      cur = nextPiece;
      pos = at;
    }
    out.push(right, fv[cur]);
  }
  simplify(out);
}

/** Drops points on a line with their neighbours, and points within rounding of the one before. */
function simplify(f: Fn): void {
  const { xs, fs } = f;
  if (f.n < 3) return;
  const width = xs[f.n - 1] - xs[0];
  let write = 1;
  for (let j = 1; j < f.n; j++) {
    const last = j === f.n - 1;
    if (!last && xs[j] - xs[write - 1] <= 1e-13 * width) continue;
    if (!last) {
      const lastKept = write - 1;
      const interp = fs[lastKept] + ((fs[j + 1] - fs[lastKept]) * (xs[j] - xs[lastKept])) / (xs[j + 1] - xs[lastKept]);
      if (Math.abs(fs[j] - interp) <= 1e-13 * (1 + Math.abs(fs[j]))) continue;
    }
    xs[write] = xs[j];
    fs[write++] = fs[j];
  }
  f.n = write;
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
      const grownXs = new Float64Array(size);
      const grownFs = new Float64Array(size);
      grownXs.set(this.xs.subarray(0, this.used));
      grownFs.set(this.fs.subarray(0, this.used));
      this.xs = grownXs;
      this.fs = grownFs;
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
