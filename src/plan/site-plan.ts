/**
 * Site plan: the battery schedule of least cost for a site with PV, load, import and export
 * prices and grid limits (planSite; the model is written out above it). Pure: no I/O, no clock,
 * no Node-RED. The solver is site-solve.ts; battery-plan.ts routes between this and price-plan.ts.
 */
import { ValidationError } from '../protocol';
import type { EpochMs } from '../protocol';
import { reasons } from './plan-why';
import { parseSiteInput, type SiteInput, type SitePlanInput } from './site-input';
import { NoPlan, solveSite, type Infeasible, type SiteSolution } from './site-solve';
import { SlotModel, type SlotRun } from './slot-cost';

/** One slot of the site plan; `start`, `end` and `energyStorage` are a slot of the `ems-schedule` node. */
export interface SitePlanSlot {
  start: EpochMs;
  end: EpochMs;
  /** Battery power, grid side: positive = discharge, negative = charge (a slot never does both). */
  energyStorage: { value: number; unit: 'kW' };
  /** The import price per kWh (as `price` of the price-only plan), and both prices after the formulas. */
  price: number;
  importPrice: number;
  exportPrice: number;
  /** Battery energy to the grid over the slot, kWh (positive = discharged). */
  energyKWh: number;
  /** SOC (%) at the slot's start and end. */
  socStart: number;
  socEnd: number;
  chargeKW: number;
  dischargeKW: number;
  /** Grid power: positive = import, negative = export; and each direction. */
  gridKW: number;
  importKW: number;
  exportKW: number;
  /** The forecasts (kW) and the PV the plan curtails. */
  pvKW: number;
  loadKW: number;
  curtailKW: number;
  /** The slot's cost: import cost − export revenue + wear (the peak cost is the plan's). */
  cost: number;
  why: string;
  /**
   * Whether the battery just follows the forecast PV and load in this slot (self-consumption: it
   * takes the surplus and covers the load within its power and SOC window; no charging from the
   * grid, no discharging to it, nothing held back). Only with a PV or load forecast; ems-plan with
   * `idle: self-consumption` leaves such slots to the site's own control (no setpoint).
   */
  selfConsumption: boolean;
}

export interface SitePlan {
  model: 'site';
  slots: SitePlanSlot[];
  /** The planned SOC curve: the first slot's start, every slot's end, and the start of a slot after a gap. */
  soc: { time: EpochMs; soc: number }[];
  /** The objective and its parts, in the prices' currency: total = import − export + wear + peak − endValue. */
  cost: { total: number; import: number; export: number; wear: number; peak: number; endValue: number };
  /** What the battery saves against leaving it idle (total cost idle − total cost), or null when idle is no plan (a target, a limit). */
  value: number | null;
  /** The highest import of the plan (at least site.peakSoFarW), kW. */
  peakImportKW: number;
  priceUnit: 'kWh';
  currency?: string;
  chargedKWh: number;
  dischargedKWh: number;
  /** The targets in force (targets before the plan's start are passed) and the boundary each applies at. */
  targets: Array<{ soc: number; time: EpochMs; at: EpochMs }>;
  /** How it was solved: exact DP on the real battery and meter, DP passes, and the certified distance of `cost.total` to the optimum (0 but for the peak search). */
  solver: { method: 'dp'; passes: number; gap: number };
}

const pct = (v: number) => Math.round(v * 100) / 100;

/** A refusal naming the field at fault when the model has no plan. */
function refusal(inp: SiteInput, why: Infeasible): ValidationError {
  const { model: m } = inp;
  const cap = inp.capacityKWh;
  const socOf = (kWh: number) => pct((kWh / cap) * 100);
  if (why.kind === 'slot') {
    const slotIndex = why.k;
    const slot = m.slots[slotIndex];
    const inputIndex = inp.index[slotIndex];
    const supply = `at most ${pct(slot.imax)} kW import + ${pct(slot.pv)} kW PV + ${pct(m.battery.D)} kW from the battery`;
    if (inp.given.load)
      return new ValidationError(
        `loadForecast[${inputIndex}]`,
        `cannot be met in that slot: ${supply} (gridImportMax, site.importLimitW, battery.maxDischargeKW); got ${pct(slot.load * 1000)}`,
        'unprocessable',
      );
    return new ValidationError(
      `gridImportMax[${inputIndex}]`,
      `leaves no plan for that slot (${supply}); got ${pct(slot.imax * 1000)}`,
      'unprocessable',
    );
  }
  const boundary = why.k;
  const [lo, hi] = why.reach;
  if (hi < m.lb[boundary]) {
    const target = inp.targets.find(
      (t) => t.boundary === boundary && Math.abs((t.soc / 100) * cap - m.lb[boundary]) <= 1e-9 * cap,
    );
    const at = new Date(inp.end[boundary - 1]).toISOString();
    if (target) {
      return new ValidationError(
        `${target.field}.soc`,
        `cannot be reached by ${new Date(target.time).toISOString()} (the slot boundary ${at}): at most ${socOf(hi)} % from battery.soc ${inp.soc} % within the limits; got ${target.soc}`,
        'unprocessable',
      );
    }
    if (
      boundary === m.slots.length &&
      inp.socEnd !== undefined &&
      Math.abs((inp.socEnd / 100) * cap - m.lb[boundary]) <= 1e-9 * cap
    ) {
      return new ValidationError(
        'socEnd',
        `cannot be reached by the end of the last slot: at most ${socOf(hi)} % from battery.soc ${inp.soc} % within the limits; got ${inp.socEnd}`,
        'unprocessable',
      );
    }
    const inputIndex = inp.index[boundary - 1];
    const field = inp.given.load ? `loadForecast[${inputIndex}]` : 'battery.socMin';
    return new ValidationError(
      field,
      `cannot be covered within the import limits: the battery would have to go below ${socOf(m.lb[boundary])} % by ${at} (at best ${socOf(hi)} %)`,
      'unprocessable',
    );
  }
  return new ValidationError(
    'battery.socMax',
    `is exceeded by ${new Date(inp.end[boundary - 1]).toISOString()} whatever the plan (at least ${socOf(lo)} %)`,
    'unprocessable',
  );
}

/** Cost of the idle battery (c = d = 0) over the plan, or null when that is no plan. */
function idleCost(inp: SiteInput): number | null {
  const model = inp.model;
  for (const t of inp.targets) if (model.e0 < model.lb[t.boundary] - model.tolE) return null;
  if (model.e0 < model.lb[model.slots.length] - model.tolE) return null;
  let cost = 0;
  let peak = model.peakFloor;
  const run: SlotRun = { cost: 0, c: 0, d: 0, u: 0, i: 0, x: 0 };
  for (const s of model.slots) {
    if (!new SlotModel(s, model.battery).idle(run)) return null;
    cost += s.dt * run.cost;
    peak = Math.max(peak, run.i);
  }
  return cost + (model.peakCost > 0 ? model.peakCost * peak : 0);
}

/** Float noise off a power: within 1e-9 of 0 or of a limit, that value. */
function clean(v: number, ...limits: number[]): number {
  if (Math.abs(v) <= 1e-9) return 0;
  for (const l of limits) if (Number.isFinite(l) && Math.abs(v - l) <= 1e-9 * Math.max(1, l)) return l;
  return v;
}

/**
 * The plan of least cost for the site, within every limit: a real battery (charge or discharge, never both
 * in a slot) and a real meter (import or export, never both), PV curtailment, SOC window and targets, and a
 * peak-import cost. The model and why the solver is exact: docs/planner.md, "A whole site".
 * Throws a ValidationError naming the field for any bad input, and for limits no plan can keep.
 */
export function planSite(input: SitePlanInput): SitePlan {
  const inp = parseSiteInput(input);
  const model = inp.model;
  let sol: SiteSolution;
  try {
    sol = solveSite(model);
  } catch (err) {
    if (err instanceof NoPlan) throw refusal(inp, err.why);
    throw err;
  }
  const { e, runs } = sol;
  const cap = inp.capacityKWh;
  const why = reasons(inp, runs, e, sol.cap);
  const socOf = (kWh: number) => (kWh / cap) * 100;
  const sum = { import: 0, export: 0, wear: 0 };
  let charged = 0;
  let discharged = 0;
  let peak = model.peakFloor;
  const curve: SitePlan['soc'] = [];
  const { C, D, etaC, etaD } = model.battery;
  const forecasts = inp.given.pv || inp.given.load;
  /** Whether slot k's move of stored energy is self-consumption's (the forecast net load within the power, then the SOC window; a target's raise is a steer). */
  const followsNetLoad = (k: number): boolean => {
    const slot = model.slots[k];
    const net = Math.min(D, Math.max(-C, slot.load - slot.pv));
    const move = Math.min(
      model.ub[0] - e[k],
      Math.max(model.lb[0] - e[k], -slot.dt * (net < 0 ? net * etaC : net / etaD)),
    );
    return Math.abs(e[k + 1] - e[k] - move) <= 1e-6 * Math.max(1, cap);
  };
  const slots = runs.map((r, k): SitePlanSlot => {
    const slot = model.slots[k];
    const hours = slot.dt;
    const chargeKW = clean(r.c, model.battery.C);
    const dischargeKW = clean(r.d, model.battery.D);
    const importKW = clean(r.i, slot.imax);
    const exportKW = clean(r.x, slot.xmax);
    const curtailKW = clean(r.u, slot.pv);
    sum.import += hours * slot.pi * importKW;
    sum.export += hours * slot.px * exportKW;
    sum.wear += hours * model.battery.wear * (chargeKW + dischargeKW);
    charged += hours * chargeKW;
    discharged += hours * dischargeKW;
    peak = Math.max(peak, importKW);
    const start = inp.start[k];
    if (k === 0 || inp.end[k - 1] !== start) curve.push({ time: start, soc: socOf(e[k]) });
    curve.push({ time: inp.end[k], soc: socOf(e[k + 1]) });
    const net = dischargeKW - chargeKW;
    return {
      start,
      end: inp.end[k],
      energyStorage: { value: net, unit: 'kW' },
      price: slot.pi,
      importPrice: slot.pi,
      exportPrice: slot.px,
      energyKWh: net * hours,
      socStart: socOf(e[k]),
      socEnd: socOf(e[k + 1]),
      chargeKW: chargeKW,
      dischargeKW: dischargeKW,
      gridKW: importKW - exportKW,
      importKW: importKW,
      exportKW: exportKW,
      pvKW: slot.pv,
      loadKW: slot.load,
      curtailKW: curtailKW,
      cost: hours * (slot.pi * importKW - slot.px * exportKW + model.battery.wear * (chargeKW + dischargeKW)),
      why: why[k],
      selfConsumption: forecasts && followsNetLoad(k),
    };
  });
  const peakCost = model.peakCost > 0 ? model.peakCost * peak : 0;
  const endValue = model.endValue * (e[e.length - 1] - model.e0);
  const total = sum.import - sum.export + sum.wear + peakCost - endValue;
  const idle = idleCost(inp);
  return {
    model: 'site',
    slots,
    soc: curve,
    cost: { total, import: sum.import, export: sum.export, wear: sum.wear, peak: peakCost, endValue },
    value: idle === null ? null : idle - total,
    peakImportKW: peak,
    priceUnit: 'kWh',
    currency: inp.currency,
    chargedKWh: charged,
    dischargedKWh: discharged,
    targets: inp.targets.map((t) => ({ soc: t.soc, time: t.time, at: inp.end[t.boundary - 1] })),
    solver: { method: 'dp', passes: sol.passes, gap: sol.gap },
  };
}
