/**
 * Unit handling: the one place where W, kW, MW and % are parsed, normalised and converted, and
 * the one table of their factors (power, and the energy units of the same prefixes).
 */
import { ValidationError } from './errors';
import {
  CURTAILMENT_UNITS,
  POWER_UNITS,
  type CurtailmentUnit,
  type CurtailmentValue,
  type PowerUnit,
  type PowerValue,
} from './types';

/** W per unit of each power unit (limits.ts POWER_UNITS). */
export const POWER_FACTOR: Readonly<Record<PowerUnit, number>> = Object.freeze({ W: 1, kW: 1e3, MW: 1e6 });
/** Wh per unit of each energy unit: the power factors of the same prefix. */
const ENERGY_FACTOR: Readonly<Record<'Wh' | 'kWh' | 'MWh', number>> = Object.freeze({
  Wh: POWER_FACTOR.W,
  kWh: POWER_FACTOR.kW,
  MWh: POWER_FACTOR.MW,
});

const byLowerCase = (t: Readonly<Record<string, number>>): Readonly<Record<string, number>> =>
  Object.freeze(Object.fromEntries(Object.entries(t).map(([k, f]) => [k.toLowerCase(), f])));
/** POWER_FACTOR keyed by the unit in lower case ("w", "kw", "mw"), for answers lax about case. */
export const POWER_FACTOR_ANY_CASE = byLowerCase(POWER_FACTOR);
/** ENERGY_FACTOR keyed by the unit in lower case ("wh", "kwh", "mwh"), for answers lax about case. */
export const ENERGY_FACTOR_ANY_CASE = byLowerCase(ENERGY_FACTOR);

/** `percent` % of `ofW`, W (a curtailment in % of the installed production power). */
export function percentToWatts(percent: number, ofW: number): number {
  return (percent / 100) * ofW;
}

/** `w` in % of `ofW`. */
export function wattsToPercent(w: number, ofW: number): number {
  return (w / ofW) * 100;
}

/**
 * Normalises a power unit, lenient about case where it is unambiguous
 * ("kw", "KW" -> "kW"; "mw", "MW" -> "MW"; "w" -> "W"). "mW" (milliwatt) is refused.
 */
export function parsePowerUnit(input: unknown, field: string): PowerUnit {
  if (typeof input === 'string') {
    const trimmed = input.trim();
    if ((POWER_UNITS as readonly string[]).includes(trimmed)) return trimmed as PowerUnit;
    if (trimmed !== 'mW') {
      const lower = trimmed.toLowerCase();
      if (lower === 'w') return 'W';
      if (lower === 'kw') return 'kW';
      if (lower === 'mw') return 'MW';
    }
  }
  throw new ValidationError(field, `must be one of ${POWER_UNITS.join(', ')}; got ${show(input)}`);
}

export function parseCurtailmentUnit(input: unknown, field: string): CurtailmentUnit {
  if (typeof input === 'string' && input.trim() === '%') return '%';
  try {
    return parsePowerUnit(input, field);
  } catch {
    throw new ValidationError(field, `must be one of ${CURTAILMENT_UNITS.join(', ')}; got ${show(input)}`);
  }
}

export function toWatts(v: PowerValue): number {
  return v.value * POWER_FACTOR[v.unit];
}

/** Watts of a curtailment value; `%` needs the installed production power in W. */
export function curtailmentToWatts(v: CurtailmentValue, installedW?: number): number {
  if (v.unit === '%') {
    if (installedW === undefined) throw new Error('installed production power is needed to convert %');
    return percentToWatts(v.value, installedW);
  }
  return v.value * POWER_FACTOR[v.unit];
}

/** A finite number, from a number or a numeric string; anything else is refused naming the field. */
export function parseNumber(input: unknown, field: string): number {
  let value: number | undefined;
  if (typeof input === 'number') value = input;
  else if (
    typeof input === 'string' &&
    input.trim() !== '' &&
    /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(input.trim())
  ) {
    value = Number(input.trim());
  }
  if (value === undefined || !Number.isFinite(value)) {
    throw new ValidationError(field, `must be a finite number (or numeric string); got ${show(input)}`);
  }
  return value;
}

/**
 * A PowerValue from a number (in `defaultUnit`), a numeric string, or `{value, unit}`.
 */
export function parsePowerValue(input: unknown, field: string, defaultUnit?: PowerUnit): PowerValue {
  if (input !== null && typeof input === 'object' && !Array.isArray(input) && !(input instanceof Date)) {
    const record = input as Record<string, unknown>;
    return { value: parseNumber(record.value, `${field}.value`), unit: parsePowerUnit(record.unit, `${field}.unit`) };
  }
  if (defaultUnit === undefined) {
    throw new ValidationError(field, `must be {value: number, unit: ${POWER_UNITS.join('|')}}; got ${show(input)}`);
  }
  return { value: parseNumber(input, field), unit: defaultUnit };
}

/** A CurtailmentValue; `%` must be within 0-100, power values must not be negative. */
export function parseCurtailmentValue(input: unknown, field: string, defaultUnit?: CurtailmentUnit): CurtailmentValue {
  let out: CurtailmentValue;
  if (input !== null && typeof input === 'object' && !Array.isArray(input) && !(input instanceof Date)) {
    const record = input as Record<string, unknown>;
    out = {
      value: parseNumber(record.value, `${field}.value`),
      unit: parseCurtailmentUnit(record.unit, `${field}.unit`),
    };
  } else if (defaultUnit === undefined) {
    throw new ValidationError(
      field,
      `must be {value: number, unit: ${CURTAILMENT_UNITS.join('|')}}; got ${show(input)}`,
    );
  } else {
    out = { value: parseNumber(input, field), unit: defaultUnit };
  }
  if (out.value < 0)
    throw new ValidationError(`${field}.value`, `must be 0 or more (a production limit); got ${out.value}`);
  if (out.unit === '%' && out.value > 100) {
    throw new ValidationError(`${field}.value`, `must be within 0-100 when the unit is %; got ${out.value}`);
  }
  return out;
}

/** Human form of a power value for node status: "-50 kW". */
export function formatPower(v: { value: number; unit: string }): string {
  const rounded = Math.round(v.value * 1000) / 1000;
  return `${rounded} ${v.unit}`;
}

/** Short, safe rendering of a bad input for error messages (never whole objects). */
export function show(input: unknown): string {
  if (input === undefined) return 'nothing';
  if (input === null) return 'null';
  if (typeof input === 'string') return JSON.stringify(input.length > 40 ? input.slice(0, 40) + '…' : input);
  if (typeof input === 'number' || typeof input === 'boolean') return String(input);
  if (Array.isArray(input)) return 'an array';
  if (input instanceof Date) return 'a Date';
  return /^[aeiou]/.test(typeof input) ? `an ${typeof input}` : `a ${typeof input}`;
}
