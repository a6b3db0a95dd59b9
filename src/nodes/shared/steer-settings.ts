/**
 * The settings of a site-steer node, read and checked once at
 * deploy: its mode, units, validity, power limits (on by default: a limit not set is the site's
 * rating, one turned off is listed in `none`), maximize grid import, stop action, PV peak power.
 */
import {
  accepts,
  limited,
  LIMITS,
  MINUTE_MS,
  numberOf,
  parseCurtailmentUnit,
  parsePowerUnit,
  powerLimitsOf,
  type CurtailmentUnit,
  type PowerLimitKey,
  type PowerUnit,
  show,
  type SteerMode,
  STEER_MODES,
  ValidationError,
} from '../../protocol';

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
