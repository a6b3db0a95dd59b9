/**
 * Dispatch: the power flows of one site at one instant, from its load, its PV potential, the
 * battery's state and the steering that applies (steering-store.ts). Pure: the model
 * (model.ts) calls it for each integration step and for each snapshot.
 * The order of the rules: above dispatch.
 */
import { BATTERY_DEFAULTS, contractOf, type SiteDefinition } from './sites';
import type { ActiveSteering } from './steering-store';

export interface Flows {
  loadW: number;
  pvW: number;
  /** Positive discharges, negative charges. */
  battW: number;
  /** Positive imports, negative exports. */
  gridW: number;
}

/** What dispatch needs to know of a site at an instant. */
export interface DispatchInput {
  def: SiteDefinition;
  /** Site consumption, W. */
  loadW: number;
  /** PV power available before curtailment, W. */
  pvPotentialW: number;
  /** Energy stored in the battery, Wh. */
  storedWh: number;
  /** The steering that applies at the instant. */
  steering: ActiveSteering;
  /** Length of the step about to be integrated, hours (0 for an instant). */
  dtH: number;
}

/** Below this much energy (Wh) a battery counts as at the edge of its SOC window. */
const EDGE_WH = 1e-6;

/**
 * The flows at an instant, written into `out` (returned). Order (README, assumptions A19, A30-A34):
 * 1. asset steering or grid target (they exclude each other), else self-consumption; a curtailment caps PV;
 * 2. device constraints: the battery's power rating and its SOC window over the step;
 * 3. grid limits (requested within contractual ones), hard constraints that win over step 1 as far as
 *    needed: the battery first, then PV (curtailed for too much export, un-curtailed for too much import),
 *    recomputed every instant. What the assets cannot do shows in the grid power.
 */
export function dispatch(i: DispatchInput, out: Flows): Flows {
  const { def, steering: s, dtH } = i;
  const load = i.loadW;
  const potential = Math.max(0, i.pvPotentialW);
  const maxP = def.battery.maxPowerW;
  let pv = potential;
  if (s.curtailW !== undefined) pv = Math.min(pv, Math.max(0, s.curtailW));
  let batt: number;
  const gridTarget = !s.maximizeGridImport && s.essW === undefined ? s.gridTarget : undefined;
  if (s.maximizeGridImport) {
    pv = 0;
    batt = -maxP;
  } else if (s.essW !== undefined) {
    batt = s.essW;
  } else if (gridTarget) {
    const idle = load - pv;
    batt = Math.abs(idle - gridTarget.setpointW) <= gridTarget.deadbandW ? 0 : idle - gridTarget.setpointW;
  } else {
    batt = load - pv; // self-consumption
  }
  // The most the battery can discharge (>= 0) and charge (<= 0) over this step.
  const most = socLimit(def, i.storedWh, maxP, dtH);
  const least = socLimit(def, i.storedWh, -maxP, dtH);
  batt = Math.min(most, Math.max(least, batt));
  if (gridTarget && load - pv - batt < gridTarget.setpointW - gridTarget.deadbandW) {
    // The battery cannot absorb enough: curtail production so the grid reaches the setpoint.
    pv = Math.min(pv, Math.max(0, load - batt - gridTarget.setpointW));
  }
  // Grid limits: storage first, then PV.
  const { upperW, lowerW } = gridLimitsIn(def, s);
  let grid = load - pv - batt;
  if (grid > upperW) {
    batt = Math.min(most, batt + grid - upperW);
    grid = load - pv - batt;
    if (grid > upperW) pv = Math.min(potential, pv + grid - upperW);
  } else if (grid < lowerW) {
    batt = Math.max(least, batt - (lowerW - grid));
    grid = load - pv - batt;
    if (grid < lowerW) pv = Math.max(0, pv - (lowerW - grid));
  }
  out.loadW = load;
  out.pvW = pv;
  out.battW = batt;
  out.gridW = load - pv - batt;
  return out;
}

/**
 * The grid limits in force, W: the requested ones (grid-limits steering) clamped to the
 * site's contractual limits, the contractual ones where none is requested. upperW >= lowerW.
 */
function gridLimitsIn(def: SiteDefinition, s: ActiveSteering): { upperW: number; lowerW: number } {
  const contract = contractOf(def);
  const clamp = (v: number | undefined, dflt: number) =>
    v === undefined ? dflt : Math.min(contract.maxImportW, Math.max(-contract.maxExportW, v));
  return {
    upperW: clamp(s.gridLimits?.upperW, contract.maxImportW),
    lowerW: clamp(s.gridLimits?.lowerW, -contract.maxExportW),
  };
}

/** The battery's round-trip efficiency and SOC window as stored energy, Wh. */
export function batteryWindow(def: SiteDefinition): { sqrtEff: number; minWh: number; maxWh: number } {
  const battery = def.battery;
  return {
    sqrtEff: Math.sqrt(battery.efficiency ?? BATTERY_DEFAULTS.efficiency),
    minWh: ((battery.minSoc ?? BATTERY_DEFAULTS.minSoc) / 100) * battery.capacityWh,
    maxWh: ((battery.maxSoc ?? BATTERY_DEFAULTS.maxSoc) / 100) * battery.capacityWh,
  };
}

/**
 * Battery power `batt` limited by the SOC window over a step of `dtH` hours (AC side; positive
 * discharges; charging stores |P|·√eff·dt, discharging removes P/√eff·dt): no discharge below
 * minSoc, no charge above maxSoc. For an instant (dtH 0) a battery at an edge of its window does
 * nothing in that direction. A battery outside its window (a custom initial SOC) may only move
 * back into it.
 */
function socLimit(def: SiteDefinition, storedWh: number, batt: number, dtH: number): number {
  const { sqrtEff, minWh, maxWh } = batteryWindow(def);
  if (batt > 0) {
    const avail = storedWh - minWh;
    if (avail <= EDGE_WH) return 0;
    return dtH > 0 ? Math.min(batt, (avail * sqrtEff) / dtH) : batt;
  }
  if (batt < 0) {
    const room = maxWh - storedWh;
    if (room <= EDGE_WH) return 0;
    return dtH > 0 ? Math.max(batt, -room / (sqrtEff * dtH)) : batt;
  }
  return 0;
}
