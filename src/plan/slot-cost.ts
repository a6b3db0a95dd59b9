/**
 * One slot of the site model as a function of the change of stored energy: the least cost
 * (per hour) of a slot whose battery stores δ kW (δ < 0: takes from the store), over every
 * way the slot can run (charge, discharge, curtailment, import, export) within its limits.
 * Pure arithmetic, no I/O.
 *
 * The slot (all kW, prices per kWh): charge c ∈ [0, C] and discharge d ∈ [0, D] grid side,
 * δ = ηc·c − d/ηd; PV used pv − u with curtailment u ∈ [0, pv]; import i ∈ [0, I], export
 * x ∈ [0, X]; balance pv − u + i + d = load + x + c; cost pi·i − px·x + w·(c + d), pi ≥ px.
 * This is the slot's LP with δ as a parameter, so its value F(δ) is convex piecewise linear.
 *
 * How F is computed, exactly: with β = c − d (battery, grid side, + charging) the grid's part
 * is Gb(β) = min over u, i, x (convex piecewise linear, at most three pieces: export at px,
 * curtailment at 0, import at pi); for a given δ, β may be anything in [βLo(δ), βHi(δ)]:
 * βLo is the pure move (charge δ/ηc or discharge ηd·δ), anything above charges and discharges
 * at once (losing energy at a wear cost of ρ per kW of β, ρ = w(1+η)/(1−η), η = ηc·ηd). So
 * F(δ) = Gb(β) + w(c + d) at β = clamp(β*, window), β* the least minimiser of Gb(β) + ρβ.
 * F is linear between the points where the window's ends cross a breakpoint of Gb, β*, or a
 * limit; those points (and δ = 0) are the candidates, and F is evaluated exactly at each.
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

/** Scratch for the candidate breakpoints of one slot (at most 4 + 2 × 5). */
const CAND = new Float64Array(16);

/** Round trips within this of 1 are lossless (no energy can be lost by charging and discharging at once). */
const LOSSLESS = 1e-12;

/** The slot's grid function Gb(β) and what F needs of it, for one import cap. */
export class SlotModel {
  readonly eta: number;
  readonly rho: number;
  /** Gb: left end bMin, value there, up to three segments (length, slope), and the right end bMax. */
  bMin = 0;
  bMax = 0;
  g0 = 0;
  gn = 0;
  gLen = new Float64Array(3);
  gSlope = new Float64Array(3);
  /** The least minimiser of Gb(β) + ρβ. */
  bStar = 0;
  /** The import and export limits in force (kW, finite). */
  I = 0;
  X = 0;
  /** Domain of δ; empty when dL > dR. */
  dL = 0;
  dR = 0;

  constructor(readonly s: SlotData, readonly b: BatteryData, cap = Infinity) {
    this.eta = b.etaC * b.etaD;
    this.rho = this.eta < 1 - LOSSLESS ? (b.wear * (1 + this.eta)) / (1 - this.eta) : 0;
    this.setCap(cap);
  }

  /** Rebuilds Gb and the domain for an import cap (the peak level; Infinity: the slot's own limit). */
  setCap(cap: number): void {
    const { s, b } = this;
    // import never exceeds load + C, export never exceeds pv + D: finite limits that never bind
    const I = (this.I = Math.max(0, Math.min(s.imax, cap, s.load + b.C)));
    const X = (this.X = Math.max(0, Math.min(s.xmax, s.pv + b.D)));
    // Gb's segments sorted by slope (at most three: export at px, curtailment at 0, import at pi)
    this.gn = 0;
    this.addGrid(X, s.px);
    this.addGrid(s.pv, 0);
    this.addGrid(I, s.pi);
    this.bMin = -X - s.load;
    this.bMax = I - s.load + s.pv;
    this.g0 = -s.px * X;
    let pos = this.bMin;
    this.bStar = this.bMax;
    for (let j = 0; j < this.gn; j++) {
      if (this.gSlope[j] + this.rho >= 0) { this.bStar = pos; break; }
      pos += this.gLen[j];
    }
    const { C, D, etaC, etaD } = b;
    this.dL = Math.max(-D / etaD, this.hiInv(this.bMin));
    this.dR = Math.min(etaC * C, this.loInv(this.bMax));
  }

  /** Inserts a segment of Gb in slope order. */
  private addGrid(len: number, slope: number): void {
    if (!(len > 0)) return;
    let j = this.gn++;
    for (; j > 0 && this.gSlope[j - 1] > slope; j--) {
      this.gLen[j] = this.gLen[j - 1];
      this.gSlope[j] = this.gSlope[j - 1];
    }
    this.gLen[j] = len;
    this.gSlope[j] = slope;
  }

  /** Gb(β) for β within [bMin, bMax] (clamped onto it). */
  grid(beta: number): number {
    let t = beta - this.bMin;
    let f = this.g0;
    for (let j = 0; j < this.gn && t > 0; j++) {
      const step = Math.min(t, this.gLen[j]);
      f += step * this.gSlope[j];
      t -= step;
    }
    return f;
  }

  /** βLo(δ): the pure move's battery power. */
  lo(delta: number): number {
    return delta >= 0 ? delta / this.b.etaC : this.b.etaD * delta;
  }

  /** βHi(δ): the most battery power that stores δ (charging and discharging at once up to the limits). */
  hi(delta: number): number {
    const { C, D, etaC, etaD } = this.b;
    if (this.eta >= 1 - LOSSLESS) return this.lo(delta);
    return delta <= etaC * C - D / etaD ? ((1 - this.eta) * D) / this.eta + delta / etaC : (1 - this.eta) * C + etaD * delta;
  }

  /** The δ at which βLo is v. */
  loInv(v: number): number {
    return v >= 0 ? this.b.etaC * v : v / this.b.etaD;
  }

  /** The δ at which βHi is v. */
  hiInv(v: number): number {
    const { C, D, etaC, etaD } = this.b;
    if (this.eta >= 1 - LOSSLESS) return this.loInv(v);
    return v <= C - D ? etaC * (v - ((1 - this.eta) * D) / this.eta) : (v - (1 - this.eta) * C) / etaD;
  }

  /** Battery at δ (within the domain): β and the charge and discharge (kW) that store δ with the least loss. */
  private move(delta: number): void {
    const { C, D, etaC, etaD } = this.b;
    const cLo = Math.max(0, delta / etaC);
    const lo = this.lo(delta);
    let c = cLo;
    let beta = lo;
    if (this.eta < 1 - LOSSLESS && (this.bStar > lo || this.bMin > lo)) {
      const cHi = Math.min(C, (D / etaD + delta) / etaC);
      const hi = this.hi(delta);
      beta = Math.min(Math.max(this.bStar, this.bMin, lo), Math.min(hi, this.bMax));
      c = beta >= hi ? cHi : Math.min(cHi, Math.max(cLo, (beta - etaD * delta) / (1 - this.eta)));
    }
    this.mBeta = beta;
    this.mC = c;
    this.mD = Math.max(0, Math.min(D, etaD * (etaC * c - delta)));
  }

  private mBeta = 0;
  private mC = 0;
  private mD = 0;

  /** F(δ): the least cost per hour that stores δ (δ within the domain). */
  cost(delta: number): number {
    this.move(delta);
    return this.grid(this.mBeta) + this.b.wear * (this.mC + this.mD);
  }

  /** The slot run at δ (clamped into the domain), with the least charging-and-discharging-at-once and curtailment. */
  run(delta: number, out: SlotRun): SlotRun {
    const s = this.s;
    this.move(Math.min(this.dR, Math.max(this.dL, delta)));
    const c = this.mC;
    const d = this.mD;
    // the grid: net demand before curtailment, then the cheapest curtailment within [0, pv]
    const n = s.load - s.pv + c - d;
    const gLo = Math.max(n, -this.X);
    const gHi = Math.min(n + s.pv, this.I);
    let g: number;
    if (s.px >= 0) g = gLo; // export pays (or is free): curtail only for the export limit
    else if (s.pi >= 0) g = Math.min(gHi, Math.max(gLo, 0)); // export costs: curtail down to no export
    else g = gHi; // import pays: curtail all PV that import can replace
    if (gHi < gLo) g = gLo;
    out.c = c;
    out.d = d;
    out.u = Math.max(0, Math.min(s.pv, g - n));
    out.i = Math.max(0, g);
    out.x = Math.max(0, -g);
    out.cost = s.pi * out.i - s.px * out.x + this.b.wear * (c + d);
    return out;
  }

  /** The slot with the battery idle (c = d = 0), or null when the grid and PV cannot carry the load alone. */
  idle(out: SlotRun): SlotRun | null {
    const s = this.s;
    const n = s.load - s.pv;
    if (n > this.I + 1e-12 * Math.max(1, s.load)) return null;
    const gLo = Math.max(n, -this.X);
    const gHi = Math.min(n + s.pv, this.I);
    const g = s.px >= 0 ? gLo : s.pi >= 0 ? Math.min(gHi, Math.max(gLo, 0)) : gHi;
    out.c = 0;
    out.d = 0;
    out.u = Math.max(0, Math.min(s.pv, g - n));
    out.i = Math.max(0, g);
    out.x = Math.max(0, -g);
    out.cost = s.pi * out.i - s.px * out.x;
    return out;
  }

  /**
   * F as points: the sorted candidate breakpoints within [dL, dR] (both ends and 0 when
   * inside) into xs and F at each into fs; returns their number (0 when the domain is empty).
   */
  points(xs: Float64Array, fs: Float64Array, tol: number): number {
    const { dL, dR } = this;
    if (dL > dR + tol) return 0;
    if (dL >= dR) {
      xs[0] = dL;
      fs[0] = this.cost(dL);
      return 1;
    }
    const cand = CAND;
    let nc = 0;
    cand[nc++] = dL;
    cand[nc++] = dR;
    cand[nc++] = 0;
    cand[nc++] = this.b.etaC * this.b.C - this.b.D / this.b.etaD;
    // where βLo or βHi crosses an end of Gb's domain, β* or a breakpoint of Gb
    let pos = this.bMin;
    for (let j = -2; j < this.gn; j++) {
      const v = j === -2 ? this.bMax : j === -1 ? this.bStar : pos;
      if (j >= 0) pos += this.gLen[j];
      cand[nc++] = this.loInv(v);
      cand[nc++] = this.hiInv(v);
    }
    // insertion sort (a dozen or so values)
    for (let i = 1; i < nc; i++) {
      const v = cand[i];
      let j = i;
      for (; j > 0 && cand[j - 1] > v; j--) cand[j] = cand[j - 1];
      cand[j] = v;
    }
    let m = 0;
    for (let i = 0; i < nc; i++) {
      const x = cand[i];
      if (x < dL || x > dR) continue;
      if (m > 0 && x - xs[m - 1] <= tol) {
        if (x === 0) xs[m - 1] = 0; // keep 0 itself (the tie rule splits the moves there)
        continue;
      }
      xs[m++] = x;
    }
    if (xs[m - 1] < dR) {
      if (dR - xs[m - 1] <= tol) xs[m - 1] = dR;
      else xs[m++] = dR;
    }
    for (let j = 0; j < m; j++) fs[j] = this.cost(xs[j]);
    return m;
  }
}
