/**
 * The parts of the `ems-schedule` node that need no Node-RED: its settings, a `%` curtailment
 * of a slot converted to W, the dry-run plan, the state it saves in its context (and reading
 * it back, checked as a new schedule is), and what its status says.
 */
import {
  type ApiPaths,
  formatClock,
  limited,
  LIMITS,
  powerLimitsOf,
  type PowerLimitKey,
  MAX_SLOTS,
  tooLong,
  parseCurtailmentUnit,
  parsePowerUnit,
  parseSetting,
  type ScheduleSettings,
  type ScheduleSlot,
  show,
  type SiteSummary,
  splitRun,
  storedTime,
  validateReference,
  ValidationError,
} from '../../protocol';
import {
  commandsOf,
  type PercentCurtailment,
  type PlayerState,
  type PlayRun,
  requestForCommand,
  type SentRequest,
  type SteeringCommand,
} from '../../runtime';
import { convertPercent, describeCommand, type Translate, type VerifySettings, verifySettingsOf } from '../shared';

export interface NodeSettings extends ScheduleSettings {
  /** The site's PV power, W (0 = unknown): converts a `%` curtailment. */
  pvPeakPower: number;
  /** The context store the schedule is kept in ('' = the default store). */
  store: string;
  dryRun: boolean;
  /** The delivery check: on, reports per slot on output 2 (nodes/verify.ts). */
  verify: boolean;
  /** Its settings (tolerance; checked only with verify on). */
  check: VerifySettings;
  /** The power limits not set: each is the site's rating (GET /sites), checked before a schedule plays. */
  rating: PowerLimitKey[];
  /** The power limits turned off ("none", a flow saved before limits were on by default). */
  none: PowerLimitKey[];
}

const bool = (v: unknown, dflt: boolean, field: string): boolean => {
  if (v === undefined || v === '' || v === null) return dflt;
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw new ValidationError(field, `must be true or false; got ${show(v)}`);
};

/** The node's settings from its properties (each refusal names the property). */
export function settingsOf(c: Record<string, unknown>): NodeSettings {
  const num = (key: 'pvPeakPower') => limited(c[key], LIMITS[key], key);
  const power = powerLimitsOf(c);
  const store = c.store === undefined || c.store === null ? '' : c.store;
  if (typeof store !== 'string' || !/^[A-Za-z0-9_]{0,64}$/.test(store.trim())) {
    throw new ValidationError(
      'store',
      `must be the name of a context store of the Node-RED settings (letters, digits, _), or empty for the default store; got ${show(c.store)}`,
    );
  }
  return {
    essUnit: parsePowerUnit(c.essUnit || 'kW', 'essUnit'),
    curtailmentUnit: parseCurtailmentUnit(c.curtailmentUnit || 'kW', 'curtailmentUnit'),
    gridUnit: parsePowerUnit(c.gridUnit || 'kW', 'gridUnit'),
    ...power.values,
    rating: power.rating,
    none: power.none,
    allowMaximizeGridImport: bool(c.allowMaximizeGridImport, true, 'allowMaximizeGridImport'),
    pvPeakPower: num('pvPeakPower'),
    store: store.trim(),
    dryRun: bool(c.dryRun, false, 'dryRun'),
    verify: bool(c.verify, false, 'verify'),
    // Per slot: the node has no verifyEvery (a slot's window is checked at its end).
    check: { ...verifySettingsOf(c), everyMs: 0 },
  };
}

/** Where the PV power for a `%` curtailment comes from (as in site steer). */
export interface PercentSources {
  mode: PercentCurtailment;
  msg: unknown;
  sites?: () => Promise<SiteSummary[]>;
}

/**
 * The slots with each `%` curtailment in W of the site's PV power (config node percentCurtailment
 * "convert"); a refusal names the slot (`msg.payload[3].curtailment`). Unchanged with "send".
 */
export async function convertSlots(
  slots: ScheduleSlot[],
  site: string,
  at: string,
  s: NodeSettings,
  pv: PercentSources,
): Promise<ScheduleSlot[]> {
  if (pv.mode === 'send' || !slots.some((x) => x.setting.productionCurtailment?.unit === '%')) return slots;
  const out: ScheduleSlot[] = [];
  for (const slot of slots) {
    const c = slot.setting.productionCurtailment;
    if (c?.unit !== '%') {
      out.push(slot);
      continue;
    }
    const field = `${at}[${slot.index}].curtailment`;
    try {
      const cmd = await convertPercent(
        { site, kind: 'curtailment', productionCurtailment: c },
        pv.mode,
        { node: s.pvPeakPower, msg: pv.msg, sites: pv.sites },
        { maxCurtailment: s.maxCurtailment },
      );
      out.push({ ...slot, setting: { ...slot.setting, productionCurtailment: cmd.productionCurtailment } });
    } catch (e) {
      const v = e as ValidationError;
      throw new ValidationError(field, `(${c.value} %) cannot be sent: ${v.message}`, v.kind ?? 'unprocessable');
    }
  }
  return out;
}

/** One request of a dry run's plan: when it would be sent, what, and for which slots. */
export interface PlannedRequest {
  at: number;
  request: SentRequest;
  slots: number[];
}

/** The requests a schedule would send (dry run): each at its run's start, or now for the run in progress. */
export function planOf(runs: readonly PlayRun[], now: number, paths?: Partial<ApiPaths>): PlannedRequest[] {
  return runs.flatMap((r) =>
    commandsOf(r).map((cmd) => ({
      at: Math.max(r.start, now),
      request: requestForCommand(cmd, paths),
      slots: r.slots.map((x) => x.index),
    })),
  );
}

/** Version of the saved state. */
const STATE_VERSION = 1;
/** The context key of the saved state. */
export const STATE_KEY = 'ems-schedule';

/** The state as saved in the context (undefined: nothing to keep). */
export function savedForm(state: PlayerState, now: number): Record<string, unknown> | undefined {
  const inForce = state.inForce && state.inForce.end > now ? state.inForce : undefined;
  if (state.runs.length === 0 && !inForce) return undefined;
  const out: Record<string, unknown> = { v: STATE_VERSION, runs: state.runs };
  if (inForce) out.inForce = inForce;
  if (state.stopped) out.stopped = true;
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const whole = (v: unknown, field: string, min = 0): number => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min)
    throw new ValidationError(field, `must be a whole number of ${min} or more; got ${show(v)}`);
  return v;
};

/** A saved run read back, checked against the node's current limits. */
function runOf(raw: unknown, field: string, s: ScheduleSettings): PlayRun {
  if (!isObject(raw)) throw new ValidationError(field, `must be a run object; got ${show(raw)}`);
  const start = storedTime(raw.start, `${field}.start`);
  const end = storedTime(raw.end, `${field}.end`);
  if (!(end > start)) throw new ValidationError(`${field}.end`, 'must be after start');
  if (!Array.isArray(raw.slots) || raw.slots.length === 0)
    throw new ValidationError(`${field}.slots`, `must list the run's slots; got ${show(raw.slots)}`);
  if (raw.slots.length > MAX_SLOTS) throw tooLong(`${field}.slots`, MAX_SLOTS, raw.slots.length, 'slots');
  const slots = raw.slots.map((x: unknown, i: number) => {
    const o = isObject(x) ? x : {};
    return {
      index: whole(o.index, `${field}.slots[${i}].index`),
      start: storedTime(o.start, `${field}.slots[${i}].start`),
      end: storedTime(o.end, `${field}.slots[${i}].end`),
    };
  });
  return {
    site: validateReference(raw.site, `${field}.site`),
    start,
    end,
    slots,
    first: whole(raw.first, `${field}.first`),
    last: whole(raw.last, `${field}.last`),
    total: whole(raw.total, `${field}.total`, 1),
    setting: parseSetting(raw.setting, s, `${field}.setting`),
  };
}

/**
 * The saved state read back (a restart or redeploy): every run checked again, against the
 * node's current limits, and split by the current maxValidity. Throws a ValidationError
 * (field `stored schedule…`) when it cannot be played; a run in force that no longer passes is
 * left out (it is only compared with, never sent again) and handed to `dropped`.
 */
export function restoreState(
  raw: unknown,
  s: ScheduleSettings,
  maxValidityMs: number,
  dropped?: (err: unknown) => void,
): PlayerState {
  const f = 'stored schedule';
  if (!isObject(raw))
    throw new ValidationError(
      f,
      `must be the object this version saves ({v: ${STATE_VERSION}, runs, inForce?, stopped?}); got ${show(raw)}`,
    );
  if (raw.v !== STATE_VERSION)
    throw new ValidationError(
      `${f}.v`,
      `must be ${STATE_VERSION}, the version this node saves and reads; got ${show(raw.v)}`,
    );
  if (!Array.isArray(raw.runs))
    throw new ValidationError(`${f}.runs`, `must be an array of runs; got ${show(raw.runs)}`);
  if (raw.runs.length > MAX_SLOTS) throw tooLong(`${f}.runs`, MAX_SLOTS, raw.runs.length, 'runs');
  const runs = raw.runs
    .map((r: unknown, i: number) => runOf(r, `${f}.runs[${i}]`, s))
    .flatMap((r: PlayRun) => splitRun(r, maxValidityMs));
  let inForce: PlayRun | undefined;
  try {
    inForce = raw.inForce === undefined ? undefined : runOf(raw.inForce, `${f}.inForce`, s);
  } catch (e) {
    inForce = undefined;
    dropped?.(e);
  }
  const state: PlayerState = { runs };
  if (inForce) state.inForce = inForce;
  if (raw.stopped === true) state.stopped = true;
  return state;
}

/** A run as one command, for its description ("ESS −200 kW until 09:15"). */
function asCommand(r: PlayRun): SteeringCommand {
  return { site: r.site, kind: 'combined', ...r.setting, validUntil: r.end };
}

/** "slot 12/96 · ESS −200 kW until 09:15", or "slots 12–20/96 · …" for a merged run. */
export function describeRun(r: PlayRun, t: Translate): string {
  const what = describeCommand(asCommand(r), true, t);
  return r.first === r.last
    ? t('slot', { slot: r.first + 1, total: r.total, what })
    : t('slots', { first: r.first + 1, last: r.last + 1, total: r.total, what });
}

/** "waiting: slot 1/96 at 09:00". */
export function describeNext(r: PlayRun, t: Translate): string {
  return t('waiting', { slot: r.first + 1, total: r.total, time: formatClock(r.start) });
}
