/**
 * The peak level of the site plan (site-solve.ts): the cap P on every slot's import that
 * minimises C(P) + κ·max(P, floor), where C(P) is the plan's optimum under that cap (one DP pass
 * per evaluation). Pure arithmetic.
 */
import { Fn, FnStore, infConv } from './pwl';
import type { SiteModel } from './site-model';
import { MAX_POINTS, type SlotModel, type SlotRun } from './slot-cost';

/** What the peak search asks of the DP over the slots (site-solve.ts Chain). */
export interface PeakChain {
  readonly n: number;
  readonly m: SiteModel;
  passes: number;
  model(k: number, cap: number): SlotModel;
  solve(cap: number, keep?: boolean, knee?: { at: number; mu: Float64Array }): number;
  plan(cap: number): { e: Float64Array; runs: SlotRun[] };
  phiOf(k: number, cap: number): Fn;
  loadV(k: number, out: Fn): void;
}

/**
 * Minimises a convex φ over [lo, b], evaluating it on [a, b] (a ≥ lo: φ may be inexact or
 * undefined below a). Derivative-free cutting planes: for a convex function, the line through
 * two evaluated points bounds it from below outside the pair, so around the best point the
 * lines of its neighbouring pairs give a lower bound; the next point is where those lines
 * meet (on a piecewise-linear φ that is the kink itself), or a step towards an end that has
 * only one line. Stops when the best value is within `relTol` of the lower bound. Returns
 * the best point, the gap and the number of evaluations.
 */
export function minimizeConvex(
  phi: (x: number) => number,
  lo: number,
  a: number,
  b: number,
  relTol = 1e-10,
): { x: number; gap: number; evals: number } {
  if (!(b > a)) return { x: a, gap: 0, evals: 0 };
  const xs = [a, (a + b) / 2, b];
  const fs = xs.map(phi);
  let evals = 3;
  const minStep = 1e-9 * (b - a);
  const line = (i: number, x: number) => fs[i] + ((fs[i + 1] - fs[i]) / (xs[i + 1] - xs[i])) * (x - xs[i]);
  let gap = Infinity;
  let best = 0;
  for (; evals < 64; evals++) {
    best = 0;
    for (let i = 1; i < xs.length; i++) if (fs[i] < fs[best]) best = i;
    const tol = relTol * Math.max(Math.abs(fs[best]), 1e-9);
    // lower bound and next point on each side of the best point
    let lower = Infinity;
    let next = NaN;
    for (const p of [best - 1, best]) {
      const pointAfter = p + 1;
      if (p < 0 || pointAfter >= xs.length) continue;
      const left = p >= 1; // the line of (p−1, p), valid right of p
      const right = pointAfter + 1 < xs.length; // the line of (q, q+1), valid left of q
      let lb: number;
      let probe: number;
      if (left && right) {
        const s1 = (fs[p] - fs[p - 1]) / (xs[p] - xs[p - 1]);
        const s2 = (fs[pointAfter + 1] - fs[pointAfter]) / (xs[pointAfter + 1] - xs[pointAfter]);
        probe = s2 > s1 ? (fs[pointAfter] - fs[p] + s1 * xs[p] - s2 * xs[pointAfter]) / (s1 - s2) : NaN;
        if (!(probe > xs[p] && probe < xs[pointAfter])) probe = (xs[p] + xs[pointAfter]) / 2;
        lb = Math.min(Math.max(line(p - 1, probe), line(pointAfter, probe)), fs[p], fs[pointAfter]);
      } else if (right) {
        // the left end: only the line of (q, q+1); when a is the best point it bounds [lo, a] as well
        lb = Math.min(
          line(pointAfter, best === 0 ? Math.min(xs[p], lo) : xs[p]),
          line(pointAfter, xs[p]),
          fs[pointAfter],
        );
        probe = xs[p] + (xs[pointAfter] - xs[p]) / 8;
      } else if (left) {
        lb = Math.min(line(p - 1, xs[pointAfter]), fs[p]);
        probe = xs[pointAfter] - (xs[pointAfter] - xs[p]) / 8;
      } else {
        lb = -Infinity;
        probe = (xs[p] + xs[pointAfter]) / 2;
      }
      if (lb < lower) {
        lower = lb;
        next = probe;
      }
    }
    gap = fs[best] - lower;
    if (gap <= tol) break;
    // a new point, not closer than minStep to one already evaluated
    let at = 0;
    while (at < xs.length && xs[at] < next) at++;
    if ((at > 0 && next - xs[at - 1] < minStep) || (at < xs.length && xs[at] - next < minStep)) break;
    xs.splice(at, 0, next);
    fs.splice(at, 0, phi(next));
  }
  return { x: xs[best], gap: Math.max(0, gap), evals };
}

/** The least of dt·F(δ) + U(base + sign·dt·δ) over δ (F: a slot model; U: a value function). */
function lineMin(
  sm: SlotModel,
  dt: number,
  u: Fn,
  base: number,
  sign: number,
  tolE: number,
  xs: Float64Array,
  fs: Float64Array,
): number {
  const toD = (x: number) => (sign * (x - base)) / dt;
  const deltaLo = Math.min(toD(u.lo), toD(u.hi));
  const deltaHi = Math.max(toD(u.lo), toD(u.hi));
  const lo = Math.max(sm.dL, deltaLo);
  const hi = Math.min(sm.dR, deltaHi);
  if (!(hi >= lo)) return Infinity;
  const at = (d: number) => dt * sm.cost(d) + u.value(base + sign * dt * d, tolE);
  let best = Math.min(at(lo), at(hi));
  const pointCount = sm.points(xs, fs, 1e-10);
  for (let j = 0; j < pointCount; j++) if (xs[j] > lo && xs[j] < hi) best = Math.min(best, at(xs[j]));
  for (let j = 0; j < u.n; j++) {
    const delta = toD(u.xs[j]);
    if (delta > lo && delta < hi) best = Math.min(best, at(delta));
  }
  return best;
}

/** Weights and slopes right of a cap (mu, slope: about −C′) and left of it (muL, slopeL). */
type Weights = { mu: Float64Array | null; slope: number; muL: Float64Array | null; slopeL: number };
const NONE: Weights = { mu: null, slope: 0, muL: null, slopeL: 0 };

/** Scratch of the marginal values (one search at a time: the planner is synchronous). */
class Marginals {
  private readonly fw: FnStore;
  private w = new Fn(256);
  private w2 = new Fn(256);
  private readonly psi = new Fn(64);
  private readonly view = new Fn(0);
  private readonly xs = new Float64Array(MAX_POINTS);
  private readonly fs = new Float64Array(MAX_POINTS);

  constructor(private readonly chain: PeakChain) {
    this.fw = new FnStore(chain.n + 1);
  }

  /**
   * Weights for the bound of peakSearch from the plan at cap P (e, runs; after solve(P, true)): each slot
   * whose import meets the cap gets its marginal value of the cap, scaled to sum to κ (docs/planner.md,
   * "The peak level"). Any weights ≥ 0 summing to at most κ give a valid bound; these make it tight.
   * `slope`: their sum (about −C′ right of P); mu null when no slot gains.
   */
  weights(kappa: number, P: number, e: Float64Array, runs: SlotRun[]): Weights {
    const { chain } = this;
    const { m } = chain;
    const slotCount = runs.length;
    const tight = (k: number) => runs[k].i >= P - 1e-9 * Math.max(1, P);
    let last = -1; // W_k is needed up to the last slot at the cap
    for (let k = 0; k < slotCount; k++) if (tight(k)) last = k;
    if (last < 0) return NONE;
    // forward values under the cap: W_{k+1} = W_k □ Ψ_k, Ψ_k(y) = Φ̃_k(−y), within the SOC bounds
    let forward = this.w;
    let w2 = this.w2;
    forward.reset(1);
    forward.push(m.e0, 0);
    this.fw.clear();
    this.fw.save(0, forward);
    chain.passes++; // a forward pass costs what a backward one does: it counts
    for (let k = 0; k < last; k++) {
      const phi = chain.phiOf(k, P);
      if (phi.n === 0) return NONE;
      const psi = this.psi;
      psi.reset(phi.n);
      for (let j = phi.n - 1; j >= 0; j--) psi.push(-phi.xs[j], phi.fs[j]);
      infConv(forward, psi, w2);
      if (!w2.clip(m.lb[k + 1], m.ub[k + 1], m.tolE)) return NONE;
      [forward, w2] = [w2, forward];
      this.fw.save(k + 1, forward);
    }
    this.w = forward;
    this.w2 = w2;
    // right of P: what a little more import gains (the better of the two sides taking it);
    // left of P: what a little less costs (the cheaper of the two sides giving it up)
    const gR = new Float64Array(slotCount);
    const gL = new Float64Array(slotCount);
    let sumR = 0;
    let sumL = 0;
    const eps = 1e-7 * Math.max(1, P);
    const view = this.view;
    for (let k = 0; k < slotCount; k++) {
      if (!tight(k)) continue;
      const dt = m.slots[k].dt;
      const sm = chain.model(k, P);
      const side = (u: Fn, base: number, sign: number): [number, number] => {
        const at = (cap: number) => {
          chain.model(k, cap);
          return lineMin(sm, dt, u, base, sign, m.tolE, this.xs, this.fs);
        };
        const atCap = at(P);
        const gainUp = (atCap - at(P + eps)) / eps;
        const costDown = (at(P - eps) - atCap) / eps;
        return [Number.isFinite(gainUp) ? gainUp : 0, Number.isFinite(costDown) ? costDown : Infinity];
      };
      chain.loadV(k + 1, view);
      const [rA, lA] = side(view, e[k], 1);
      this.fw.load(k, view);
      const [rB, lB] = side(view, e[k + 1], -1);
      chain.model(k, P);
      const gain = Math.max(rA, rB);
      const loss = Math.min(lA, lB);
      if (gain > 0) {
        gR[k] = gain;
        sumR += gain;
      }
      if (loss > 0 && Number.isFinite(loss)) {
        gL[k] = loss;
        sumL += loss;
      }
    }
    const scaled = (g: Float64Array, sum: number) => {
      if (!(sum > 0)) return null;
      const factor = (kappa * (1 - 1e-12)) / sum;
      for (let k = 0; k < slotCount; k++) g[k] *= factor;
      return g;
    };
    return { mu: scaled(gR, sumR), slope: sumR, muL: scaled(gL, sumL), slopeL: sumL };
  }
}

/**
 * The cap of least f(P) = C(P) + κ·max(P, floor) over [a, b] when C need not be convex (C nonincreasing,
 * +∞ where the DP finds no plan), by branch and bound on intervals of P closed by a monotone bound or a
 * Lagrangian one (one DP pass with each slot's import dearer above the interval's low end). Why both bounds
 * are valid, and the gap it certifies: docs/planner.md, "The peak level". At most 300 DP passes.
 */
export function peakSearch(
  chain: PeakChain,
  m: SiteModel,
  free: number,
  a: number,
  b: number,
  relTol = 1e-6,
): { x: number; gap: number; evals: number } {
  const kappa = m.peakCost;
  const floor = m.peakFloor;
  const phi = (P: number, c: number) => c + kappa * Math.max(P, floor);
  const start = chain.passes;
  const marginals = new Marginals(chain);
  const at = (P: number): Weights & { c: number } => {
    if (P >= b) return { c: free, ...NONE };
    const cost = chain.solve(P, true);
    if (!Number.isFinite(cost)) return { c: cost, ...NONE, slope: NaN };
    const { e, runs } = chain.plan(P);
    return { c: cost, ...marginals.weights(kappa, P, e, runs) };
  };
  const lagrange = (lo: number, hi: number, mu: Float64Array) => {
    const knee = Math.max(lo, floor);
    return kappa * knee + chain.solve(hi, false, { at: knee, mu });
  };
  // f under the lines of C's slopes at an interval's ends (a convex C's least on it; with kinks
  // inside the Lagrangian bound falls about as low): when that is below the best value less the
  // tolerance, the bound is not tried, the interval is split (only the order of work changes)
  const hull = (box: { lo: number; hi: number; clo: number; slo: number; chi: number; shi: number }) => {
    const l1 = (P: number) => box.clo - box.slo * (P - box.lo);
    const l2 = (P: number) => box.chi + box.shi * (box.hi - P);
    const hullAt = (P: number) => Math.max(l1(P), l2(P)) + kappa * Math.max(P, floor);
    let least = Math.min(hullAt(box.lo), hullAt(box.hi));
    const cross =
      box.slo > box.shi ? (box.clo - box.chi + box.slo * box.lo - box.shi * box.hi) / (box.slo - box.shi) : NaN;
    if (cross > box.lo && cross < box.hi) least = Math.min(least, hullAt(cross));
    if (floor > box.lo && floor < box.hi) least = Math.min(least, hullAt(floor));
    return least;
  };
  const atLow = at(a);
  const cb = free;
  let bestCap = phi(b, cb) <= phi(a, atLow.c) ? b : a;
  let best = Math.min(phi(a, atLow.c), phi(b, cb));
  // an interval: C and about −C′ at both ends, its bound, its weights for the Lagrangian bound, whether they were tried
  type Box = {
    lo: number;
    hi: number;
    clo: number;
    slo: number;
    chi: number;
    shi: number;
    bound: number;
    mu: Float64Array | null;
    tried: boolean;
  };
  const boxes: Box[] = [
    { lo: a, hi: b, clo: atLow.c, slo: atLow.slope, chi: cb, shi: 0, bound: phi(a, cb), mu: atLow.mu, tried: false },
  ];
  let dropped = Infinity;
  let gap = 0;
  while (boxes.length) {
    let lowest = 0;
    for (let i = 1; i < boxes.length; i++) if (boxes[i].bound < boxes[lowest].bound) lowest = i;
    const box = boxes[lowest];
    gap = best - Math.min(box.bound, dropped);
    // the tolerance: relTol of the best cost, of 1 (EUR) when it is smaller (it follows the best)
    const tol = relTol * Math.max(1, Math.abs(best));
    if (gap <= tol || chain.passes - start >= 300 || box.hi - box.lo <= 1e-12 * Math.max(1, b)) break;
    boxes.splice(lowest, 1);
    if (box.mu && !box.tried && !(hull(box) < best - tol)) {
      const lb = lagrange(box.lo, box.hi, box.mu);
      box.tried = true;
      if (lb > box.bound) box.bound = lb;
      if (box.bound < best - tol) boxes.push(box);
      else dropped = Math.min(dropped, box.bound);
      if (!boxes.length) gap = Math.max(0, best - dropped);
      continue;
    }
    // split where the lines of C's slopes at both ends meet (a kink of C there is its own
    // interval's end, so the Lagrangian bound fits both halves), else at the middle
    const width = box.hi - box.lo;
    let mid = (box.lo + box.hi) / 2;
    const s1 = -box.slo;
    const s2 = -box.shi;
    if (Number.isFinite(box.clo) && s2 > s1) {
      const cross = (box.chi - box.clo + s1 * box.lo - s2 * box.hi) / (s1 - s2);
      if (cross > box.lo + width / 64 && cross < box.hi - width / 64) mid = cross;
    }
    const atMid = at(mid);
    if (phi(mid, atMid.c) < best) {
      best = phi(mid, atMid.c);
      bestCap = mid;
    }
    const left = {
      lo: box.lo,
      hi: mid,
      clo: box.clo,
      slo: box.slo,
      chi: atMid.c,
      shi: atMid.slopeL,
      mu: atMid.muL ?? box.mu,
    };
    const right = { lo: mid, hi: box.hi, clo: atMid.c, slo: atMid.slope, chi: box.chi, shi: box.shi, mu: atMid.mu };
    for (const nb of [left, right]) {
      // a half's least is at least its parent's bound
      const bound = Math.max(box.bound, phi(nb.lo, nb.chi));
      if (bound < best - tol) boxes.push({ ...nb, bound, tried: false });
      else dropped = Math.min(dropped, bound);
    }
    if (!boxes.length) gap = Math.max(0, best - dropped);
  }
  return { x: bestCap, gap: Math.max(0, gap), evals: chain.passes - start };
}
