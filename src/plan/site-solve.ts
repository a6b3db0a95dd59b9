/**
 * The site planner's solver: the exact optimum of the site model (site-plan.ts states it),
 * whose battery charges or discharges and whose meter imports or exports, never both at once.
 * Pure: no I/O. The method is written out above solveSite.
 */
import { Fn, FnStore, infConv, lowerEnvelope, restricted } from './pwl';
import { minimizeConvex, peakSearch, type PeakChain } from './peak-search';
import { MAX_POINTS, SlotModel, type SlotRun } from './slot-cost';
import type { SiteModel } from './site-model';

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

const DELTA_TOL = 1e-10;

/** The DP over one model, with per-slot caches; `solve` for a cap, `plan` for the forward pass. */
class Chain implements PeakChain {
  readonly n: number;
  private readonly base: Fn[];
  private readonly capped: SlotModel[];
  private readonly scratch = new Fn(MAX_POINTS);
  private readonly xs = new Float64Array(MAX_POINTS);
  private readonly fs = new Float64Array(MAX_POINTS);
  private a = new Fn(256);
  private b = new Fn(256);
  private readonly view = new Fn(0);
  private readonly store: FnStore;
  passes = 0;

  constructor(readonly m: SiteModel) {
    this.n = m.slots.length;
    this.capped = m.slots.map((s) => new SlotModel(s, m.battery));
    this.base = this.capped.map((sm, k) => this.phi(sm, m.slots[k].dt, new Fn(MAX_POINTS)));
    this.store = new FnStore(this.n + 1);
  }

  /** The slot's model under a cap. */
  model(k: number, cap: number): SlotModel {
    const sm = this.capped[k];
    sm.setCap(cap);
    return sm;
  }

  /** Φ̃(y) = dt·F(−y/dt) of a slot model into `out` (n = 0 when the slot cannot run). */
  private phi(sm: SlotModel, dt: number, out: Fn): Fn {
    const pointCount = sm.points(this.xs, this.fs, DELTA_TOL);
    out.reset(pointCount);
    for (let j = pointCount - 1; j >= 0; j--) out.push(-this.xs[j] * dt, this.fs[j] * dt);
    return out;
  }

  private phiFor(k: number, cap: number): Fn {
    const slot = this.m.slots[k];
    if (!(Math.min(slot.imax, slot.load + this.m.battery.C) > cap)) return this.base[k];
    return this.phi(this.model(k, cap), slot.dt, this.scratch);
  }

  /** Φ̃ of slot k under a cap with a knee: import above `at` costs `mu` (per kW, over the slot) more. */
  private phiKnee(k: number, cap: number, at: number, mu: number): Fn {
    const sm = this.model(k, cap);
    const dt = this.m.slots[k].dt;
    sm.knee = at;
    sm.kneePrice = mu / dt;
    const out = this.phi(sm, dt, this.scratch);
    sm.knee = Infinity;
    sm.kneePrice = 0;
    return out;
  }

  /**
   * V_0(e0) for an import cap (+∞ when infeasible); `keep` stores the value functions for `plan`.
   * `knee`: each slot k also pays mu[k]·(import − at)⁺ (the peak search's bound).
   */
  solve(cap: number, keep = false, knee?: { at: number; mu: Float64Array }): number {
    const { m, n } = this;
    this.passes++;
    let valueFn = this.a;
    let spareFn = this.b;
    if (m.lb[n] > m.ub[n] + m.tolE) return Infinity;
    if (keep) this.store.clear();
    valueFn.reset(2);
    valueFn.push(m.lb[n], -m.endValue * (m.lb[n] - m.e0));
    valueFn.push(m.ub[n], -m.endValue * (m.ub[n] - m.e0));
    for (let k = n - 1; k >= 0; k--) {
      const phi = knee && knee.mu[k] > 0 ? this.phiKnee(k, cap, knee.at, knee.mu[k]) : this.phiFor(k, cap);
      if (phi.n === 0) return Infinity;
      if (keep) this.store.save(k + 1, valueFn);
      if (!this.sellRule(k, valueFn, phi, spareFn)) infConv(valueFn, phi, spareFn);
      if (k >= 1 && !spareFn.clip(m.lb[k], m.ub[k], m.tolE)) return Infinity;
      [valueFn, spareFn] = [spareFn, valueFn];
    }
    this.a = valueFn;
    this.b = spareFn;
    return valueFn.value(m.e0, m.tolE);
  }

  private readonly sellParts = [new Fn(), new Fn(), new Fn(), new Fn(), new Fn()];

  /** δ below which slot k's battery sells (discharges beyond the load net of PV), or undefined without the rule there. */
  selfFloor(k: number, sm: SlotModel): number | undefined {
    const slot = this.m.slots[k];
    if (this.m.sellMin === undefined) return undefined;
    const floor = sm.loInv(-Math.max(0, slot.load - slot.pv));
    return sm.dL < floor ? floor : undefined;
  }

  /**
   * The least SOC before selling: w = min(V □ Φ on moves that only serve the load, V on
   * [sellMin + dt·floor, …] □ Φ on moves that sell), exact (a selling move must leave the store
   * at least at sellMin less the load's part). Returns false when the rule does not apply.
   */
  private sellRule(k: number, v: Fn, phi: Fn, w: Fn): boolean {
    const slot = this.m.slots[k];
    const floor = this.selfFloor(k, this.capped[k]);
    if (floor === undefined) return false;
    const [self, sell, vSell, a, b] = this.sellParts;
    const splitY = -floor * slot.dt; // Φ's variable: y = −dt·δ
    restricted(phi, -Infinity, splitY, self);
    restricted(phi, splitY, Infinity, sell);
    restricted(v, (this.m.sellMin as number) + slot.dt * floor, Infinity, vSell);
    if (self.n === 0) return false;
    infConv(v, self, a);
    if (sell.n === 0 || vSell.n === 0) {
      w.copyFrom(a);
      return true;
    }
    infConv(vSell, sell, b);
    lowerEnvelope(a, b, w);
    return true;
  }

  /** The forward pass after solve(cap, true): stored energy and slot runs. */
  plan(cap: number): { e: Float64Array; runs: SlotRun[] } {
    const { m, n } = this;
    const stored = new Float64Array(n + 1);
    stored[0] = m.e0;
    const runs: SlotRun[] = [];
    const { etaC, etaD } = m.battery;
    for (let k = 0; k < n; k++) {
      const slot = m.slots[k];
      this.store.load(k + 1, this.view);
      const sm = this.model(k, cap);
      const delta = this.move(k, sm, stored[k]);
      const run = sm.run(delta, { cost: 0, c: 0, d: 0, u: 0, i: 0, x: 0 });
      runs.push(run);
      const next = stored[k] + slot.dt * (etaC * run.c - run.d / etaD);
      // a bound met within rounding is the bound (10 %, not 9.999999999999 %)
      stored[k + 1] =
        Math.abs(next - m.lb[k + 1]) <= m.tolE
          ? m.lb[k + 1]
          : Math.abs(next - m.ub[k + 1]) <= m.tolE
            ? m.ub[k + 1]
            : next;
    }
    return { e: stored, runs };
  }

  /**
   * The move (δ, kW stored) of slot k from e_k that attains V_k(e_k), the view holding V_{k+1}.
   * Among optimal moves, the one nearest self-consumption (the battery takes the forecast PV
   * surplus and covers the load, within its power), so a re-plan with other forecasts finds the
   * battery where the site's own control would have put it; without PV and load, the smallest.
   */
  private move(k: number, sm: SlotModel, ek: number): number {
    const slot = this.m.slots[k];
    const { C, D, etaC, etaD } = this.m.battery;
    const view = this.view;
    const tolE = this.m.tolE;
    const lo = Math.max(sm.dL, (view.lo - ek) / slot.dt);
    const hi = Math.max(lo, Math.min(sm.dR, (view.hi - ek) / slot.dt));
    const floor = this.selfFloor(k, sm);
    const sellFrom = floor === undefined ? -Infinity : (this.m.sellMin as number) + slot.dt * floor;
    const allowed = (d: number) => floor === undefined || d >= floor || ek + slot.dt * d >= sellFrom - tolE;
    const total = (d: number) => (allowed(d) ? slot.dt * sm.cost(d) + view.value(ek + slot.dt * d, tolE) : Infinity);
    const cands: number[] = [lo, hi];
    if (floor !== undefined) {
      for (const d of [floor, (sellFrom - ek) / slot.dt]) if (d > lo && d < hi) cands.push(d);
    }
    const pointCount = sm.points(this.xs, this.fs, DELTA_TOL);
    for (let j = 0; j < pointCount; j++) if (this.xs[j] > lo && this.xs[j] < hi) cands.push(this.xs[j]);
    for (let j = 0; j < view.n; j++) {
      const delta = (view.xs[j] - ek) / slot.dt;
      if (delta > lo && delta < hi) cands.push(delta);
    }
    let best = Infinity;
    const vals = cands.map((d) => {
      const cost = total(d);
      if (cost < best) best = cost;
      return cost;
    });
    const tol = 1e-11 * Math.max(1, Math.abs(best));
    const net = Math.min(D, Math.max(-C, slot.load - slot.pv)); // grid side, + discharge
    const want = Math.min(hi, Math.max(lo, net < 0 ? -net * etaC : -net / etaD));
    if (total(want) <= best + tol) return want;
    let pick = NaN;
    cands.forEach((d, j) => {
      if (vals[j] <= best + tol && !(Math.abs(d - want) >= Math.abs(pick - want))) pick = d;
    });
    return pick;
  }

  /** Φ̃ of slot k under a cap (valid until the next call; n = 0 when the slot cannot run). */
  phiOf(k: number, cap: number): Fn {
    return this.phiFor(k, cap);
  }

  /** After solve(·, true): V_k into `out` (a view on the store: read it, do not grow it). */
  loadV(k: number, out: Fn): void {
    this.store.load(k, out);
  }

  /** The δ range of slot k under a cap (kW of stored power). */
  range(k: number, cap: number): [number, number] {
    const sm = this.model(k, cap);
    return [sm.dL, sm.dR];
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
      // the least SOC before selling: below it, a move down only serves the load (at lo: the lowest reachable)
      const floor = this.selfFloor(k, this.capped[k]);
      lo =
        floor === undefined
          ? lo + dt * dL
          : Math.max(
              lo + dt * dL,
              Math.min(lo + dt * floor, Math.max(lo + dt * dL, (m.sellMin as number) + dt * floor)),
            );
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

/** The plan's cost from its runs: Σ dt × slot cost + κ × max(floor, highest import) − endValue × (e_n − e0). */
function objectiveOf(m: SiteModel, e: Float64Array, runs: SlotRun[]): number {
  let cost = 0;
  let peak = m.peakFloor;
  runs.forEach((r, k) => {
    cost += m.slots[k].dt * r.cost;
    peak = Math.max(peak, r.i);
  });
  return cost + (m.peakCost > 0 ? m.peakCost * peak : 0) - m.endValue * (e[e.length - 1] - m.e0);
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

/**
 * Whether C(P) is convex: when in every slot the export price is at most the import price and
 * no price is below −ρ = −w(1+η)/(1−η) (the price at which losing energy by charging and
 * discharging at once would pay) and no least SOC before selling, the never-both rules bind
 * nowhere, so the model is its LP relaxation in (moves, P) together, whose value is convex in P.
 */
function convexInCap(m: SiteModel): boolean {
  const { etaC, etaD, wear } = m.battery;
  const eta = etaC * etaD;
  const rho = eta >= 1 - 1e-12 ? Infinity : (wear * (1 + eta)) / (1 - eta);
  return m.sellMin === undefined && m.slots.every((s) => s.px <= s.pi && Math.min(s.px, s.pi) >= -rho);
}

/**
 * Solves the model; throws NoPlan when it has none. For one cap on the imports the model is a chain of exact
 * piecewise-linear value functions (pwl.ts); the cap itself is found by cutting planes where the never-both
 * rules bind nowhere, else by branch and bound (peak-search.ts). Why it is exact: docs/planner.md, "The chain
 * for one cap" and "The peak level". `gap` is the certified distance to the optimum.
 */
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
      let least = Math.max(m.peakFloor, leastCap(chain, 0, top));
      // a little above the least cap where rounding leaves the DP without room
      for (let eps = 1e-9 * Math.max(1, top); least < top && !Number.isFinite(chain.solve(least)); eps *= 4)
        least = Math.min(top, least + eps);
      const costAt = (P: number) => (P >= top ? free : chain.solve(P));
      const found = convexInCap(m)
        ? minimizeConvex((P) => costAt(P) + m.peakCost * Math.max(P, m.peakFloor), least, least, top)
        : peakSearch(chain, m, free, least, top);
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
