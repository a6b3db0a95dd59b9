/**
 * Schedules: a list of time slots, each with the steering a site should get from its
 * start to its end, checked as a whole before anything is sent (the runs a player sends are
 * made of them in schedule-runs.ts). Pure (no I/O, no clock: `now` is passed in). Every refusal
 * names the slot and the field (`msg.payload[3].energyStorage`).
 */
import { SERVICE } from './limits';
import { ValidationError } from './errors';
import { parseCurtailmentValue, parsePowerUnit, parsePowerValue, parseNumber, show, toWatts } from './units';
import { MAX_DATE_MS, MINUTE_MS, parseTime } from './time';
import type { CurtailmentUnit, CurtailmentValue, PowerUnit, PowerValue } from './types';

/** Most slots one schedule may have (a week of quarter hours is 672); a limits-table row is proposed. */
export const MAX_SLOTS = SERVICE.maxScheduleSlots;

/** The units a number in a slot is read in. */
interface ScheduleUnits {
  essUnit: PowerUnit;
  curtailmentUnit: CurtailmentUnit;
  /** Grid target, deadband and grid limits. */
  gridUnit: PowerUnit;
}

/** The node's safety limits, W (0 = none), as in site steer. */
export interface ScheduleLimits {
  maxEssPower: number;
  maxCurtailment: number;
  /** Bound of |grid target| and of the deadband. */
  maxGridPower: number;
  /** Bound of |upper| and |lower| grid limit. */
  maxGridLimit: number;
  /** false: maximizeGridImport: true is refused. */
  allowMaximizeGridImport: boolean;
}

export type ScheduleSettings = ScheduleUnits & ScheduleLimits;

/** What one slot sets, in the components of the API (SteeringCommand's fields). */
export interface SlotSetting {
  energyStorageSetting?: PowerValue;
  productionCurtailment?: CurtailmentValue;
  maximizeGridImport?: boolean;
  gridTarget?: { setpoint: PowerValue; deadband?: PowerValue };
  gridLimits?: { upperLimit?: PowerValue; lowerLimit?: PowerValue };
}

/** A checked slot: its index in the message, its times (epoch ms) and what it sets. */
export interface ScheduleSlot {
  index: number;
  start: number;
  end: number;
  setting: SlotSetting;
}

/** One request's worth of a schedule: slots `first`..`last` (indices), from `start` to `end`. */
export interface ScheduleRun {
  start: number;
  end: number;
  first: number;
  last: number;
  setting: SlotSetting;
  /** The slots it covers (the part of each within the run). */
  slots: Array<{ index: number; start: number; end: number }>;
}

/** The fields a slot may have. */
const SLOT_KEYS = [
  'start',
  'end',
  'duration',
  'energyStorage',
  'curtailment',
  'maximizeGridImport',
  'gridTarget',
  'deadband',
  'gridLimits',
] as const;
/** Fields that are read by nothing but accepted: the price → battery planner's slots carry them. */
const INFO_KEYS = ['price', 'energyKWh', 'socStart', 'socEnd'] as const;

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
const isSet = (v: unknown) => v !== undefined && v !== null;
const iso = (t: number) => new Date(t).toISOString();
const sub = (field: string, key: string) =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? `${field}.${key}` : `${field}[${JSON.stringify(key)}]`;

/**
 * The slots of a schedule message, checked as a whole: `payload` is an array of slots or
 * `{ slots, unit }` (`unit`: the unit of every number in the slots, instead of the node's).
 * Sorted, not overlapping, each ending after its start, every value within the node's limits,
 * not all ended at `now`. Throws a ValidationError naming the slot and field; returns every
 * slot (those that ended too; the player skips them).
 */
export function parseSlots(payload: unknown, s: ScheduleSettings, now: number, field = 'msg.payload'): ScheduleSlot[] {
  let list: unknown = payload;
  let units: ScheduleUnits = s;
  let at = field;
  if (isObject(payload)) {
    if (!Array.isArray(payload.slots))
      throw new ValidationError(
        `${field}.slots`,
        `must be an array of slots when msg.payload is an object ({ slots, unit }); got ${show(payload.slots)}`,
      );
    list = payload.slots;
    at = `${field}.slots`;
    if (isSet(payload.unit)) {
      const unit = parsePowerUnit(payload.unit, `${field}.unit`);
      units = { essUnit: unit, curtailmentUnit: unit, gridUnit: unit };
    }
  }
  if (!Array.isArray(list)) {
    throw new ValidationError(
      field,
      `must be an array of slots ({start, end or duration, energyStorage, curtailment, maximizeGridImport, gridTarget, deadband, gridLimits}), { slots, unit }, or "stop"; got ${show(payload)}`,
    );
  }
  if (list.length === 0) throw new ValidationError(at, 'must have at least one slot; nothing was sent');
  if (list.length > MAX_SLOTS)
    throw new ValidationError(
      at,
      `must have at most ${MAX_SLOTS} slots; got ${list.length}; nothing was sent`,
      'unprocessable',
    );
  const slots: ScheduleSlot[] = [];
  for (let i = 0; i < list.length; i++) {
    const path = `${at}[${i}]`;
    const slot = parseSlot(list[i], i, path, units, s);
    const prev = slots[i - 1];
    if (prev && slot.start < prev.start) {
      throw new ValidationError(
        `${path}.start`,
        `must not be before the start of ${at}[${i - 1}] (${iso(prev.start)}): slots must be sorted by time; got ${iso(slot.start)}; nothing was sent`,
        'unprocessable',
      );
    }
    if (prev && slot.start < prev.end) {
      throw new ValidationError(
        `${path}.start`,
        `overlaps ${at}[${i - 1}], which ends at ${iso(prev.end)}; got ${iso(slot.start)}; nothing was sent`,
        'unprocessable',
      );
    }
    slots.push(slot);
  }
  const last = slots[slots.length - 1];
  if (last.end <= now) {
    throw new ValidationError(
      at,
      `has only slots in the past: the last one ended at ${iso(last.end)}; nothing was sent`,
      'unprocessable',
    );
  }
  return slots;
}

/**
 * One slot: `{ start, end | duration, energyStorage?, curtailment?, maximizeGridImport?, gridTarget?,
 * deadband?, gridLimits?: { upper?, lower? } }`; times are epoch ms, ISO 8601 or Date, a duration is
 * in minutes, values a number in the node's unit or `{value, unit}`.
 */
function parseSlot(raw: unknown, index: number, f: string, u: ScheduleUnits, s: ScheduleLimits): ScheduleSlot {
  if (!isObject(raw))
    throw new ValidationError(f, `must be a slot object {start, end or duration, ...}; got ${show(raw)}`);
  for (const k of Object.keys(raw)) {
    if (!(SLOT_KEYS as readonly string[]).includes(k) && !(INFO_KEYS as readonly string[]).includes(k)) {
      throw new ValidationError(sub(f, k), `is not a slot field; accepted: ${SLOT_KEYS.join(', ')}`);
    }
  }
  if (!isSet(raw.start)) throw new ValidationError(`${f}.start`, 'is required: epoch ms, an ISO 8601 string or a Date');
  const start = parseTime(raw.start, `${f}.start`);
  let end: number;
  if (isSet(raw.end) && isSet(raw.duration))
    throw new ValidationError(`${f}.duration`, 'must not be given with end: give end or duration (minutes), not both');
  if (isSet(raw.end)) end = parseTime(raw.end, `${f}.end`);
  else if (isSet(raw.duration)) {
    const minutes = typeof raw.duration === 'number' || typeof raw.duration === 'string' ? Number(raw.duration) : NaN;
    if (!Number.isFinite(minutes) || minutes <= 0)
      throw new ValidationError(`${f}.duration`, `must be a positive number of minutes; got ${show(raw.duration)}`);
    end = start + Math.round(minutes * MINUTE_MS);
  } else throw new ValidationError(`${f}.end`, 'is required (epoch ms, ISO 8601 or Date), or duration in minutes');
  if (!(end > start))
    throw new ValidationError(
      isSet(raw.end) ? `${f}.end` : `${f}.duration`,
      `must be after the slot's start (${iso(start)}); got ${iso(end)}`,
      'unprocessable',
    );

  const setting: SlotSetting = {};
  if (isSet(raw.energyStorage))
    setting.energyStorageSetting = parsePowerValue(raw.energyStorage, `${f}.energyStorage`, u.essUnit);
  if (isSet(raw.curtailment))
    setting.productionCurtailment = parseCurtailmentValue(raw.curtailment, `${f}.curtailment`, u.curtailmentUnit);
  if (isSet(raw.maximizeGridImport)) {
    if (typeof raw.maximizeGridImport !== 'boolean')
      throw new ValidationError(
        `${f}.maximizeGridImport`,
        `must be true or false; got ${show(raw.maximizeGridImport)}`,
      );
    setting.maximizeGridImport = raw.maximizeGridImport;
  }
  if (isSet(raw.gridTarget)) {
    setting.gridTarget = { setpoint: parsePowerValue(raw.gridTarget, `${f}.gridTarget`, u.gridUnit) };
    if (isSet(raw.deadband)) {
      setting.gridTarget.deadband = parsePowerValue(raw.deadband, `${f}.deadband`, u.gridUnit);
      if (setting.gridTarget.deadband.value < 0)
        throw new ValidationError(`${f}.deadband`, `must be 0 or more; got ${setting.gridTarget.deadband.value}`);
    }
  } else if (isSet(raw.deadband))
    throw new ValidationError(`${f}.deadband`, 'is used only with gridTarget (the band around its setpoint)');
  if (isSet(raw.gridLimits)) {
    const gridLimits = raw.gridLimits;
    if (!isObject(gridLimits))
      throw new ValidationError(
        `${f}.gridLimits`,
        `must be {upper, lower} (at least one; each a number in the node's grid unit or {value, unit}); got ${show(gridLimits)}`,
      );
    for (const k of Object.keys(gridLimits))
      if (k !== 'upper' && k !== 'lower')
        throw new ValidationError(sub(`${f}.gridLimits`, k), 'is not a grid limit; accepted: upper, lower');
    setting.gridLimits = {};
    if (isSet(gridLimits.upper))
      setting.gridLimits.upperLimit = parsePowerValue(gridLimits.upper, `${f}.gridLimits.upper`, u.gridUnit);
    if (isSet(gridLimits.lower))
      setting.gridLimits.lowerLimit = parsePowerValue(gridLimits.lower, `${f}.gridLimits.lower`, u.gridUnit);
    if (!setting.gridLimits.upperLimit && !setting.gridLimits.lowerLimit)
      throw new ValidationError(`${f}.gridLimits`, 'sets no limit: give upper, lower or both');
  }
  checkSetting(setting, s, slotField(f));
  return { index, start, end, setting };
}

/** Where each part of a setting came from in a slot, for refusals. */
type SettingField = (
  part:
    | 'energyStorage'
    | 'curtailment'
    | 'maximizeGridImport'
    | 'gridTarget'
    | 'deadband'
    | 'gridLimits.upper'
    | 'gridLimits.lower'
    | 'slot',
) => string;

const slotField =
  (f: string): SettingField =>
  (part) =>
    part === 'slot' ? f : `${f}.${part}`;

/**
 * Checks a setting against the node's limits and the service's rules: something set; within
 * maxEssPower, maxCurtailment (not a `%`: checked once converted), maxGridPower, maxGridLimit;
 * maximize grid import allowed; lower limit not above the upper; and no grid target together
 * with asset steering (the service ends the one with the other).
 */
function checkSetting(c: SlotSetting, s: ScheduleLimits, field: SettingField): void {
  const none = '; nothing was sent';
  const ess = c.energyStorageSetting;
  const curtailment = c.productionCurtailment;
  const asset = ess !== undefined || curtailment !== undefined || c.maximizeGridImport !== undefined;
  if (!asset && !c.gridTarget && !c.gridLimits) {
    throw new ValidationError(
      field('slot'),
      `sets nothing: give energyStorage, curtailment, maximizeGridImport, gridTarget or gridLimits (leave a gap between slots for no steering)${none}`,
    );
  }
  if (asset && c.gridTarget) {
    const other = ess ? 'energyStorage' : curtailment ? 'curtailment' : 'maximizeGridImport';
    throw new ValidationError(
      field('gridTarget'),
      `cannot be combined with ${other} in one slot: asset steering and grid target end each other on the service (only the last received request counts); use one or the other per slot${none}`,
      'unprocessable',
    );
  }
  if (ess && s.maxEssPower > 0 && Math.abs(toWatts(ess)) > s.maxEssPower) {
    throw new ValidationError(
      field('energyStorage'),
      `must be within the node's limit maxEssPower = ${s.maxEssPower} W (either sign); got ${ess.value} ${ess.unit}${none}`,
    );
  }
  if (
    curtailment &&
    curtailment.unit !== '%' &&
    s.maxCurtailment > 0 &&
    toWatts(curtailment as PowerValue) > s.maxCurtailment
  ) {
    throw new ValidationError(
      field('curtailment'),
      `must be within the node's limit maxCurtailment = ${s.maxCurtailment} W; got ${curtailment.value} ${curtailment.unit}${none}`,
    );
  }
  if (c.maximizeGridImport === true && !s.allowMaximizeGridImport) {
    throw new ValidationError(
      field('maximizeGridImport'),
      `is true, but this node forbids maximize grid import (allowMaximizeGridImport is off)${none}`,
      'unprocessable',
    );
  }
  const gridTarget = c.gridTarget;
  if (gridTarget && s.maxGridPower > 0 && Math.abs(toWatts(gridTarget.setpoint)) > s.maxGridPower) {
    throw new ValidationError(
      field('gridTarget'),
      `must be within the node's limit maxGridPower = ${s.maxGridPower} W (either sign); got ${gridTarget.setpoint.value} ${gridTarget.setpoint.unit}${none}`,
    );
  }
  if (gridTarget?.deadband && s.maxGridPower > 0 && toWatts(gridTarget.deadband) > s.maxGridPower) {
    throw new ValidationError(
      field('deadband'),
      `must be within the node's limit maxGridPower = ${s.maxGridPower} W; got ${gridTarget.deadband.value} ${gridTarget.deadband.unit}${none}`,
    );
  }
  const gridLimits = c.gridLimits;
  for (const [v, part] of [
    [gridLimits?.upperLimit, 'gridLimits.upper'],
    [gridLimits?.lowerLimit, 'gridLimits.lower'],
  ] as const) {
    if (v && s.maxGridLimit > 0 && Math.abs(toWatts(v)) > s.maxGridLimit) {
      throw new ValidationError(
        field(part),
        `must be within the node's limit maxGridLimit = ${s.maxGridLimit} W (either sign); got ${v.value} ${v.unit}${none}`,
      );
    }
  }
  if (
    gridLimits?.upperLimit &&
    gridLimits.lowerLimit &&
    toWatts(gridLimits.lowerLimit) > toWatts(gridLimits.upperLimit)
  ) {
    throw new ValidationError(
      field('gridLimits.lower'),
      `must not be above the upper limit (${gridLimits.upperLimit.value} ${gridLimits.upperLimit.unit}); got ${gridLimits.lowerLimit.value} ${gridLimits.lowerLimit.unit}${none}`,
      'unprocessable',
    );
  }
}

/** A stored setting (the player's saved state) read back: each value `{value, unit}`, checked again. */
export function parseSetting(raw: unknown, s: ScheduleLimits, field: string): SlotSetting {
  if (!isObject(raw)) throw new ValidationError(field, `must be a setting object; got ${show(raw)}`);
  const setting: SlotSetting = {};
  if (isSet(raw.energyStorageSetting))
    setting.energyStorageSetting = parsePowerValue(raw.energyStorageSetting, `${field}.energyStorageSetting`);
  if (isSet(raw.productionCurtailment))
    setting.productionCurtailment = parseCurtailmentValue(raw.productionCurtailment, `${field}.productionCurtailment`);
  if (isSet(raw.maximizeGridImport)) {
    if (typeof raw.maximizeGridImport !== 'boolean')
      throw new ValidationError(`${field}.maximizeGridImport`, 'must be true or false');
    setting.maximizeGridImport = raw.maximizeGridImport;
  }
  if (isObject(raw.gridTarget)) {
    setting.gridTarget = { setpoint: parsePowerValue(raw.gridTarget.setpoint, `${field}.gridTarget.setpoint`) };
    if (isSet(raw.gridTarget.deadband))
      setting.gridTarget.deadband = parsePowerValue(raw.gridTarget.deadband, `${field}.gridTarget.deadband`);
  }
  if (isObject(raw.gridLimits)) {
    setting.gridLimits = {};
    if (isSet(raw.gridLimits.upperLimit))
      setting.gridLimits.upperLimit = parsePowerValue(raw.gridLimits.upperLimit, `${field}.gridLimits.upperLimit`);
    if (isSet(raw.gridLimits.lowerLimit))
      setting.gridLimits.lowerLimit = parsePowerValue(raw.gridLimits.lowerLimit, `${field}.gridLimits.lowerLimit`);
  }
  checkSetting(setting, s, (part) => (part === 'slot' ? field : `${field}.${part}`));
  return setting;
}

/** A whole number of epoch ms from a stored value (the player's saved state). */
export function storedTime(v: unknown, field: string): number {
  const value = parseNumber(v, field);
  if (!Number.isInteger(value) || Math.abs(value) > MAX_DATE_MS)
    throw new ValidationError(field, `must be epoch milliseconds; got ${show(v)}`);
  return value;
}
