/**
 * The input of the price → battery planner (price-plan.ts), checked before anything is
 * planned: every refusal is a ValidationError that names the field (`prices[3].end`,
 * `battery.socMax`) and the forms it accepts. Pure: no I/O, no clock.
 */
import { tooLong, ValidationError } from '../protocol/errors';
import { INPUTS } from '../protocol/limits';
import { MINUTE_MS, parseTime } from '../protocol/time';
import { parseNumber, show } from '../protocol/units';
import type { EpochMs, TimeInput } from '../protocol';
import { BATTERY_FIELDS, PLANNER_FIELDS, refuseUnknownKeys } from './keys';

/** Most price slots one plan takes (ten days of quarter hours; day-ahead markets publish at most two): INPUTS.priceSlots. */
export const MAX_PRICE_SLOTS = INPUTS.priceSlots;
/** Bounds and default of `steps`, the least number of SOC grid steps across the SOC window. */
const MIN_STEPS = 2;
const MAX_STEPS = 2000;
const DEFAULT_STEPS = 1000;

/** One price slot: `start` and `end` (or `duration` in minutes); `price` per kWh or MWh (`priceUnit`). */
export interface PriceSlotInput {
  start: TimeInput;
  end?: TimeInput;
  duration?: number;
  price: number;
}

/** The battery, in kWh, kW and % of capacity. */
export interface BatteryInput {
  capacityKWh: number;
  maxChargeKW: number;
  /** Default: maxChargeKW. */
  maxDischargeKW?: number;
  /** % of capacity; default 0. */
  socMin?: number;
  /** % of capacity; default 100. */
  socMax?: number;
  /** Round trip, within (0, 1]; default 0.9 (the simulator's). */
  efficiency?: number;
  /** The current SOC in % (required). */
  soc: number;
}

export interface PricePlanInput {
  prices: PriceSlotInput[];
  battery: BatteryInput;
  /** The energy unit the prices are per: `kWh` (default) or `MWh`; `EUR/MWh`, `ct/kWh` … are read as their energy unit. */
  priceUnit?: string;
  /** The least SOC (%) at the end of the last slot; within socMin..socMax. Default: none. */
  socEnd?: number;
  /** The least number of SOC grid steps across the SOC window (2-2000, default 1000). */
  steps?: number;
  /** Slots that end at or before `now` are dropped, the slot in progress starts at `now`. Default: none dropped. */
  now?: TimeInput;
}

/** A price slot as planned: epoch ms, the price per kWh or MWh as given. */
export interface PriceSlot {
  start: EpochMs;
  end: EpochMs;
  price: number;
}

export interface Battery {
  capacityKWh: number;
  maxChargeKW: number;
  maxDischargeKW: number;
  socMin: number;
  socMax: number;
  efficiency: number;
  soc: number;
}

export interface PlanInput {
  slots: PriceSlot[];
  battery: Battery;
  priceUnit: 'kWh' | 'MWh';
  socEnd?: number;
  steps: number;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
const absent = (v: unknown) => v === undefined || v === null || v === '';

/** `kWh` or `MWh`, alone or after a currency (`EUR/MWh`, `ct/kWh`); case is ignored. */
export function parsePriceUnit(input: unknown, field = 'priceUnit'): 'kWh' | 'MWh' {
  if (absent(input)) return 'kWh';
  const match = typeof input === 'string' ? /^(?:[^/]{1,12}\/)?\s*(k|m)wh$/i.exec(input.trim()) : null;
  if (match) return match[1].toLowerCase() === 'k' ? 'kWh' : 'MWh';
  throw new ValidationError(field, `must be kWh or MWh (alone or after a currency, as in EUR/MWh); got ${show(input)}`);
}

/** A number within [min, max] (`minOpen`: above min), from a number or numeric string. */
export function numberIn(
  input: unknown,
  field: string,
  min: number,
  max: number,
  minOpen = false,
  accepted?: string,
): number {
  const value = parseNumber(input, field);
  if (minOpen ? value > min && value <= max : value >= min && value <= max) return value;
  const range =
    accepted ??
    (max === Infinity
      ? `a number ${minOpen ? 'above' : 'at least'} ${min}`
      : `within ${minOpen ? `(${min}` : `[${min}`}, ${max}]`);
  throw new ValidationError(field, `must be ${range}; got ${value}`, 'unprocessable');
}

function parseSlot(input: unknown, i: number): PriceSlot {
  const path = `prices[${i}]`;
  if (!isObject(input))
    throw new ValidationError(
      path,
      `must be an object {start, end (or duration in minutes), price}; got ${show(input)}`,
    );
  refuseUnknownKeys(input, ['start', 'end', 'duration', 'price'], path, 'a field of a price slot');
  const start = parseTime(input.start, `${path}.start`);
  let end: number | undefined;
  if (!absent(input.end)) end = parseTime(input.end, `${path}.end`);
  if (!absent(input.duration)) {
    const minutes = numberIn(
      input.duration,
      `${path}.duration`,
      0,
      10_080,
      true,
      'a number of minutes above 0 (at most a week)',
    );
    const byDuration = start + Math.round(minutes * MINUTE_MS);
    if (end !== undefined && end !== byDuration) {
      throw new ValidationError(
        `${path}.duration`,
        `disagrees with ${path}.end (give one of end and duration); got ${minutes}`,
        'unprocessable',
      );
    }
    end = byDuration;
  }
  if (end === undefined)
    throw new ValidationError(
      `${path}.end`,
      'must be given (epoch ms, ISO 8601 string or Date), or duration in minutes; got nothing',
    );
  if (!(end > start))
    throw new ValidationError(
      `${path}.end`,
      `must be after ${path}.start; got ${new Date(end).toISOString()} for a start of ${new Date(start).toISOString()}`,
      'unprocessable',
    );
  return { start, end, price: parseNumber(input.price, `${path}.price`) };
}

export function parseBattery(input: unknown): Battery {
  if (!isObject(input)) {
    throw new ValidationError(
      'battery',
      `must be an object {capacityKWh, maxChargeKW, maxDischargeKW?, socMin?, socMax?, efficiency?, soc}; got ${show(input)}`,
    );
  }
  const capacityKWh = numberIn(input.capacityKWh, 'battery.capacityKWh', 0, Infinity, true);
  const maxChargeKW = numberIn(input.maxChargeKW, 'battery.maxChargeKW', 0, Infinity, true);
  const maxDischargeKW = absent(input.maxDischargeKW)
    ? maxChargeKW
    : numberIn(input.maxDischargeKW, 'battery.maxDischargeKW', 0, Infinity, true);
  const socMin = absent(input.socMin)
    ? 0
    : numberIn(input.socMin, 'battery.socMin', 0, 100, false, 'a percentage within [0, 100)');
  const socMax = absent(input.socMax) ? 100 : numberIn(input.socMax, 'battery.socMax', 0, 100);
  if (!(socMax > socMin)) {
    throw new ValidationError(
      'battery.socMax',
      `must be above battery.socMin (${socMin} %), within (socMin, 100]; got ${socMax}`,
      'unprocessable',
    );
  }
  const efficiency = absent(input.efficiency)
    ? 0.9
    : numberIn(
        input.efficiency,
        'battery.efficiency',
        0,
        1,
        true,
        'a round-trip efficiency within (0, 1] (0.9 for 90 %)',
      );
  if (absent(input.soc))
    throw new ValidationError('battery.soc', 'must be given: the current SOC in %, within [0, 100]; got nothing');
  const soc = numberIn(input.soc, 'battery.soc', 0, 100);
  return { capacityKWh, maxChargeKW, maxDischargeKW, socMin, socMax, efficiency, soc };
}

/**
 * Checks and normalises the planner's input. Slots must be sorted and must not overlap;
 * gaps are allowed (the battery is idle in a gap). With `now`, slots that end at or before
 * it are dropped and the slot in progress starts at `now`.
 */
export function parsePlanInput(input: unknown): PlanInput {
  if (!isObject(input))
    throw new ValidationError(
      'input',
      `must be an object {prices, battery, priceUnit?, socEnd?, steps?, now?}; got ${show(input)}`,
    );
  // every planner's fields (the site planner's are planBattery's to route; the node checks its settings through here too)
  refuseUnknownKeys(input, PLANNER_FIELDS, '', 'a planner field');
  if (isObject(input.battery)) refuseUnknownKeys(input.battery, BATTERY_FIELDS, 'battery', 'a field of battery');
  const raw = input.prices;
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new ValidationError(
      'prices',
      `must be a non-empty array of {start, end, price}; got ${Array.isArray(raw) ? 'an empty array' : show(raw)}`,
    );
  }
  if (raw.length > MAX_PRICE_SLOTS) throw tooLong('prices', MAX_PRICE_SLOTS, raw.length, 'slots');
  let slots: PriceSlot[] = [];
  raw.forEach((r, i) => {
    const slot = parseSlot(r, i);
    const prev = slots[i - 1];
    if (prev && slot.start < prev.end) {
      throw new ValidationError(
        `prices[${i}].start`,
        `must not be before the end of prices[${i - 1}] (${new Date(prev.end).toISOString()}): slots sorted by time, not overlapping; got ${new Date(slot.start).toISOString()}`,
        'unprocessable',
      );
    }
    slots.push(slot);
  });
  const priceUnit = parsePriceUnit(input.priceUnit);
  const battery = parseBattery(input.battery);
  let socEnd: number | undefined;
  if (!absent(input.socEnd)) {
    socEnd = numberIn(
      input.socEnd,
      'socEnd',
      battery.socMin,
      battery.socMax,
      false,
      `a SOC in % within battery.socMin and battery.socMax [${battery.socMin}, ${battery.socMax}]`,
    );
  }
  let steps = DEFAULT_STEPS;
  if (!absent(input.steps)) {
    steps = numberIn(
      input.steps,
      'steps',
      MIN_STEPS,
      MAX_STEPS,
      false,
      `a whole number within [${MIN_STEPS}, ${MAX_STEPS}]`,
    );
    if (!Number.isInteger(steps))
      throw new ValidationError(
        'steps',
        `must be a whole number within [${MIN_STEPS}, ${MAX_STEPS}]; got ${steps}`,
        'unprocessable',
      );
  }
  if (!absent(input.now)) {
    const now = parseTime(input.now, 'now');
    slots = slots.filter((s) => s.end > now).map((s) => (s.start < now ? { ...s, start: now } : s));
    if (slots.length === 0) {
      throw new ValidationError(
        'prices',
        `must have a slot that ends after now (${new Date(now).toISOString()}); every slot is in the past`,
        'unprocessable',
      );
    }
  }
  return { slots, battery, priceUnit, socEnd, steps };
}
