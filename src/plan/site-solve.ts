/**
 * The site planner's solver: the exact optimum of the site LP (site-plan.ts states the model)
 * by dynamic programming over stored energy with convex piecewise-linear value functions
 * (pwl.ts), and a one-dimensional convex search for the peak-import level. Pure: no I/O.
 *
 * For a fixed cap P on every slot's import, the LP is a chain: V_k(e), the least cost from
 * boundary k with e kWh stored, is V_k = V_{k+1} □ Φ̃_k restricted to the SOC bounds at k,
 * where Φ̃_k(y) = dt·F_k(−y/dt) is the slot's cost of a change of stored energy (slot-cost.ts).
 * Every V_k is convex piecewise linear and the infimal convolution of two such functions is
 * exact (merging their segments by slope), so V_0(e0) is the LP's optimum for that cap, not an
 * approximation; the forward pass takes, at each boundary, the split of e_k that the merge
 * makes (ties: the smaller move).
 *
 * The peak cost adds κ·P with P ≥ every import: φ(P) = V(P) + κ·P is convex in P (an LP's
 * value is convex in its right-hand side). P lies between the least feasible cap Pmin (found
 * by bisection on feasibility, which is exact interval propagation, O(slots) per test) and the
 * highest import of the uncapped optimum Ptop; φ is minimised there by cutting planes (the
 * tangents of a convex function bound it from below), to a certified gap: `gap` is the
 * distance between the plan's cost and the lower bound, at most 1e-9 of the objective's scale.
 */
import { Pwl, PwlStore, infConv, splitOf, splitRange, type Segments } from './pwl';
import { SlotModel, type BatteryData, type SlotData, type SlotRun } from './slot-cost';

export interface SiteModel {
  slots: SlotData[];
  battery: BatteryData;
  /** Stored energy now, kWh. */
  e0: number;
  /** Least and most stored energy at each boundary 1..n (index 0 unused), kWh. */
  lb: Float64Array;
  ub: Float64Array;
  /** Value of a kWh stored at the end (per kWh of stored energy). */
  endValue: number;
  /** Cost per kW of the highest import over the plan, and the least level it is charged at (kW). */
  peakCost: number;
  peakFloor: number;
  /** Rounding slack for stored energy, kWh. */
  tolE: number;
}

export interface SiteSolution {
  /** Stored energy at each boundary 0..n, kWh. */
  e: Float64Array;
  runs: SlotRun[];
  /** The import cap of the plan (kW; Infinity when none binds). */
  cap: number;
  /** Cost of the plan: Σ slot costs + peak cost − end value. */
  objective: number;
  /** DP passes made, and the certified distance to the optimum (0 without a peak cost). */
  passes: number;
  gap: number;
}

/** Where the model has no plan: a slot that cannot run at all, or a boundary the SOC cannot be kept within. */
export interface Infeasible {
  kind: 'slot' | 'bound';
  /** Slot index (kind slot) or boundary 1..n (kind bound). */
  k: number;
  /** The stored energy reachable at that boundary (kWh) before its bounds. */
  reach: [number, number];
}

/** Thrown by solveSite when the model has no plan; `why` says where. */
export class NoPlan extends Error {
  constructor(readonly why: Infeasible) {
    super(`no plan: ${why.kind} ${why.k}`);
    this.name = 'NoPlan';
  }
}

const MAX_POINTS = 32;
const DELTA_TOL = 1e-10;
/** Slopes (per kWh stored) this close count as a tie for the forward pass's preference (the cost moves by at most this × the capacity). */
const SLOPE_TIE = 1e-12;

/** The DP over one model, with per-slot caches; `solve` for a cap, `plan` for the forward pass. */
export class Chain {
  readonly n: number;
  private readonly base: SlotModel[];
  private readonly baseSegs: Segments[];
  private readonly capped: SlotModel[];
  private readonly scratch: Segments;
  private readonly xs = new Float64Array(MAX_POINTS);
  private readonly fs = new Float64Array(MAX_POINTS);
  private a = new Pwl(256);
  private b = new Pwl(256);
  private readonly view = new Pwl(0);
  private store: PwlStore;
  passes = 0;
  /** Whether the last solve met a SOC bound empty within rounding (its value is then approximate). */
  collapsed = false;

  constructor(readonly m: SiteModel) {
    this.n = m.slots.length;
    this.base = m.slots.map((s) => new SlotModel(s, m.battery));
    this.capped = m.slots.map((s) => new SlotModel(s, m.battery));
    this.baseSegs = this.base.map((sm, k) => this.segments(sm, m.slots[k].dt, newSegments()));
    this.scratch = newSegments();
    this.store = new PwlStore(this.n + 1);
  }

  /** The slot's model for a cap (the uncapped one when the cap cannot bind). */
  private modelFor(k: number, cap: number): SlotModel {
    const s = this.m.slots[k];
    if (!(Math.min(s.imax, s.load + this.m.battery.C) > cap)) return this.base[k];
    const sm = this.capped[k];
    sm.setCap(cap);
    return sm;
  }

  /** Φ̃ of a slot model into `out` (n = −1 when the slot cannot run). */
  private segments(sm: SlotModel, dt: number, out: Segments): Segments {
    const { xs, fs } = this;
    const m = sm.points(xs, fs, DELTA_TOL);
    if (m === 0) {
      out.n = -1;
      return out;
    }
    out.x0 = -xs[m - 1] * dt;
    out.f0 = fs[m - 1] * dt;
    out.n = m - 1;
    let prev = -Infinity;
    for (let j = 0; j < m - 1; j++) {
      const slope = Math.max(prev, (fs[j + 1] - fs[j]) / (xs[j + 1] - xs[j]));
      prev = slope;
      const r = m - 2 - j;
      out.len[r] = (xs[j + 1] - xs[j]) * dt;
      out.slope[r] = -slope;
      out.first[r] = xs[j] >= 0 ? 1 : 0; // a charging move: before equal slopes, so the move is the smaller
    }
    return out;
  }

  private segsFor(k: number, cap: number): Segments {
    const sm = this.modelFor(k, cap);
    return sm === this.base[k] ? this.baseSegs[k] : this.segments(sm, this.m.slots[k].dt, this.scratch);
  }

  /** V_0(e0) for an import cap (+∞ when infeasible); `keep` stores the value functions for `plan`. */
  solve(cap: number, keep = false): number {
    const { m, n } = this;
    this.passes++;
    this.collapsed = false;
    let v = this.a;
    let w = this.b;
    v.reset(1);
    if (m.lb[n] > m.ub[n] + m.tolE) return Infinity;
    v.x0 = m.lb[n];
    v.f0 = -m.endValue * (m.lb[n] - m.e0);
    v.push(m.ub[n] - m.lb[n], -m.endValue);
    for (let k = n - 1; k >= 0; k--) {
      const segs = this.segsFor(k, cap);
      if (segs.n < 0) return Infinity;
      if (keep) this.store.save(k + 1, v);
      infConv(v, segs, w);
      if (k >= 1 && !w.clip(m.lb[k], m.ub[k], m.tolE)) return Infinity;
      if (w.collapsed) this.collapsed = true;
      [v, w] = [w, v];
    }
    this.a = v;
    this.b = w;
    return v.value(m.e0, m.tolE);
  }

  /** The forward pass after solve(cap, true): stored energy and slot runs. */
  plan(cap: number): { e: Float64Array; runs: SlotRun[] } {
    const { m, n } = this;
    const e = new Float64Array(n + 1);
    e[0] = m.e0;
    const runs: SlotRun[] = [];
    const { etaC, etaD } = m.battery;
    for (let k = 0; k < n; k++) {
      const segs = this.segsFor(k, cap);
      this.store.load(k + 1, this.view);
      const s = m.slots[k];
      const y = segs.x0 + this.split(k, segs, e[k]);
      const run = this.modelFor(k, cap).run(-y / s.dt, { cost: 0, c: 0, d: 0, u: 0, i: 0, x: 0 });
      runs.push(run);
      const next = e[k] + s.dt * (etaC * run.c - run.d / etaD);
      // a bound met within rounding is the bound (10 %, not 9.999999999999 %)
      e[k + 1] = Math.abs(next - m.lb[k + 1]) <= m.tolE ? m.lb[k + 1] : Math.abs(next - m.ub[k + 1]) <= m.tolE ? m.ub[k + 1] : next;
    }
    return { e, runs };
  }

  /**
   * The split of e_k after solve(cap, true) (the view holds V_{k+1}): among the optimal moves of
   * stored energy, the one nearest self-consumption (the battery takes the forecast PV surplus
   * and covers the load, within its power: a plan that may store PV now or later stores it now,
   * and one that may cover load now or later covers it now), so a re-plan with other forecasts
   * finds the battery where the site's own control would have put it. Without PV and load that
   * move is 0: the smallest move, the split of the merge order.
   */
  private split(k: number, segs: Segments, ek: number): number {
    const s = this.m.slots[k];
    const { C, D, etaC, etaD } = this.m.battery;
    const net = Math.min(D, Math.max(-C, s.load - s.pv)); // grid side, + discharge
    const want = s.dt * (net < 0 ? net * etaC : net / etaD); // y: the energy taken from the store
    if (want === 0) return splitOf(this.view, segs, ek);
    const [lo, hi] = splitRange(this.view, segs, ek, SLOPE_TIE);
    return Math.min(hi, Math.max(lo, want - segs.x0));
  }

  /** The δ range of slot k under a cap (kW of stored power): the cap moves only its upper end. */
  range(k: number, cap: number): [number, number] {
    const sm = this.base[k];
    if (!(sm.I > cap)) return [sm.dL, sm.dR];
    const s = this.m.slots[k];
    const top = Math.max(0, cap) - s.load + s.pv;
    return [sm.dL, Math.min(this.m.battery.etaC * this.m.battery.C, sm.loInv(top))];
  }

  /**
   * Interval propagation from e0 (exact: each slot allows an interval of changes whatever the
   * SOC): the first slot or boundary with no plan under the cap, or null. `strict`: no slack.
   */
  infeasible(cap: number, strict = false): Infeasible | null {
    const { m, n } = this;
    const tolE = strict ? 0 : m.tolE;
    const tolD = strict ? 0 : DELTA_TOL;
    let lo = m.e0;
    let hi = m.e0;
    for (let k = 0; k < n; k++) {
      const [dL, dR] = this.range(k, cap);
      if (dL > dR + tolD) return { kind: 'slot', k, reach: [lo, hi] };
      const dt = m.slots[k].dt;
      lo += dt * dL;
      hi += dt * Math.max(dL, dR);
      const reach: [number, number] = [lo, hi];
      lo = Math.max(lo, m.lb[k + 1]);
      hi = Math.min(hi, m.ub[k + 1]);
      if (lo > hi + tolE) return { kind: 'bound', k: k + 1, reach };
      if (lo > hi) lo = hi = (lo + hi) / 2;
    }
    return null;
  }
}

function newSegments(): Segments {
  return { x0: 0, f0: 0, n: 0, len: new Float64Array(MAX_POINTS), slope: new Float64Array(MAX_POINTS), first: new Uint8Array(MAX_POINTS) };
}

/** The plan's cost from its runs: Σ dt × slot cost + κ × max(floor, highest import) − endValue × (e_n − e0). */
export function objectiveOf(m: SiteModel, e: Float64Array, runs: SlotRun[]): number {
  let cost = 0;
  let peak = m.peakFloor;
  runs.forEach((r, k) => {
    cost += m.slots[k].dt * r.cost;
    peak = Math.max(peak, r.i);
  });
  return cost + (m.peakCost > 0 ? m.peakCost * peak : 0) - m.endValue * (e[e.length - 1] - m.e0);
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
export function minimizeConvex(phi: (x: number) => number, lo: number, a: number, b: number, relTol = 1e-10): { x: number; gap: number; evals: number } {
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
      const q = p + 1;
      if (p < 0 || q >= xs.length) continue;
      const left = p >= 1; // the line of (p−1, p), valid right of p
      const right = q + 1 < xs.length; // the line of (q, q+1), valid left of q
      let lb: number;
      let x: number;
      if (left && right) {
        const s1 = (fs[p] - fs[p - 1]) / (xs[p] - xs[p - 1]);
        const s2 = (fs[q + 1] - fs[q]) / (xs[q + 1] - xs[q]);
        x = s2 > s1 ? (fs[q] - fs[p] + s1 * xs[p] - s2 * xs[q]) / (s1 - s2) : NaN;
        if (!(x > xs[p] && x < xs[q])) x = (xs[p] + xs[q]) / 2;
        lb = Math.min(Math.max(line(p - 1, x), line(q, x)), fs[p], fs[q]);
      } else if (right) {
        // the left end: only the line of (q, q+1); when a is the best point it bounds [lo, a] as well
        lb = Math.min(line(q, best === 0 ? Math.min(xs[p], lo) : xs[p]), line(q, xs[p]), fs[q]);
        x = xs[p] + (xs[q] - xs[p]) / 8;
      } else if (left) {
        lb = Math.min(line(p - 1, xs[q]), fs[p]);
        x = xs[q] - (xs[q] - xs[p]) / 8;
      } else {
        lb = -Infinity;
        x = (xs[p] + xs[q]) / 2;
      }
      if (lb < lower) {
        lower = lb;
        next = x;
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

/** The least cap (kW) with a plan, within [lo, hi] (hi has one), by bisection on exact feasibility (without slack, so it errs high). */
function leastCap(chain: Chain, lo: number, hi: number): number {
  if (chain.infeasible(lo, true) === null) return lo;
  for (let it = 0; it < 200 && hi - lo > 1e-12 * Math.max(1, hi); it++) {
    const mid = (lo + hi) / 2;
    if (chain.infeasible(mid, true) === null) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** Solves the model; throws NoPlan when it has none. */
export function solveSite(m: SiteModel): SiteSolution {
  const chain = new Chain(m);
  const why = chain.infeasible(Infinity);
  if (why) throw new NoPlan(why);
  // feasible by exact propagation, so only rounding could leave the DP without a plan
  const rounding = () => new NoPlan({ kind: 'bound', k: m.slots.length, reach: [m.e0, m.e0] });
  const free = chain.solve(Infinity, true);
  if (!Number.isFinite(free)) throw rounding();
  let { e, runs } = chain.plan(Infinity);
  let cap = Infinity;
  let gap = 0;
  if (m.peakCost > 0) {
    const top = runs.reduce((p, r) => Math.max(p, r.i), 0);
    if (top > m.peakFloor) {
      const least = Math.max(m.peakFloor, leastCap(chain, 0, top));
      const phi = (x: number) => chain.solve(x) + m.peakCost * Math.max(x, m.peakFloor);
      // the first point evaluated: a little above the least cap, where the DP has room (no SOC bound within rounding of empty)
      let first = least;
      for (let eps = 1e-9 * Math.max(1, top); first < top; eps *= 4) {
        chain.solve(first);
        if (!chain.collapsed) break;
        first = Math.min(top, least + eps);
      }
      const found = minimizeConvex(phi, least, first, top);
      gap = found.gap;
      if (found.x < top) {
        cap = found.x;
        if (!Number.isFinite(chain.solve(cap, true))) throw rounding();
        ({ e, runs } = chain.plan(cap));
      }
    }
  }
  return { e, runs, cap, objective: objectiveOf(m, e, runs), passes: chain.passes, gap };
}
