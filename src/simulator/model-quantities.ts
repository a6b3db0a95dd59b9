/**
 * The quantities the physical model tracks per site, as indexes into a flat vector, and
 * how device properties map onto them.
 */
import type { DeviceKind } from './sites';

export const F_SOC = 0; // battery state of charge, %
export const F_BATT_P = 1; // battery power, W, positive discharges
export const F_BATT_IN = 2; // battery energy charged, Wh (counter)
export const F_BATT_OUT = 3; // battery energy discharged, Wh (counter)
export const F_PV_P = 4; // PV power, W
export const F_PV_OUT = 5; // PV energy produced, Wh (counter)
export const F_GRID_P = 6; // grid power, W, positive imports
export const F_GRID_IN = 7; // grid energy imported, Wh (counter)
export const F_GRID_OUT = 8; // grid energy exported, Wh (counter)
export const N_FIELDS = 9;

export const COUNTER_FIELDS: ReadonlySet<number> = new Set([F_BATT_IN, F_BATT_OUT, F_PV_OUT, F_GRID_IN, F_GRID_OUT]);

/** Field index of a device property, or undefined if the device has no such property. */
export const PROPERTY_FIELDS: Readonly<Record<DeviceKind, Readonly<Record<string, number>>>> = {
  battery: { soc: F_SOC, power: F_BATT_P, totalEnergyConsumed: F_BATT_IN, totalEnergyProduced: F_BATT_OUT },
  pv: { power: F_PV_P, totalEnergyProduced: F_PV_OUT },
  meter: { power: F_GRID_P, totalEnergyConsumed: F_GRID_IN, totalEnergyProduced: F_GRID_OUT },
};

/**
 * Rounding of published values: soc to 0.01 %, power to 1 W, counters to 0.1 Wh.
 * Rounding is non-decreasing, so counters stay monotonic after it.
 */
export function roundField(field: number, v: number): number {
  if (field === F_SOC) return Math.round(v * 100) / 100;
  if (COUNTER_FIELDS.has(field)) return Math.round(v * 10) / 10;
  const rounded = Math.round(v);
  return rounded === 0 ? 0 : rounded; // no -0 in JSON consumers' eyes
}
