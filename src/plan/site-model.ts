/**
 * The site model the planner solves: the slots' data, the battery, the SOC window as stored
 * energy per boundary, the end value and the peak cost (built by site-plan.ts, solved by
 * site-solve.ts and its peak search).
 */
import type { BatteryData, SlotData } from './slot-cost';

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
  /** A least stored energy before selling (kWh): a discharge beyond the slot's load net of PV must leave at least this. */
  sellMin?: number;
  /** Cost per kW of the highest import over the plan, and the least level it is charged at (kW). */
  peakCost: number;
  peakFloor: number;
  /** Rounding slack for stored energy, kWh. */
  tolE: number;
}
