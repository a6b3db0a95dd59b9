/**
 * Convex piecewise-linear functions of one variable, for the site planner's dynamic programme
 * (site-solve.ts). Pure arithmetic, no I/O.
 *
 * A function is its left end `x0`, its value there `f0`, and segments (length > 0, slope) in
 * order of nondecreasing slope; outside [x0, x0 + Σ length] it is +∞. The infimal convolution
 * of two such functions, (f □ g)(x) = min_y f(x − y) + g(y), is again one: its left end is the
 * sum of the left ends, its value the sum of the values there, and its segments are both
 * lists merged by slope (the Minkowski sum of the epigraphs). That is exact: no grid, no
 * tolerance but float rounding; it is what makes the planner's optimum the LP's optimum.
 */

/** A growable convex piecewise-linear function. */
export class Pwl {
  x0 = 0;
  f0 = 0;
  /** Segments are len[head .. head + n − 1] and slope[same]. */
  head = 0;
  n = 0;
  len: Float64Array;
  slope: Float64Array;
  /** Whether the last clip found the domain empty within rounding and kept one point. */
  collapsed = false;

  constructor(capacity = 64) {
    this.len = new Float64Array(capacity);
    this.slope = new Float64Array(capacity);
  }

  /** Room for `count` segments from index 0 (contents are dropped). */
  reset(count: number): void {
    if (this.len.length < count) {
      const size = Math.max(count, this.len.length * 2);
      this.len = new Float64Array(size);
      this.slope = new Float64Array(size);
    }
    this.head = 0;
    this.n = 0;
  }

  /** Appends a segment, joining it to the last one when the slopes are equal. */
  push(len: number, slope: number): void {
    if (!(len > 0)) return;
    const last = this.head + this.n - 1;
    if (this.n > 0 && this.slope[last] === slope) {
      this.len[last] += len;
      return;
    }
    this.len[last + 1] = len;
    this.slope[last + 1] = slope;
    this.n++;
  }

  /** Σ length: the domain is [x0, x0 + total()]. */
  total(): number {
    let t = 0;
    for (let i = this.head, end = this.head + this.n; i < end; i++) t += this.len[i];
    return t;
  }

  /** The value at x (x within the domain up to `tol`, clamped onto it), or +∞ outside. */
  value(x: number, tol: number): number {
    let t = x - this.x0;
    if (t < -tol) return Infinity;
    let f = this.f0;
    for (let i = this.head, end = this.head + this.n; i < end && t > 0; i++) {
      const step = Math.min(t, this.len[i]);
      f += step * this.slope[i];
      t -= step;
    }
    return t > tol ? Infinity : f;
  }

  /**
   * Restricts the domain to [lo, hi]. An empty result within `tol` (rounding) becomes the
   * single point nearest to the old domain; returns false when it is empty beyond that.
   */
  clip(lo: number, hi: number, tol: number): boolean {
    this.collapsed = false;
    const end = this.x0 + this.total();
    if (this.x0 > hi + tol || end < lo - tol) return false;
    if (this.x0 > hi || end < lo) {
      // empty by rounding only: keep the one point of the old domain nearest to [lo, hi]
      this.collapsed = true;
      if (this.x0 > hi) this.n = 0;
      else this.cutLeft(end - this.x0);
      return true;
    }
    if (this.x0 < lo) this.cutLeft(lo - this.x0);
    const keep = hi - this.x0;
    let t = 0;
    for (let i = this.head, stop = this.head + this.n; i < stop; i++) {
      if (t + this.len[i] >= keep) {
        this.len[i] = keep - t;
        this.n = i - this.head + (this.len[i] > 0 ? 1 : 0);
        break;
      }
      t += this.len[i];
    }
    return true;
  }

  /** Drops the first `t` of the domain (t within it). */
  private cutLeft(t: number): void {
    while (this.n > 0 && this.len[this.head] <= t) {
      t -= this.len[this.head];
      this.f0 += this.len[this.head] * this.slope[this.head];
      this.x0 += this.len[this.head];
      this.head++;
      this.n--;
    }
    if (this.n > 0 && t > 0) {
      this.f0 += t * this.slope[this.head];
      this.x0 += t;
      this.len[this.head] -= t;
    }
  }
}

/**
 * A small function given as segments of its own (one slot's cost of a change of stored
 * energy), each with a side: `first[j]` puts segment j before segments of equal slope of the
 * other function in a merge, otherwise after (the planner's tie rule: the smaller move).
 */
export interface Segments {
  x0: number;
  f0: number;
  n: number;
  len: Float64Array;
  slope: Float64Array;
  first: Uint8Array;
}

/** out = a □ b: left ends and values added, segments merged by slope (b's tie side per segment). */
export function infConv(a: Pwl, b: Segments, out: Pwl): void {
  out.reset(a.n + b.n);
  out.x0 = a.x0 + b.x0;
  out.f0 = a.f0 + b.f0;
  let i = a.head;
  const aEnd = a.head + a.n;
  let j = 0;
  while (i < aEnd || j < b.n) {
    const takeB = i >= aEnd || (j < b.n && (b.slope[j] < a.slope[i] || (b.slope[j] === a.slope[i] && b.first[j] === 1)));
    if (takeB) {
      out.push(b.len[j], b.slope[j]);
      j++;
    } else {
      out.push(a.len[i], a.slope[i]);
      i++;
    }
  }
}

/**
 * Walks the merged segments of a □ b from the left end to x and returns how much of b's domain
 * is used; `bFirst(j, i)` says whether b's segment j comes before a's segment i.
 */
function usedOfB(a: Pwl, b: Segments, x: number, bFirst: (j: number, i: number) => boolean): number {
  let t = x - (a.x0 + b.x0);
  let used = 0;
  let i = a.head;
  const aEnd = a.head + a.n;
  let j = 0;
  while (t > 0 && (i < aEnd || j < b.n)) {
    if (i >= aEnd || (j < b.n && bFirst(j, i))) {
      const step = Math.min(t, b.len[j]);
      used += step;
      t -= step;
      j++;
    } else {
      t -= Math.min(t, a.len[i]);
      i++;
    }
  }
  return used;
}

/**
 * The split of x in a □ b: walking the merged segments (in infConv's order) from the left end
 * to x, how much of b's domain is used. Then the optimal y is b.x0 + that, and x − y is a's part.
 */
export function splitOf(a: Pwl, b: Segments, x: number): number {
  return usedOfB(a, b, x, (j, i) => b.slope[j] < a.slope[i] || (b.slope[j] === a.slope[i] && b.first[j] === 1));
}

/**
 * All optimal splits of x in a □ b: [least, most] of b's domain used, walking the merged
 * segments with a's segments first on equal slopes (least) or b's first (most). Slopes within
 * `tol` of each other count as equal (the optimum moves by at most tol × the length). Any
 * split in between is optimal too: the forward pass picks one by a preference (site-solve.ts).
 */
export function splitRange(a: Pwl, b: Segments, x: number, tol: number): [number, number] {
  return [usedOfB(a, b, x, (j, i) => b.slope[j] < a.slope[i] - tol), usedOfB(a, b, x, (j, i) => b.slope[j] <= a.slope[i] + tol)];
}

/** Stored copies of functions (one per boundary of the plan), for the forward pass. */
export class PwlStore {
  private lens = new Float64Array(1024);
  private slopes = new Float64Array(1024);
  private used = 0;
  private x0: Float64Array;
  private f0: Float64Array;
  private off: Int32Array;
  private cnt: Int32Array;

  constructor(count: number) {
    this.x0 = new Float64Array(count);
    this.f0 = new Float64Array(count);
    this.off = new Int32Array(count);
    this.cnt = new Int32Array(count);
  }

  save(k: number, p: Pwl): void {
    if (this.used + p.n > this.lens.length) {
      const size = Math.max(this.used + p.n, this.lens.length * 2);
      const l = new Float64Array(size);
      const s = new Float64Array(size);
      l.set(this.lens.subarray(0, this.used));
      s.set(this.slopes.subarray(0, this.used));
      this.lens = l;
      this.slopes = s;
    }
    this.lens.set(p.len.subarray(p.head, p.head + p.n), this.used);
    this.slopes.set(p.slope.subarray(p.head, p.head + p.n), this.used);
    this.x0[k] = p.x0;
    this.f0[k] = p.f0;
    this.off[k] = this.used;
    this.cnt[k] = p.n;
    this.used += p.n;
  }

  /** Loads function k into `p` (a view on the store's arrays: read it, do not grow it). */
  load(k: number, p: Pwl): void {
    p.len = this.lens;
    p.slope = this.slopes;
    p.head = this.off[k];
    p.n = this.cnt[k];
    p.x0 = this.x0[k];
    p.f0 = this.f0[k];
  }
}
