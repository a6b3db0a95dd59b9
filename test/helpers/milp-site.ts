/**
 * The site as a MILP, written from its physical description (not from the planner's code) and
 * solved by HiGHS (the `highs` package, WebAssembly): the test oracle for the site planner.
 *
 * Per slot k of dt hours (kW): charge c ∈ [0, C], discharge d ∈ [0, D], a binary b (1: the
 * battery may charge, 0: it may discharge) with c ≤ C·b and d ≤ D·(1 − b); PV used pv − u,
 * u ∈ [0, pv]; import i, export x with a binary g (1: the meter may import, 0: export):
 * i ≤ Mi·g, x ≤ Mx·(1 − g), where Mi and Mx are the limits, or the most either can be (load + C,
 * pv + D) when the site has none; pv − u + i + d = load + x + c; stored energy
 * e_{k+1} = e_k + dt·(ηc·c − d/ηd) within the SOC window (a SOC outside it may stay, not go
 * further), at least a target at its boundary and socEnd at the end; peak P ≥ i_k, P ≥ peak so
 * far. gridCharge false: c ≤ max(0, pv − load) (only the PV surplus charges); gridDischarge false:
 * d ≤ max(0, load − pv) (the battery only covers the load net of PV). A least SOC S before selling:
 * what the battery discharges beyond the load net of PV (its exported part) comes from above S,
 * e_k − S ≥ dt·(d − dself)/ηd with dself = min(D, max(0, load − pv)): a binary y per slot
 * (1: it may sell) with d ≤ dself + D·y and e_{k+1} ≥ S − dt·dself/ηd − cap·(1 − y).
 * Cost Σ dt·(pi·i − px·x + w·(c + d)) + κ·P − endValue·(e_n − e_0).
 */
import type { RawDay } from './site-days';

let solver: any;

export async function loadHighs(): Promise<void> {
  if (!solver) solver = await require('highs')();
}

const num = (v: number) => (Number.isInteger(v) ? String(v) : v.toPrecision(15));

/** A linear expression in LP format from terms (coefficient, variable). */
function expr(terms: Array<[number, string]>): string {
  let out = '';
  for (const [a, v] of terms) {
    if (a === 0) continue;
    out += `${a < 0 ? ' - ' : out ? ' + ' : ' '}${num(Math.abs(a))} ${v}`;
  }
  return out || ' 0 c0';
}

/** The day's LP text. */
export function milpText(d: RawDay): string {
  const slotCount = d.slots.length;
  const cap = d.capacityKWh;
  const e0 = (d.soc / 100) * cap;
  const obj: Array<[number, string]> = [];
  const rows: string[] = [];
  const bounds: string[] = [];
  const bins: string[] = [];
  const lo = Math.min((d.socMin / 100) * cap, e0);
  const hi = Math.max((d.socMax / 100) * cap, e0);
  d.slots.forEach((s, k) => {
    const imax = Math.min(s.imaxKW, d.importLimitKW);
    const xmax = d.exportLimitKW;
    const mi = Math.min(imax, s.loadKW + d.C);
    const mx = Math.min(xmax, s.pvKW + d.D);
    const cmax = d.gridCharge ? d.C : Math.min(d.C, Math.max(0, s.pvKW - s.loadKW));
    const dmax = d.gridDischarge ? d.D : Math.min(d.D, Math.max(0, s.loadKW - s.pvKW));
    bounds.push(
      `0 <= c${k} <= ${num(cmax)}`,
      `0 <= d${k} <= ${num(dmax)}`,
      `0 <= u${k} <= ${num(s.pvKW)}`,
      `0 <= i${k} <= ${num(mi)}`,
      `0 <= x${k} <= ${num(mx)}`,
    );
    bins.push(`b${k}`, `g${k}`);
    rows.push(
      `cb${k}:${expr([
        [1, `c${k}`],
        [-d.C, `b${k}`],
      ])} <= 0`,
    );
    rows.push(
      `db${k}:${expr([
        [1, `d${k}`],
        [d.D, `b${k}`],
      ])} <= ${num(d.D)}`,
    );
    rows.push(
      `ig${k}:${expr([
        [1, `i${k}`],
        [-mi, `g${k}`],
      ])} <= 0`,
    );
    rows.push(
      `xg${k}:${expr([
        [1, `x${k}`],
        [mx, `g${k}`],
      ])} <= ${num(mx)}`,
    );
    rows.push(
      `bal${k}:${expr([
        [-1, `u${k}`],
        [1, `i${k}`],
        [1, `d${k}`],
        [-1, `x${k}`],
        [-1, `c${k}`],
      ])} = ${num(s.loadKW - s.pvKW)}`,
    );
    // e_{k+1} − e_k − dt ηc c + dt/ηd d = 0 (e_0 a constant)
    const soc: Array<[number, string]> = [
      [1, `e${k + 1}`],
      [-s.dt * d.etaC, `c${k}`],
      [s.dt / d.etaD, `d${k}`],
    ];
    if (k > 0) soc.push([-1, `e${k}`]);
    rows.push(`soc${k}:${expr(soc)} = ${num(k === 0 ? e0 : 0)}`);
    if (d.sellSocMin !== undefined && d.gridDischarge) {
      const dself = Math.min(d.D, Math.max(0, s.loadKW - s.pvKW));
      const sellFloor = (d.sellSocMin / 100) * cap;
      bins.push(`y${k}`);
      rows.push(
        `sy${k}:${expr([
          [1, `d${k}`],
          [-d.D, `y${k}`],
        ])} <= ${num(dself)}`,
      );
      rows.push(
        `se${k}:${expr([
          [1, `e${k + 1}`],
          [-cap, `y${k}`],
        ])} >= ${num(sellFloor - (s.dt * dself) / d.etaD - cap)}`,
      );
    }
    if (d.peakCost > 0)
      rows.push(
        `pk${k}:${expr([
          [1, `i${k}`],
          [-1, 'P'],
        ])} <= 0`,
      );
    let lb = lo;
    for (const t of d.targets) if (t.boundary === k + 1) lb = Math.max(lb, (t.soc / 100) * cap);
    if (k + 1 === slotCount && d.socEnd !== undefined) lb = Math.max(lb, (d.socEnd / 100) * cap);
    bounds.push(`${num(lb)} <= e${k + 1} <= ${num(hi)}`);
    obj.push(
      [s.dt * s.pi, `i${k}`],
      [-s.dt * s.px, `x${k}`],
      [s.dt * d.cycleCost, `c${k}`],
      [s.dt * d.cycleCost, `d${k}`],
    );
  });
  if (d.peakCost > 0) {
    bounds.push(`P >= ${num(d.peakSoFarKW)}`);
    obj.push([d.peakCost, 'P']);
  }
  obj.push([-d.endValue, `e${slotCount}`]);
  return `Minimize\n obj:${expr(obj)}\nSubject To\n ${rows.join('\n ')}\nBounds\n ${bounds.join('\n ')}\nBinary\n ${bins.join(' ')}\nEnd\n`;
}

export interface MilpResult {
  status: 'optimal' | 'infeasible';
  /** Optimal cost, in the day's currency. */
  cost: number;
}

/** Solves the day's MILP to a relative gap of 1e-9. */
export function solveMilp(d: RawDay): MilpResult {
  const e0 = (d.soc / 100) * d.capacityKWh;
  const res = solver.solve(milpText(d), {
    mip_rel_gap: 1e-9,
    mip_abs_gap: 1e-10,
    primal_feasibility_tolerance: 1e-9,
    mip_feasibility_tolerance: 1e-9,
    presolve: 'on',
  });
  if (res.Status === 'Infeasible') return { status: 'infeasible', cost: NaN };
  if (res.Status !== 'Optimal') throw new Error(`HiGHS: ${res.Status} on seed ${d.seed}`);
  return { status: 'optimal', cost: res.ObjectiveValue + d.endValue * e0 };
}
