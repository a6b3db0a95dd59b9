/**
 * The `ems-schedule` node's settings from its saved properties: units, power limits (each
 * refusal names the property), the context store, dry run and the delivery check.
 */
import {
  limited,
  noLimitWarning,
  POWER_LIMIT_KEYS,
  LIMITS,
  parseCurtailmentUnit,
  parsePowerUnit,
  powerLimitsOf,
  type PowerLimitKey,
  type ScheduleSettings,
  show,
  ValidationError,
} from '../../protocol';
import { fail, type FlowNode, type VerifySettings, verifySettingsOf } from '../shared';

export interface NodeSettings extends ScheduleSettings {
  /** The site's PV power, W (0 = unknown): converts a `%` curtailment. */
  pvPeakPower: number;
  /** The context store the schedule is kept in ('' = the default store). */
  store: string;
  dryRun: boolean;
  /** The delivery check: on, reports per slot on output 2 (verify.ts). */
  verify: boolean;
  /** Its settings (tolerance; checked only with verify on). */
  check: VerifySettings;
  /** The power limits not set: each is the site's rating (GET /sites), checked before a schedule plays. */
  rating: PowerLimitKey[];
  /** The power limits turned off ("none", a flow saved before limits were on by default). */
  none: PowerLimitKey[];
}

const bool = (v: unknown, fallback: boolean, field: string): boolean => {
  if (v === undefined || v === '' || v === null) return fallback;
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw new ValidationError(field, `must be true or false; got ${show(v)}`);
};

/** The node's settings from its properties (each refusal names the property). */
function settingsOf(props: Record<string, unknown>): NodeSettings {
  const limitedNumber = (key: 'pvPeakPower') => limited(props[key], LIMITS[key], key);
  const power = powerLimitsOf(props);
  const store = props.store === undefined || props.store === null ? '' : props.store;
  if (typeof store !== 'string' || !/^[A-Za-z0-9_]{0,64}$/.test(store.trim())) {
    throw new ValidationError(
      'store',
      `must be the name of a context store of the Node-RED settings (letters, digits, _), or empty for the default store; got ${show(props.store)}`,
    );
  }
  return {
    essUnit: parsePowerUnit(props.essUnit || 'kW', 'essUnit'),
    curtailmentUnit: parseCurtailmentUnit(props.curtailmentUnit || 'kW', 'curtailmentUnit'),
    gridUnit: parsePowerUnit(props.gridUnit || 'kW', 'gridUnit'),
    ...power.values,
    rating: power.rating,
    none: power.none,
    allowMaximizeGridImport: bool(props.allowMaximizeGridImport, true, 'allowMaximizeGridImport'),
    pvPeakPower: limitedNumber('pvPeakPower'),
    store: store.trim(),
    dryRun: bool(props.dryRun, false, 'dryRun'),
    verify: bool(props.verify, false, 'verify'),
    // Per slot: the node has no verifyEvery (a slot's window is checked at its end).
    check: { ...verifySettingsOf(props), everyMs: 0 },
  };
}

/** The node's settings, or why they are refused (reported at deploy; every message is refused with it). */
export function loadSettings(flow: FlowNode<Record<string, unknown>>): { settings?: NodeSettings; error?: unknown } {
  try {
    const settings = settingsOf(flow.props);
    // A limit turned off (a flow saved before limits were on by default): said once, at deploy.
    const unlimited = noLimitWarning(settings.none, POWER_LIMIT_KEYS);
    if (unlimited) flow.node.warn(unlimited);
    return { settings };
  } catch (error) {
    fail(flow, undefined, error);
    return { error };
  }
}
