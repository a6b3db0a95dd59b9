/**
 * One slot of the site model as a function of the change of stored energy: the least cost
 * (per hour) of a slot whose battery stores δ kW (δ < 0: takes from the store), over every
 * way a real battery and a real meter can run it. Pure arithmetic, no I/O. The slot's equations,
 * and why F is exact at the points SlotModel evaluates, are written out above SlotModel.
 */

/** A slot of the model: length (h), prices per kWh, load, PV and grid limits in kW (Infinity: none). */
export interface SlotData {
  dt: number;
  pi: number;
  px: number;
  load: number;
  pv: number;
  imax: number;
  xmax: number;
}

/** The battery: power limits (kW, grid side), efficiencies (0, 1], wear per kWh of throughput. */
export interface BatteryData {
  C: number;
  D: number;
  etaC: number;
  etaD: number;
  wear: number;
  /** false: charge only from the slot's PV surplus (never from the grid). */
  gridCharge?: boolean;
  /** false: discharge at most the slot's load net of PV (never into the grid). */
  gridDischarge?: boolean;
}

/** How a slot runs at a given δ: cost per hour, battery (kW), PV curtailed, import, export (kW). */
export interface SlotRun {
  cost: number;
  c: number;
  d: number;
  u: number;
  i: number;
  x: number;
}

/** The most points F can have: 9 kinks (with a knee) and 5 crossings between each pair of them, rounded up. */
export const MAX_POINTS = 64;
const CAND = new Float64Array(8);

/** Sorts a[0 .. n − 1] in place (a dozen values at most). */
function sortInto(a: Float64Array, n: number): void {
  for (let i = 1; i < n; i++) {
    const value = a[i];
    let insertAt = i;
    for (; insertAt > 0 && a[insertAt - 1] > value; insertAt--) a[insertAt] = a[insertAt - 1];
    a[insertAt] = value;
  }
}

/** Appends where f (linear from f1 at x1 to f2 at x2) changes sign strictly inside (x1, x2); returns the new count. */
function addCrossing(xs: Float64Array, m: number, x1: number, x2: number, f1: number, f2: number, tol: number): number {
  if (!((f1 > 0 && f2 < 0) || (f1 < 0 && f2 > 0)) || m >= MAX_POINTS) return m;
  const crossing = x1 + ((x2 - x1) * f1) / (f1 - f2);
  if (crossing > x1 + tol && crossing < x2 - tol) xs[m++] = crossing;
  return m;
}

/**
 * The slot's cost F(δ) as a function of δ, the change of stored energy, for one import cap: piecewise
 * linear, not convex in general; exact at the kinks of the three meter options (at a, at b, at 0) and where
 * two options cross. The derivation: docs/planner.md, "One slot's cost".
 */
export class SlotModel {
  /** The import and export limits in force (kW, finite). */
  I = 0;
  X = 0;
  /** Domain of δ; empty when dL > dR. */
  dL = 0;
  dR = 0;
  /** The meter's choice and power of the last `grid` call. */
  private g = 0;
  /**
   * A dearer import above a level (the peak search's bound): import beyond `knee` kW costs
   * `kneePrice` more per kWh. Infinity: none. The price of g stays convex above 0, so the
   * meter's least is still at an end of its range, at 0 or at the knee.
   */
  knee = Infinity;
  kneePrice = 0;

  constructor(
    readonly s: SlotData,
    readonly b: BatteryData,
    cap = Infinity,
  ) {
    this.setCap(cap);
  }

  /** Sets the import cap (the peak level; Infinity: the slot's own limit). */
  setCap(cap: number): void {
    const { s, b } = this;
    // import never exceeds load + C, export never exceeds pv + D: finite limits that never bind
    this.I = Math.max(0, Math.min(s.imax, cap, s.load + b.C));
    this.X = Math.max(0, Math.min(s.xmax, s.pv + b.D));
    this.dL = Math.max(-b.D / b.etaD, this.loInv(-this.X - s.load));
    this.dR = Math.min(b.etaC * b.C, this.loInv(this.I - s.load + s.pv));
    if (b.gridCharge === false) this.dR = Math.min(this.dR, this.loInv(Math.max(0, s.pv - s.load)));
    if (b.gridDischarge === false) this.dL = Math.max(this.dL, this.loInv(-Math.max(0, s.load - s.pv)));
  }

  /** β(δ): the battery's grid side power. */
  lo(delta: number): number {
    return delta >= 0 ? delta / this.b.etaC : this.b.etaD * delta;
  }

  /** The δ at which β is v. */
  loInv(v: number): number {
    return v >= 0 ? this.b.etaC * v : v / this.b.etaD;
  }

  private price(g: number): number {
    return g >= 0 ? this.s.pi * g + (g > this.knee ? this.kneePrice * (g - this.knee) : 0) : this.s.px * g;
  }

  /**
   * The meter's least cost at battery power β (option −1: the least; 0: g = a, 1: g = 0, 2: g = b, 3: g = knee).
   * Ties go to the least curtailment. Sets `g`.
   */
  grid(beta: number, option = -1): number {
    const { s } = this;
    const netLoad = s.load - s.pv + beta;
    const gridLow = Math.max(netLoad, -this.X); // a in the comment on the class
    const gridHigh = Math.max(gridLow, Math.min(netLoad + s.pv, this.I)); // b
    const ca = this.price(gridLow);
    const cz = gridLow <= 0 && gridHigh >= 0 ? 0 : Infinity;
    const cb = this.price(gridHigh);
    const knee = this.knee;
    const ck = gridLow <= knee && gridHigh >= knee ? this.price(knee) : Infinity;
    if (option === 0) return ca;
    if (option === 1) return cz;
    if (option === 2) return cb;
    if (option === 3) return ck;
    let best = ca;
    this.g = gridLow;
    if (cz < best) {
      best = cz;
      this.g = 0;
    }
    if (cb < best) {
      best = cb;
      this.g = gridHigh;
    }
    if (ck < best) {
      best = ck;
      this.g = knee;
    }
    return best;
  }

  /** F(δ): the least cost per hour that stores δ (δ within the domain). */
  cost(delta: number): number {
    const beta = this.lo(delta);
    return this.grid(beta) + this.b.wear * Math.abs(beta);
  }

  /** The slot run at δ (clamped into the domain). */
  run(delta: number, out: SlotRun): SlotRun {
    const slot = this.s;
    const clamped = Math.min(this.dR, Math.max(this.dL, delta));
    const beta = this.lo(clamped);
    this.grid(beta);
    const gridKW = this.g;
    out.c = Math.max(0, beta);
    out.d = Math.max(0, -beta);
    out.u = Math.max(0, Math.min(slot.pv, gridKW - (slot.load - slot.pv + beta)));
    out.i = Math.max(0, gridKW);
    out.x = Math.max(0, -gridKW);
    out.cost = slot.pi * out.i - slot.px * out.x + this.b.wear * (out.c + out.d);
    return out;
  }

  /** The slot with the battery idle (c = d = 0), or null when the grid and PV cannot carry the load alone. */
  idle(out: SlotRun): SlotRun | null {
    if (this.dL > 1e-12 * Math.max(1, this.s.load) || this.dR < -1e-12 * Math.max(1, this.s.load)) return null;
    return this.run(0, out);
  }

  /**
   * F as points: the sorted breakpoints within [dL, dR] (both ends and 0 when inside) into xs
   * and F at each into fs; F is linear between them. Returns their number (0: empty domain).
   */
  points(xs: Float64Array, fs: Float64Array, tol: number): number {
    const { dL, dR, s } = this;
    if (dL > dR + tol) return 0;
    if (dL >= dR) {
      xs[0] = dL;
      fs[0] = this.cost(dL);
      return 1;
    }
    // the kinks: β = 0, and where n = load − pv + β meets −X (a), 0 (a and the zero option), I − pv (b), −pv (b and the zero option)
    const cand = CAND;
    const shift = s.pv - s.load;
    cand[0] = 0;
    cand[1] = this.loInv(-this.X + shift);
    cand[2] = this.loInv(shift);
    cand[3] = this.loInv(this.I - s.pv + shift);
    cand[4] = this.loInv(-s.pv + shift);
    // with a knee: where a and where b meet it
    const kneed = Number.isFinite(this.knee);
    if (kneed) {
      cand[5] = this.loInv(this.knee + shift);
      cand[6] = this.loInv(this.knee - s.pv + shift);
    }
    const candidateCount = kneed ? 7 : 5;
    sortInto(cand, candidateCount);
    let count = 0;
    xs[count++] = dL;
    for (let i = 0; i < candidateCount; i++) {
      const kink = cand[i];
      if (kink > xs[count - 1] + tol && kink < dR - tol) xs[count++] = kink;
    }
    xs[count++] = dR;
    // where two options cross between two kinks (each is linear there)
    const kinks = count;
    for (let j = 0; j + 1 < kinks; j++) {
      const x1 = xs[j];
      const x2 = xs[j + 1];
      const b1 = this.lo(x1);
      const b2 = this.lo(x2);
      // the zero option is 0 wherever it is open (checked at the middle: its range ends at kinks)
      const zero = Number.isFinite(this.grid(this.lo((x1 + x2) / 2), 1));
      const a1 = this.grid(b1, 0);
      const a2 = this.grid(b2, 0);
      const c1 = this.grid(b1, 2);
      const c2 = this.grid(b2, 2);
      count = addCrossing(xs, count, x1, x2, a1 - c1, a2 - c2, tol);
      if (zero) {
        count = addCrossing(xs, count, x1, x2, a1, a2, tol);
        count = addCrossing(xs, count, x1, x2, c1, c2, tol);
      }
      // the knee option is the constant price(knee) wherever it is open (its range ends at kinks too)
      const k0 = kneed ? this.grid(this.lo((x1 + x2) / 2), 3) : Infinity;
      if (Number.isFinite(k0)) {
        count = addCrossing(xs, count, x1, x2, a1 - k0, a2 - k0, tol);
        count = addCrossing(xs, count, x1, x2, c1 - k0, c2 - k0, tol);
      }
    }
    if (count > kinks) sortInto(xs, count);
    for (let j = 0; j < count; j++) fs[j] = this.cost(xs[j]);
    return count;
  }
}
