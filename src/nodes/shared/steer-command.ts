/**
 * Builds a validated steering command from a message and a site-steer node's settings.
 * Pure (no Node-RED): the node evaluates its TypedInputs and passes the values here. The
 * message forms it accepts are the node's input, in users' words: docs/nodes/ems-site-steer.md.
 * A value a safety limit refuses throws, naming the field: nothing is sent.
 */
import {
  checkMaxValidity,
  checkPowerLimits,
  MINUTE_MS,
  parseCurtailmentValue,
  parseOptionalTime,
  parsePowerValue,
  parseTime,
  quarterHourValidUntil,
  show,
  type SteerMode,
  MODE_COMPONENTS,
  validateValidity,
  ValidationError,
} from '../../protocol';
import type { SteeringCommand } from '../../runtime';
import { parseGridLimits } from './steer-grid-limits';
import type { SteerSettings } from './steer-settings';

// A command is built from these settings: they are found here too.
export { maxValidityMsOf, settingsOf, type SteerMode, type SteerSettings } from './steer-settings';

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

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
const isSet = (v: unknown) => v !== undefined && v !== null && v !== '';

/**
 * The command a message asks for. msg.payload is a number (the mode's main value in the node's
 * unit) or an object: energyStorage, curtailment, gridTarget, deadband, upperLimit, lowerLimit
 * (number in the node's unit or {value, unit}), maximizeGridImport, validFrom, validUntil,
 * duration; or a body in the API's own shape (API_MAIN_KEYS; a grid-limits body has the same
 * field names). Components neither the node nor the message sets are left out (partial update).
 */
export function buildCommand(
  s: SteerSettings,
  site: string,
  payload: unknown,
  values: NodeValues,
  now = Date.now(),
  limits: CommandLimits = {},
): SteeringCommand {
  const obj = isObject(payload) ? payload : undefined;
  const apiShape = !!obj && Object.keys(obj).some((k) => API_MAIN_KEYS.includes(k));
  if (obj) checkPayloadKeys(obj, apiShape ? API_KEYS : OBJECT_KEYS);
  const given = apiShape ? givenInApiShape(s, obj!, values) : givenByNode(s, obj, payload, values);
  checkModeComponents(s, given);
  const cmd = commandOf(s, site, given, obj);
  // The node's power limits set as numbers (protocol/steer-modes.ts: the editor checks with the same
  // code; grid limits: steer-grid-limits.ts). A limit not set is the site's rating, checked once the
  // site list is known: steer-ratings.ts.
  checkPowerLimits(s, cmd.energyStorageSetting, cmd.productionCurtailment, cmd.gridTarget);
  Object.assign(cmd, validity(s, obj, values, now, limits.maxValidityMs));
  return cmd;
}

/** The components a message gives (not yet parsed), and the field maximizeGridImport came from. */
interface Given {
  energyStorage: unknown;
  curtailment: unknown;
  gridTarget: unknown;
  deadband: unknown;
  upperLimit: unknown;
  lowerLimit: unknown;
  maximizeGridImport: unknown;
  mgiField: string;
}

/** The keys of a body in the API's own shape: one of them makes the payload one. */
const API_MAIN_KEYS = ['energyStorageSetting', 'productionCurtailment', 'setting', 'setpoint'];

function checkPayloadKeys(obj: Record<string, unknown>, allowed: string[]): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k))
      throw new ValidationError(
        /^[A-Za-z_$][\w$]*$/.test(k) ? `msg.payload.${k}` : `msg.payload[${JSON.stringify(k)}]`,
        `is not a steering field; accepted: ${OBJECT_KEYS.join(', ')} (or the API's own fields)`,
      );
  }
}

/** A body in the API's own shape: its fields as they are (`setting` is the body of mode ess or curtailment). */
function givenInApiShape(s: SteerSettings, obj: Record<string, unknown>, values: NodeValues): Given {
  if (obj.setting !== undefined && s.mode !== 'ess' && s.mode !== 'curtailment')
    throw new ValidationError(
      'msg.payload.setting',
      `is the body of mode ess or curtailment; this node is in mode ${s.mode}`,
    );
  return withNodeMgi(
    s,
    {
      energyStorage: obj.energyStorageSetting ?? (s.mode === 'ess' ? obj.setting : undefined),
      curtailment: obj.productionCurtailment ?? (s.mode === 'curtailment' ? obj.setting : undefined),
      gridTarget: obj.setpoint,
      deadband: obj.deadband,
      upperLimit: obj.upperLimit,
      lowerLimit: obj.lowerLimit,
      maximizeGridImport: obj.maximizeGridImport,
      mgiField: 'msg.payload.maximizeGridImport',
    },
    values,
  );
}

/** Each component from the payload object first, then from the node's TypedInput (a number payload: the mode's main value). */
function givenByNode(
  s: SteerSettings,
  obj: Record<string, unknown> | undefined,
  payload: unknown,
  values: NodeValues,
): Given {
  const pick = (key: string, nodeValue: unknown) =>
    obj && obj[key] !== undefined ? obj[key] : isObject(nodeValue) ? undefined : nodeValue;
  const main = obj ? undefined : payload;
  return withNodeMgi(
    s,
    {
      energyStorage: pick(
        'energyStorage',
        values.ess ?? (s.mode === 'ess' || s.mode === 'combined' ? main : undefined),
      ),
      curtailment: pick('curtailment', values.curtailment ?? (s.mode === 'curtailment' ? main : undefined)),
      gridTarget: pick('gridTarget', values.gridTarget ?? (s.mode === 'grid-target' ? main : undefined)),
      deadband: pick('deadband', values.deadband),
      upperLimit: pick('upperLimit', values.upperLimit),
      lowerLimit: pick('lowerLimit', values.lowerLimit),
      maximizeGridImport: obj?.maximizeGridImport,
      mgiField: 'msg.payload.maximizeGridImport',
    },
    values,
  );
}

/** In mode combined, maximizeGridImport the payload does not set comes from the node's setting (or msg.maximizeGridImport). */
function withNodeMgi(s: SteerSettings, g: Given, values: NodeValues): Given {
  if (g.maximizeGridImport !== undefined || s.mode !== 'combined') return g;
  g.mgiField = s.maximizeGridImport === 'msg' ? 'msg.maximizeGridImport' : 'maximizeGridImport';
  if (s.maximizeGridImport === 'true') g.maximizeGridImport = true;
  else if (s.maximizeGridImport === 'false') g.maximizeGridImport = false;
  else if (s.maximizeGridImport === 'msg') g.maximizeGridImport = values.msgMaximizeGridImport;
  return g;
}

const GIVEN_KEYS = [
  'energyStorage',
  'curtailment',
  'gridTarget',
  'deadband',
  'upperLimit',
  'lowerLimit',
  'maximizeGridImport',
] as const;

/** Refuses a component the node's mode does not send. */
function checkModeComponents(s: SteerSettings, g: Given): void {
  for (const k of GIVEN_KEYS) {
    if (isSet(g[k]) && !(MODE_COMPONENTS[s.mode] as readonly string[]).includes(k))
      throw new ValidationError(
        k,
        `is not used in mode ${s.mode}; use mode combined (energy storage, curtailment, maximize grid import), grid-target or grid-limits`,
      );
  }
}

/** The command of the given components, each parsed in its unit; refuses one that sets nothing. */
function commandOf(
  s: SteerSettings,
  site: string,
  g: Given,
  obj: Record<string, unknown> | undefined,
): SteeringCommand {
  const cmd: SteeringCommand = { site, kind: s.mode === 'portfolio' ? 'ess' : s.mode };
  if (isSet(g.energyStorage)) cmd.energyStorageSetting = parsePowerValue(g.energyStorage, 'energyStorage', s.essUnit);
  if (isSet(g.curtailment))
    cmd.productionCurtailment = parseCurtailmentValue(g.curtailment, 'curtailment', s.curtailmentUnit);
  if (isSet(g.maximizeGridImport)) cmd.maximizeGridImport = maximizeGridImportOf(s, g);
  if (s.mode === 'grid-target') cmd.gridTarget = gridTargetOf(s, g);
  if (s.mode === 'grid-limits') {
    const from = (k: string) => (obj && obj[k] !== undefined ? `msg.payload.${k}` : k);
    cmd.gridLimits = parseGridLimits(s, g.upperLimit, g.lowerLimit, {
      upper: from('upperLimit'),
      lower: from('lowerLimit'),
    });
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
  return cmd;
}

/** maximizeGridImport: true is refused when the node's allowMaximizeGridImport is off. */
function maximizeGridImportOf(s: SteerSettings, g: Given): boolean {
  const mgi = g.maximizeGridImport;
  if (typeof mgi !== 'boolean')
    throw new ValidationError('maximizeGridImport', `must be true or false; got ${show(mgi)}`);
  if (mgi && !s.allowMaximizeGridImport)
    throw new ValidationError(
      g.mgiField,
      'is true, but this node forbids maximize grid import (allowMaximizeGridImport is off); nothing was sent',
      'unprocessable',
    );
  return mgi;
}

function gridTargetOf(s: SteerSettings, g: Given): NonNullable<SteeringCommand['gridTarget']> {
  if (!isSet(g.gridTarget))
    throw new ValidationError(
      'gridTarget',
      "is required in mode grid-target: a number in the node's unit or {value, unit}",
    );
  const target: NonNullable<SteeringCommand['gridTarget']> = {
    setpoint: parsePowerValue(g.gridTarget, 'gridTarget', s.gridTargetUnit),
  };
  if (isSet(g.deadband)) {
    target.deadband = parsePowerValue(g.deadband, 'deadband', s.deadbandUnit);
    if (target.deadband.value < 0) throw new ValidationError('deadband', 'must be 0 or more');
  }
  return target;
}

/** validFrom and validUntil of the command; a validUntil beyond the config node's maxValidity is refused. */
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
    const minutes =
      raw === undefined ? s.duration : typeof raw === 'number' || typeof raw === 'string' ? Number(raw) : NaN;
    if (!Number.isFinite(minutes) || minutes <= 0)
      throw new ValidationError(
        'msg.payload.duration',
        `must be a positive number of minutes; got ${show(obj?.duration)}`,
      );
    until = (from ?? now) + minutes * MINUTE_MS;
    [field, got] = [raw === undefined ? 'duration' : 'msg.payload.duration', `${minutes} min`];
  } else if (s.validity === 'quarter-hour') {
    until = quarterHourValidUntil(from ?? now);
    [field, got] = ['validity', 'the end of the quarter hour'];
  } else
    throw new ValidationError(
      'validUntil',
      'is required when validity is "msg": msg.validUntil or msg.payload.validUntil (epoch ms, ISO 8601 or Date), or msg.payload.duration in minutes',
    );
  const checked = validateValidity({ validFrom: from, validUntil: until }, now);
  // A validUntil derived from a validFrom that itself lies beyond the limit: name validFrom.
  if (from !== undefined && !isSet(untilRaw) && maxValidityMs !== undefined && from - now >= maxValidityMs)
    [field, got] = [fromField, new Date(from).toISOString()];
  checkMaxValidity(checked.validUntil, maxValidityMs, now, field, got);
  return checked;
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
