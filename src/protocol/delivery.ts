/**
 * Proof of delivery, pure: the average power of a device over a window from its energy counters
 * (powerFromCounters), and whether the site followed what was asked (verdict). The runtime's
 * delivery check (runtime/delivery-check.ts) reads the counters and calls these. Never yes without
 * two readings: a missing reading is unknown, with the reason.
 */
import { HOUR_MS } from './time';
import { POWER_FACTOR, percentToWatts, toWatts, wattsToPercent } from './units';
import type { CurtailmentUnit, PowerUnit, PowerValue } from './types';

export type DeliveryComponent = 'energyStorage' | 'curtailment' | 'gridTarget' | 'gridLimits' | 'maximizeGridImport';
export type DeviceRole = 'battery' | 'pv' | 'meter';
type Followed = 'yes' | 'partly' | 'no' | 'unknown';
export type DeliverySource = 'energy counters' | 'power';

/** The device each component is measured with. */
export const DEVICE_ROLE: Readonly<Record<DeliveryComponent, DeviceRole>> = {
  energyStorage: 'battery',
  curtailment: 'pv',
  gridTarget: 'meter',
  gridLimits: 'meter',
  maximizeGridImport: 'meter',
};

export const PRODUCED = 'totalEnergyProduced';
export const CONSUMED = 'totalEnergyConsumed';

/** The counters each device needs (the specification's properties, Wh). */
export const COUNTERS: Readonly<Record<DeviceRole, readonly string[]>> = {
  battery: [PRODUCED, CONSUMED],
  pv: [PRODUCED],
  meter: [PRODUCED, CONSUMED],
};

/** One reading of a device: when, its counters (Wh) and its power (W), each where it had one. */
export interface Reading {
  /** Epoch ms the values refer to (the measurement's timestamp). */
  at: number;
  produced?: number;
  consumed?: number;
  power?: number;
}

/** Tolerance of a verdict: a share of the asked power, at least minW. */
export interface Tolerance {
  /** % of the asked power (default 10). */
  percent: number;
  /** At least this many W (default 1000). */
  minW: number;
}

export const DEFAULT_TOLERANCE: Readonly<Tolerance> = Object.freeze({ percent: 10, minW: 1000 });

/** What was asked, as a delivery check compares it. */
export type Asked =
  /** A power to deliver (ESS: positive discharge; grid target: positive import, with its deadband). */
  | { kind: 'setpoint'; value: PowerValue; deadbandW?: number }
  /** A production limit (curtailment); a `%` one needs `percentOfW`, the installed PV power. */
  | { kind: 'max'; value: { value: number; unit: CurtailmentUnit }; percentOfW?: number }
  /** Bounds of the grid power (grid limits), at least one. */
  | { kind: 'range'; upper?: PowerValue; lower?: PowerValue }
  /** Maximize grid import on or off: not measurable. */
  | { kind: 'flag'; value: boolean };

/**
 * A device's average power, W, from counter differences (Δ = end reading − start reading, Wh) over `hours`:
 * battery (ESS) (Δproduced − Δconsumed) / Δt, positive = discharge (the ESS sign); PV Δproduced / Δt;
 * grid meter (Δconsumed − Δproduced) / Δt, positive = import.
 */
export function powerFromCounters(role: DeviceRole, dProducedWh: number, dConsumedWh: number, hours: number): number {
  if (role === 'pv') return dProducedWh / hours;
  if (role === 'battery') return (dProducedWh - dConsumedWh) / hours;
  return (dConsumedWh - dProducedWh) / hours;
}

/** The average power of a device between two readings from its counters, or why there is none. */
export function averageFromCounters(role: DeviceRole, a: Reading, b: Reading): { watts: number } | { reason: string } {
  for (const r of [a, b]) {
    if (r.produced === undefined || (role !== 'pv' && r.consumed === undefined))
      return { reason: `no ${COUNTERS[role].join(' and ')} in the readings` };
  }
  const hours = (b.at - a.at) / HOUR_MS;
  if (!(hours > 0)) return { reason: `the readings are not apart in time (${a.at} and ${b.at})` };
  const produced = b.produced! - a.produced!;
  const consumed = role === 'pv' ? 0 : b.consumed! - a.consumed!;
  if (produced < 0 || consumed < 0) return { reason: 'a counter went backwards (reset or replaced device)' };
  return { watts: powerFromCounters(role, produced, consumed, hours) };
}

/** A power value in W (units.ts toWatts). */
export const watts = toWatts;

/** The band within which a power counts as delivered, W: max(tolerance % × |asked|, toleranceMin W). */
export function bandW(askedW: number, t: Tolerance, floorW = 0): number {
  return Math.max(percentToWatts(t.percent, Math.abs(askedW)), t.minW, floorW);
}

export interface Verdict {
  followed: Followed;
  /** The power the verdict is about, W (the setpoint, the limit, or the bound nearest to the measured power). */
  targetW: number;
  /** Setpoints: measured − asked; limits: the distance outside (0 within), W. */
  deviationW: number;
  bandW: number;
  /** Why, when unknown. */
  reason?: string;
}

/**
 * Compares a measured average power (W) with what was asked, within the band (bandW; a grid
 * target's deadband widens it). Setpoints can be followed partly; limits cannot (an average
 * either keeps within a limit or not); maximize grid import has no power to compare with.
 */
export function verdict(asked: Asked, measuredW: number, t: Tolerance = DEFAULT_TOLERANCE): Verdict {
  switch (asked.kind) {
    case 'setpoint': {
      // ESS, grid target; deviation = measured − asked. yes: |deviation| ≤ band. partly: band <
      // |deviation| < |asked| − band, it moved part of the way (or overshot by less than the asked
      // power); only an asked power above twice the band can be partly. no: it did not move beyond
      // the band, went the other way, or overshot by more.
      const target = watts(asked.value);
      const band = bandW(target, t, asked.deadbandW ?? 0);
      const dev = measuredW - target;
      const deviation = Math.abs(dev);
      const followed: Followed = deviation <= band ? 'yes' : deviation < Math.abs(target) - band ? 'partly' : 'no';
      return { followed, targetW: target, deviationW: dev, bandW: band };
    }
    case 'max': {
      // Curtailment: PV ≤ limit; deviation = the distance above it (0 within); yes within the band, else no.
      const limit = maxW(asked);
      if (limit === undefined)
        return {
          followed: 'unknown',
          targetW: NaN,
          deviationW: NaN,
          bandW: NaN,
          reason: "a curtailment in % needs the site's installed PV power (pvPeakPower) to be checked",
        };
      const band = bandW(limit, t);
      const dev = Math.max(0, measuredW - limit);
      return { followed: dev <= band ? 'yes' : 'no', targetW: limit, deviationW: dev, bandW: band };
    }
    case 'range': {
      // Grid limits: lower ≤ grid ≤ upper; deviation = the distance outside (0 within), judged with
      // the band of the bound it is about.
      const up = asked.upper ? watts(asked.upper) : Infinity;
      const low = asked.lower ? watts(asked.lower) : -Infinity;
      const dev = measuredW > up ? measuredW - up : measuredW < low ? measuredW - low : 0;
      const target = dev > 0 ? up : dev < 0 ? low : Math.abs(measuredW - up) <= Math.abs(measuredW - low) ? up : low;
      const band = bandW(target, t);
      return { followed: Math.abs(dev) <= band ? 'yes' : 'no', targetW: target, deviationW: dev, bandW: band };
    }
    default:
      return {
        followed: 'unknown',
        targetW: NaN,
        deviationW: NaN,
        bandW: NaN,
        reason: 'not measurable: maximize grid import asks for no power to compare with',
      };
  }
}

/** A curtailment limit in W (undefined: a % limit without the installed power). */
function maxW(a: Extract<Asked, { kind: 'max' }>): number | undefined {
  if (a.value.unit !== '%') return watts(a.value as PowerValue);
  return a.percentOfW !== undefined && a.percentOfW > 0 ? percentToWatts(a.value.value, a.percentOfW) : undefined;
}

/**
 * The cross-check with the device's `power` readings at the window's ends: an average from the
 * counters should lie between them (widened by the band). They are instants, not averages, so
 * a varying power may disagree now and then; a wrong counter disagrees every time.
 */
export function crossCheck(averageW: number, startW: number, endW: number, band: number): boolean {
  return averageW >= Math.min(startW, endW) - band && averageW <= Math.max(startW, endW) + band;
}

/** The report of one check (output 2 of the site steer and schedule nodes). */
export interface DeliveryReport {
  site: string;
  component: DeliveryComponent;
  /** As asked (unit null for maximize grid import); grid limits add lower and upper, `value` is the bound the verdict is about. */
  asked: { value: number | boolean; unit: string | null; lower?: number | null; upper?: number | null };
  /** The average power over the window, in the asked unit; null without one. */
  measured: { value: number; unit: string } | null;
  /** In the asked unit; percent of the asked power (null when it is 0, or unknown). */
  deviation: { value: number; unit: string; percent: number | null } | null;
  followed: Followed;
  /** The window, epoch ms (the readings' timestamps, or the planned times without readings). */
  from: number;
  until: number;
  source: DeliverySource;
  /** Why unknown, or a note (e.g. the power readings disagree). */
  reason?: string;
  /** The device measured with. */
  device?: string;
  /** The band, in the asked unit. */
  tolerance?: { value: number; unit: string };
  /** The device's power at the window's ends, in the asked unit, and whether the average lies between them. */
  crossCheck?: { start: number; end: number; unit: string; agrees: boolean };
}

/** The unit a report shows its powers in: the asked unit (grid limits: the upper's, else the lower's). */
function reportUnit(asked: Asked): string {
  switch (asked.kind) {
    case 'setpoint':
      return asked.value.unit;
    case 'max':
      return asked.value.unit;
    case 'range':
      return (asked.upper ?? asked.lower)?.unit ?? 'kW';
    default:
      return 'kW';
  }
}

/** W in a report's unit (`%` of `percentOfW`), rounded to the watt (a tenth of a % for %). */
function inUnit(w: number, unit: string, percentOfW?: number): number {
  if (unit === '%') {
    const percent = Math.round(wattsToPercent(w, percentOfW ?? NaN) * 10) / 10;
    return percent === 0 ? 0 : percent; // no -0
  }
  const factor = POWER_FACTOR[unit as PowerUnit] ?? 1;
  return Number((Math.round(w) / factor).toPrecision(12)) || 0;
}

/** The `asked` of a report. */
function askedOf(asked: Asked, targetW?: number): DeliveryReport['asked'] {
  switch (asked.kind) {
    case 'setpoint':
      return { value: asked.value.value, unit: asked.value.unit };
    case 'max':
      return { value: asked.value.value, unit: asked.value.unit };
    case 'flag':
      return { value: asked.value, unit: null };
    default: {
      const unit = reportUnit(asked);
      const up = asked.upper ? inUnit(watts(asked.upper), unit) : null;
      const low = asked.lower ? inUnit(watts(asked.lower), unit) : null;
      const value = targetW !== undefined && Number.isFinite(targetW) ? inUnit(targetW, unit) : (up ?? low)!;
      return { value, unit, lower: low, upper: up };
    }
  }
}

export interface ReportInput {
  site: string;
  component: DeliveryComponent;
  asked: Asked;
  /** Start of the window, epoch ms. */
  from: number;
  /** End of the window, epoch ms (the signal's validUntil). */
  until: number;
  source: DeliverySource;
  device?: string;
  tolerance?: Tolerance;
}

/** An unknown report: no measurement (a failed read, no device, a window too short), with the reason. */
export function unknownReport(i: ReportInput, reason: string): DeliveryReport {
  const report: DeliveryReport = {
    site: i.site,
    component: i.component,
    asked: askedOf(i.asked),
    measured: null,
    deviation: null,
    followed: 'unknown',
    from: i.from,
    until: i.until,
    source: i.source,
    reason,
  };
  if (i.device) report.device = i.device;
  return report;
}

/**
 * The report of a measured average power (W): the verdict, the powers in the asked unit and,
 * when given, the cross-check with the power readings at the window's ends (W).
 */
export function measuredReport(
  i: ReportInput,
  measuredW: number,
  ends?: { startW: number; endW: number },
): DeliveryReport {
  const outcome = verdict(i.asked, measuredW, i.tolerance ?? DEFAULT_TOLERANCE);
  if (i.asked.kind === 'max' && !Number.isFinite(outcome.targetW)) {
    // A % limit without the installed power: the measured power in W, no verdict.
    return { ...unknownReport(i, outcome.reason!), measured: { value: inUnit(measuredW, 'W'), unit: 'W' } };
  }
  const unit = reportUnit(i.asked);
  const pct = i.asked.kind === 'max' ? i.asked.percentOfW : undefined;
  const report: DeliveryReport = {
    site: i.site,
    component: i.component,
    asked: askedOf(i.asked, outcome.targetW),
    measured: { value: inUnit(measuredW, unit, pct), unit },
    deviation: null,
    followed: outcome.followed,
    from: i.from,
    until: i.until,
    source: i.source,
  };
  if (outcome.reason) report.reason = outcome.reason;
  if (Number.isFinite(outcome.deviationW)) {
    const percent =
      outcome.targetW !== 0 ? Math.round((outcome.deviationW / Math.abs(outcome.targetW)) * 1000) / 10 || 0 : null;
    report.deviation = { value: inUnit(outcome.deviationW, unit, pct), unit, percent };
  }
  if (i.device) report.device = i.device;
  if (Number.isFinite(outcome.bandW)) report.tolerance = { value: inUnit(outcome.bandW, unit, pct), unit };
  if (ends && i.asked.kind !== 'flag') {
    const band = Number.isFinite(outcome.bandW) ? outcome.bandW : bandW(0, i.tolerance ?? DEFAULT_TOLERANCE);
    const agrees = crossCheck(measuredW, ends.startW, ends.endW, band);
    report.crossCheck = { start: inUnit(ends.startW, unit, pct), end: inUnit(ends.endW, unit, pct), unit, agrees };
    if (!agrees && !report.reason)
      report.reason =
        "the device's power readings at the window's ends do not bracket the counters' average (a varying power can do that; a wrong counter does it every time)";
  }
  return report;
}
