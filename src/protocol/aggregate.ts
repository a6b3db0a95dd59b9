/**
 * The aggregate of a fleet read (ems-device-read with a list of devices): sums of power and
 * of energy counters per property, and the mean state of charge, weighted by battery
 * capacity where every capacity is known. Pure: no I/O; values are fed in one at a time, so
 * nothing is copied.
 * What it sums and how: above FleetAggregator.
 */
import { ENERGY_FACTOR_ANY_CASE, parsePowerUnit, toWatts } from './units';
import type { PowerUnit } from './types';

/** One sum: its value in the base unit and how many devices gave a value. */
export interface AggregateSum {
  value: number;
  unit: 'W' | 'Wh';
  devices: number;
}

interface SocAggregate {
  value: number;
  unit: '%';
  devices: number;
  /** `capacity`: weighted by each battery's capacity (all known); `mean`: the plain mean. */
  weighting: 'capacity' | 'mean';
  /** The capacity the weighted mean is over, Wh (with `weighting: 'capacity'` only). */
  capacityWh?: number;
}

export interface FleetAggregate {
  /** Devices asked, answered, failed. */
  devices: number;
  ok: number;
  failed: number;
  /** Sums of power values per property name, W. */
  power: Record<string, AggregateSum>;
  /** Sums of energy counters per property name, Wh. */
  energy: Record<string, AggregateSum>;
  /** Mean SOC of the devices that gave one (absent when none did). */
  soc?: SocAggregate;
}

const POWER_LIKE = /^[kKmM]?[wW]$/;

/** Wh per unit of an energy unit (Wh, kWh, MWh; lenient about case except "mWh"), or undefined. */
export function energyFactor(unit: string): number | undefined {
  const trimmed = unit.trim();
  if (trimmed === 'mWh') return undefined; // milliwatt-hours, not MWh
  return ENERGY_FACTOR_ANY_CASE[trimmed.toLowerCase()];
}

/** The power unit of a unit text (units.ts: W, kW, MW, lenient about case, "mW" refused), or undefined. */
export function powerUnit(unit: string): PowerUnit | undefined {
  if (!POWER_LIKE.test(unit.trim())) return undefined;
  try {
    return parsePowerUnit(unit, 'unit');
  } catch {
    return undefined;
  }
}

/**
 * Feeds values in; result() gives the aggregate: power (W, kW, MW; units.ts) summed per property
 * name in W, so 5 kW and 300 W make 5300 W; energy (Wh, kWh, MWh) summed per property name in Wh;
 * the mean of `soc` in %. Values in other units (%, °C, …) are not summed.
 */
export class FleetAggregator {
  private readonly power: Record<string, AggregateSum> = {};
  private readonly energy: Record<string, AggregateSum> = {};
  private socSum = 0;
  private socWeighted = 0;
  private socCapacity = 0;
  private socDevices = 0;
  private socUnweighted = 0;
  private ok = 0;
  private failed = 0;

  /** @param capacityOf a device's battery capacity in Wh, when known */
  constructor(private readonly capacityOf: (device: string) => number | undefined = () => undefined) {}

  /** One device answered. */
  answered(): void {
    this.ok++;
  }

  /** One device failed. */
  failedOne(): void {
    this.failed++;
  }

  /**
   * One value of a device. SOC: the mean weighted by capacity when each device that gave one has a
   * known capacity (`weighting: 'capacity'`), else the plain mean (`weighting: 'mean'`).
   */
  add(device: string, property: string, value: number, unit: string): void {
    if (typeof value !== 'number' || !Number.isFinite(value) || typeof unit !== 'string') return;
    if (property === 'soc' && unit.trim() === '%') {
      this.socSum += value;
      this.socDevices++;
      const cap = this.capacityOf(device);
      if (cap !== undefined && Number.isFinite(cap) && cap > 0) {
        this.socWeighted += value * cap;
        this.socCapacity += cap;
      } else this.socUnweighted++;
      return;
    }
    const powerUnitOf = powerUnit(unit);
    if (powerUnitOf) {
      sum(this.power, property, toWatts({ value, unit: powerUnitOf }), 'W');
      return;
    }
    const energyScale = energyFactor(unit);
    if (energyScale !== undefined) sum(this.energy, property, value * energyScale, 'Wh');
  }

  result(): FleetAggregate {
    const out: FleetAggregate = {
      devices: this.ok + this.failed,
      ok: this.ok,
      failed: this.failed,
      power: this.power,
      energy: this.energy,
    };
    if (this.socDevices > 0) {
      out.soc =
        this.socUnweighted === 0
          ? {
              value: this.socWeighted / this.socCapacity,
              unit: '%',
              devices: this.socDevices,
              weighting: 'capacity',
              capacityWh: this.socCapacity,
            }
          : { value: this.socSum / this.socDevices, unit: '%', devices: this.socDevices, weighting: 'mean' };
    }
    return out;
  }
}

function sum(into: Record<string, AggregateSum>, property: string, v: number, unit: 'W' | 'Wh'): void {
  const existing = Object.prototype.hasOwnProperty.call(into, property) ? into[property] : undefined;
  if (existing) {
    existing.value += v;
    existing.devices++;
  } else {
    Object.defineProperty(into, property, {
      value: { value: v, unit, devices: 1 },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
}
