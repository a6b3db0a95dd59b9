/**
 * Builds a validated steering command from a message and a site-steer node's settings.
 * Pure (no Node-RED): the node evaluates its TypedInputs and passes the values here.
 *
 * - msg.payload as a number: the mode's main value in the node's unit.
 * - msg.payload as an object: energyStorage, curtailment, gridTarget, deadband, upperLimit,
 *   lowerLimit (number in the node's unit or {value, unit}), maximizeGridImport, validFrom,
 *   validUntil, duration; or a body in the API's own shape (energyStorageSetting /
 *   productionCurtailment / setting / setpoint; a grid-limits body has the same field names).
 * - Components neither the node nor the message sets are left out (partial update).
 * - Safety limits refuse a value beyond maxEssPower / maxCurtailment / maxGridPower /
 *   maxGridLimit set as numbers (grid limits: steer-grid-limits.ts; a limit not set is the
 *   site's rating, checked once the site list is known: steer-ratings.ts), a
 *   maximizeGridImport: true when allowMaximizeGridImport is off, and a validUntil beyond the
 *   config node's maxValidity; nothing is sent.
 */
import {
  accepts,
  checkMaxValidity,
  powerLimitsOf,
  type PowerLimitKey,
  checkPowerLimits,
  type CurtailmentUnit,
  type CurtailmentValue,
  limited,
  LIMITS,
  MINUTE_MS,
  numberOf,
  parseCurtailmentUnit,
  parseCurtailmentValue,
  parseOptionalTime,
  parsePowerUnit,
  parsePowerValue,
  parseTime,
  type PowerUnit,
  type PowerValue,
  quarterHourValidUntil,
  show,
  type SteerMode,
  STEER_MODES,
  MODE_COMPONENTS,
  validateValidity,
  ValidationError,
} from '../../protocol';
import type { SteeringCommand } from '../../runtime';
import { parseGridLimits } from './steer-grid-limits';

/** The modes and what each sends: protocol/steer-modes.ts (the editor's rows come from the same table). */
export type { SteerMode };

export interface SteerSettings {
  mode: SteerMode;
  essUnit: PowerUnit;
  curtailmentUnit: CurtailmentUnit;
  gridTargetUnit: PowerUnit;
  deadbandUnit: PowerUnit;
  upperLimitUnit: PowerUnit;
  lowerLimitUnit: PowerUnit;
  maximizeGridImport: 'unchanged' | 'true' | 'false' | 'msg';
  validity: 'duration' | 'quarter-hour' | 'msg';
  duration: number;
  /** The node's own power limits, W (0 = not a number: the site's rating, or none; see `rating`, `none`). */
  maxEssPower: number;
  maxCurtailment: number;
  /** Bound of |grid setpoint| and of the deadband, W. */
  maxGridPower: number;
  /** Bound of |upperLimit| and |lowerLimit| in mode grid-limits, W. */
  maxGridLimit: number;
  /** The power limits not set: each is the site's rating (GET /sites), checked before sending. */
  rating: PowerLimitKey[];
  /** The power limits turned off ("none", a flow saved before limits were on by default). */
  none: PowerLimitKey[];
  /** false: maximizeGridImport: true is refused, wherever it comes from. */
  allowMaximizeGridImport: boolean;
  /** What stop does in modes curtailment and combined: let the last limit expire, or lift it. */
  stopAction: 'expire' | 'lift';
  /** The site's PV peak power, W (0 = unknown): the "no curtailment" value of a lift. */
  pvPeakPower: number;
}

/** Limits of the config node that a command must obey. */
export interface CommandLimits {
  /** Longest validity, ms from now (undefined = none). */
  maxValidityMs?: number;
}

/** Values of the node's TypedInputs, evaluated against the message ('' / undefined = not set). */
export interface NodeValues {
  ess?: unknown;
  curtailment?: unknown;
  gridTarget?: unknown;
  deadband?: unknown;
  upperLimit?: unknown;
  lowerLimit?: unknown;
  /** msg.maximizeGridImport, used when the setting is 'msg'. */
  msgMaximizeGridImport?: unknown;
  /** msg.validUntil / msg.validFrom, used when validity is 'msg'. */
  msgValidUntil?: unknown;
  msgValidFrom?: unknown;
}

const OBJECT_KEYS = [
  'energyStorage',
  'curtailment',
  'gridTarget',
  'deadband',
  'upperLimit',
  'lowerLimit',
  'maximizeGridImport',
  'validFrom',
  'validUntil',
  'duration',
];
const API_KEYS = [
  'energyStorageSetting',
  'productionCurtailment',
  'maximizeGridImport',
  'setting',
  'setpoint',
  'deadband',
  'upperLimit',
  'lowerLimit',
  'validFrom',
  'validUntil',
];

export function settingsOf(c: Record<string, unknown>): SteerSettings {
  const mode = (c.mode ?? 'ess') as SteerMode;
  if (!STEER_MODES.includes(mode))
    throw new ValidationError('mode', `must be one of ${STEER_MODES.join(', ')}; got ${show(c.mode)}`);
  // The numeric settings: range and default from the table of limits (protocol/limits.ts), as the editor checks them.
  const num = (key: 'pvPeakPower') => limited(c[key], LIMITS[key], key);
  const power = powerLimitsOf(c);
  const validity = (c.validity ?? 'quarter-hour') as SteerSettings['validity'];
  if (!['duration', 'quarter-hour', 'msg'].includes(validity))
    throw new ValidationError('validity', `must be one of duration, quarter-hour, msg; got ${show(c.validity)}`);
  const mgi = (c.maximizeGridImport ?? 'unchanged') as SteerSettings['maximizeGridImport'];
  if (!['unchanged', 'true', 'false', 'msg'].includes(mgi))
    throw new ValidationError(
      'maximizeGridImport',
      `must be one of unchanged, true, false, msg; got ${show(c.maximizeGridImport)}`,
    );
  // The duration counts only with validity 'duration' (the editor checks it only then); otherwise a bad one is not used.
  const given = numberOf(c.duration, LIMITS.duration.dflt);
  const duration =
    validity === 'duration'
      ? limited(c.duration, LIMITS.duration, 'duration')
      : accepts(LIMITS.duration, given)
        ? given
        : LIMITS.duration.dflt;
  const allow = c.allowMaximizeGridImport;
  if (![undefined, '', true, false, 'true', 'false'].includes(allow as never))
    throw new ValidationError('allowMaximizeGridImport', `must be true or false; got ${show(allow)}`);
  const stopAction = (c.stopAction || 'expire') as SteerSettings['stopAction'];
  if (!['expire', 'lift'].includes(stopAction))
    throw new ValidationError('stopAction', `must be one of expire, lift; got ${show(c.stopAction)}`);
  return {
    mode,
    essUnit: parsePowerUnit(c.essUnit ?? 'kW', 'essUnit'),
    curtailmentUnit: parseCurtailmentUnit(c.curtailmentUnit ?? 'kW', 'curtailmentUnit'),
    gridTargetUnit: parsePowerUnit(c.gridTargetUnit ?? 'kW', 'gridTargetUnit'),
    deadbandUnit: parsePowerUnit(c.deadbandUnit ?? 'kW', 'deadbandUnit'),
    upperLimitUnit: parsePowerUnit(c.upperLimitUnit || 'kW', 'upperLimitUnit'),
    lowerLimitUnit: parsePowerUnit(c.lowerLimitUnit || 'kW', 'lowerLimitUnit'),
    maximizeGridImport: mgi,
    validity,
    duration,
    ...power.values,
    rating: power.rating,
    none: power.none,
    allowMaximizeGridImport: allow !== false && allow !== 'false',
    stopAction,
    pvPeakPower: num('pvPeakPower'),
  };
}

/** The config node's maxValidity (minutes; range and default: LIMITS.maxValidity) in ms, as the runtime reads it. */
export function maxValidityMsOf(v: unknown): number {
  return limited(v, LIMITS.maxValidity, 'maxValidity', { prefix: '(config node) ' }) * MINUTE_MS;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
const isSet = (v: unknown) => v !== undefined && v !== null && v !== '';

export function buildCommand(
  s: SteerSettings,
  site: string,
  payload: unknown,
  values: NodeValues,
  now = Date.now(),
  limits: CommandLimits = {},
): SteeringCommand {
  const obj = isObject(payload) ? payload : undefined;
  const apiShape =
    obj &&
    Object.keys(obj).some((k) => ['energyStorageSetting', 'productionCurtailment', 'setting', 'setpoint'].includes(k));
  const allowed = apiShape ? API_KEYS : OBJECT_KEYS;
  if (obj) {
    for (const k of Object.keys(obj)) {
      if (!allowed.includes(k))
        throw new ValidationError(
          /^[A-Za-z_$][\w$]*$/.test(k) ? `msg.payload.${k}` : `msg.payload[${JSON.stringify(k)}]`,
          `is not a steering field; accepted: ${OBJECT_KEYS.join(', ')} (or the API's own fields)`,
        );
    }
  }
  // The components, each from the payload object first, then from the node's TypedInput.
  const pick = (key: string, nodeValue: unknown) =>
    obj && obj[key] !== undefined ? obj[key] : isObject(nodeValue) ? undefined : nodeValue;
  let ess: unknown, curt: unknown, grid: unknown, dead: unknown, mgi: unknown, upper: unknown, lower: unknown;
  let mgiField = 'msg.payload.maximizeGridImport';
  if (apiShape) {
    ess = obj!.energyStorageSetting ?? (s.mode === 'ess' ? obj!.setting : undefined);
    curt = obj!.productionCurtailment ?? (s.mode === 'curtailment' ? obj!.setting : undefined);
    grid = obj!.setpoint;
    dead = obj!.deadband;
    [upper, lower] = [obj!.upperLimit, obj!.lowerLimit];
    mgi = obj!.maximizeGridImport;
    if (obj!.setting !== undefined && s.mode !== 'ess' && s.mode !== 'curtailment')
      throw new ValidationError(
        'msg.payload.setting',
        `is the body of mode ess or curtailment; this node is in mode ${s.mode}`,
      );
  } else {
    const main = obj ? undefined : payload;
    ess = pick('energyStorage', values.ess ?? (s.mode === 'ess' || s.mode === 'combined' ? main : undefined));
    curt = pick('curtailment', values.curtailment ?? (s.mode === 'curtailment' ? main : undefined));
    grid = pick('gridTarget', values.gridTarget ?? (s.mode === 'grid-target' ? main : undefined));
    dead = pick('deadband', values.deadband);
    [upper, lower] = [pick('upperLimit', values.upperLimit), pick('lowerLimit', values.lowerLimit)];
    mgi = obj?.maximizeGridImport;
  }
  if (mgi === undefined && s.mode === 'combined') {
    mgiField = s.maximizeGridImport === 'msg' ? 'msg.maximizeGridImport' : 'maximizeGridImport';
    if (s.maximizeGridImport === 'true') mgi = true;
    else if (s.maximizeGridImport === 'false') mgi = false;
    else if (s.maximizeGridImport === 'msg') mgi = values.msgMaximizeGridImport;
  }
  const given: Record<string, unknown> = {
    energyStorage: ess,
    curtailment: curt,
    gridTarget: grid,
    deadband: dead,
    upperLimit: upper,
    lowerLimit: lower,
    maximizeGridImport: mgi,
  };
  for (const [k, v] of Object.entries(given)) {
    if (isSet(v) && !(MODE_COMPONENTS[s.mode] as readonly string[]).includes(k))
      throw new ValidationError(
        k,
        `is not used in mode ${s.mode}; use mode combined (energy storage, curtailment, maximize grid import), grid-target or grid-limits`,
      );
  }

  const cmd: SteeringCommand = { site, kind: s.mode === 'portfolio' ? 'ess' : s.mode };
  if (isSet(ess)) cmd.energyStorageSetting = parsePowerValue(ess, 'energyStorage', s.essUnit);
  if (isSet(curt)) cmd.productionCurtailment = parseCurtailmentValue(curt, 'curtailment', s.curtailmentUnit);
  if (isSet(mgi)) {
    if (typeof mgi !== 'boolean')
      throw new ValidationError('maximizeGridImport', `must be true or false; got ${show(mgi)}`);
    if (mgi && !s.allowMaximizeGridImport)
      throw new ValidationError(
        mgiField,
        'is true, but this node forbids maximize grid import (allowMaximizeGridImport is off); nothing was sent',
        'unprocessable',
      );
    cmd.maximizeGridImport = mgi;
  }
  if (s.mode === 'grid-target') {
    if (!isSet(grid))
      throw new ValidationError(
        'gridTarget',
        "is required in mode grid-target: a number in the node's unit or {value, unit}",
      );
    cmd.gridTarget = { setpoint: parsePowerValue(grid, 'gridTarget', s.gridTargetUnit) };
    if (isSet(dead)) {
      cmd.gridTarget.deadband = parsePowerValue(dead, 'deadband', s.deadbandUnit);
      if (cmd.gridTarget.deadband.value < 0) throw new ValidationError('deadband', 'must be 0 or more');
    }
  }
  if (s.mode === 'grid-limits') {
    const from = (k: string) => (obj && obj[k] !== undefined ? `msg.payload.${k}` : k);
    cmd.gridLimits = parseGridLimits(s, upper, lower, { upper: from('upperLimit'), lower: from('lowerLimit') });
  }
  if (
    !cmd.energyStorageSetting &&
    !cmd.productionCurtailment &&
    cmd.maximizeGridImport === undefined &&
    !cmd.gridTarget &&
    !cmd.gridLimits
  ) {
    throw new ValidationError(
      'msg.payload',
      `sets nothing: send a number (the ${mainName(s.mode)} in ${mainUnit(s)}) or an object with ${MODE_COMPONENTS[s.mode].join(', ')}`,
    );
  }
  // The node's power limits (protocol/steer-modes.ts: the editor checks with the same code).
  checkPowerLimits(s, cmd.energyStorageSetting, cmd.productionCurtailment, cmd.gridTarget);
  Object.assign(cmd, validity(s, obj, values, now, limits.maxValidityMs));
  return cmd;
}

function validity(
  s: SteerSettings,
  obj: Record<string, unknown> | undefined,
  values: NodeValues,
  now: number,
  maxValidityMs?: number,
) {
  const fromField = obj?.validFrom !== undefined ? 'msg.payload.validFrom' : 'msg.validFrom';
  const from = parseOptionalTime(obj?.validFrom ?? values.msgValidFrom, fromField);
  const untilRaw = obj?.validUntil ?? (s.validity === 'msg' ? values.msgValidUntil : undefined);
  let until: number;
  // Where validUntil came from, for a refusal by maxValidity, and the value as given.
  let field: string;
  let got: string | undefined;
  if (isSet(untilRaw))
    until = parseTime(untilRaw, (field = obj?.validUntil !== undefined ? 'msg.payload.validUntil' : 'msg.validUntil'));
  else if (obj?.duration !== undefined || s.validity === 'duration') {
    const raw = obj?.duration;
    const d = raw === undefined ? s.duration : typeof raw === 'number' || typeof raw === 'string' ? Number(raw) : NaN;
    if (!Number.isFinite(d) || d <= 0)
      throw new ValidationError(
        'msg.payload.duration',
        `must be a positive number of minutes; got ${show(obj?.duration)}`,
      );
    until = (from ?? now) + d * MINUTE_MS;
    [field, got] = [raw === undefined ? 'duration' : 'msg.payload.duration', `${d} min`];
  } else if (s.validity === 'quarter-hour') {
    until = quarterHourValidUntil(from ?? now);
    [field, got] = ['validity', 'the end of the quarter hour'];
  } else
    throw new ValidationError(
      'validUntil',
      'is required when validity is "msg": msg.validUntil or msg.payload.validUntil (epoch ms, ISO 8601 or Date), or msg.payload.duration in minutes',
    );
  const v = validateValidity({ validFrom: from, validUntil: until }, now);
  // A validUntil derived from a validFrom that itself lies beyond the limit: name validFrom.
  if (from !== undefined && !isSet(untilRaw) && maxValidityMs !== undefined && from - now >= maxValidityMs)
    [field, got] = [fromField, new Date(from).toISOString()];
  checkMaxValidity(v.validUntil, maxValidityMs, now, field, got);
  return v;
}

/**
 * The "no curtailment" signal that stop sends with stopAction 'lift': a curtailment of the PV
 * peak power until `knownUntil` (the validUntil of the curtailment in force as the node knows
 * it) or, if none is known, the end of the quarter hour; never beyond maxValidity.
 */
export function liftCommand(
  s: SteerSettings,
  site: string,
  knownUntil: number | undefined,
  now = Date.now(),
  limits: CommandLimits = {},
): SteeringCommand {
  if (!(s.pvPeakPower > 0)) {
    throw new ValidationError(
      'pvPeakPower',
      'must be set (the site\'s PV peak power in W) for stop with stopAction "lift": stop sends "no curtailment" as a curtailment to that power; nothing was sent',
    );
  }
  let validUntil = knownUntil !== undefined && knownUntil > now ? knownUntil : quarterHourValidUntil(now);
  if (limits.maxValidityMs !== undefined) validUntil = Math.min(validUntil, now + limits.maxValidityMs);
  const cmd: SteeringCommand = {
    site,
    kind: 'curtailment',
    productionCurtailment: { value: s.pvPeakPower, unit: 'W' },
    validUntil,
  };
  checkPowerLimits(s, undefined, cmd.productionCurtailment);
  return cmd;
}

function mainName(m: SteerMode): string {
  return m === 'curtailment'
    ? 'production limit'
    : m === 'grid-target'
      ? 'grid setpoint'
      : 'battery power (positive discharges, negative charges)';
}
function mainUnit(s: SteerSettings): string {
  return s.mode === 'curtailment' ? s.curtailmentUnit : s.mode === 'grid-target' ? s.gridTargetUnit : s.essUnit;
}
