/**
 * Dispatch: the power flows of one site at one instant, from its load, its PV potential, the
 * battery's state and the steering that applies (steering-store.ts). Pure: the model
 * (model.ts) calls it for each integration step and for each snapshot.
 */
import type { SiteDefinition } from './sites';
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

/** The flows at an instant, written into `out` (returned). */
export function dispatch(i: DispatchInput, out: Flows): Flows {
  const { def, steering: s, dtH } = i;
  const load = i.loadW;
  const maxP = def.battery.maxPowerW;
  let pv = i.pvPotentialW;
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
  batt = socLimit(def, i.storedWh, Math.min(maxP, Math.max(-maxP, batt)), dtH);
  if (gridTarget && load - pv - batt < gridTarget.setpointW - gridTarget.deadbandW) {
    // The battery cannot absorb enough: curtail production so the grid reaches the setpoint.
    pv = Math.min(pv, Math.max(0, load - batt - gridTarget.setpointW));
  }
  out.loadW = load;
  out.pvW = pv;
  out.battW = batt;
  out.gridW = load - pv - batt;
  return out;
}

/** No discharge from an empty battery, no charge into a full one. */
export function socLimit(def: SiteDefinition, storedWh: number, batt: number, dtH: number): number {
  const cap = def.battery.capacityWh;
  if (batt > 0) {
    if (dtH > 0) return Math.min(batt, storedWh / dtH);
    return storedWh <= 1e-9 ? 0 : batt;
  }
  if (batt < 0) {
    const room = cap - storedWh;
    if (dtH > 0) return Math.max(batt, -room / dtH);
    return room <= 1e-9 ? 0 : batt;
  }
  return 0;
}
