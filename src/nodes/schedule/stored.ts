/**
 * The schedule node's state as stored in its context: its saved form, and read back (checked as
 * a new schedule is). When it cannot be read (wrong types, another version, too many runs,
 * beyond the node's current limits), it is kept as it was under a key of its own with the time,
 * so that nothing that could not be read is ever written over. Each find gets its own key (`ems-schedule-unread-<epoch ms>`): an earlier one is never
 * overwritten either.
 */
import {
  MAX_SLOTS,
  parseSetting,
  type ScheduleSettings,
  show,
  splitRun,
  storedTime,
  tooLong,
  validateReference,
  ValidationError,
} from '../../protocol';
import type { PlayerState, PlayRun } from '../../runtime';

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
function runOf(raw: unknown, field: string, settings: ScheduleSettings): PlayRun {
  if (!isObject(raw)) throw new ValidationError(field, `must be a run object; got ${show(raw)}`);
  const start = storedTime(raw.start, `${field}.start`);
  const end = storedTime(raw.end, `${field}.end`);
  if (!(end > start)) throw new ValidationError(`${field}.end`, 'must be after start');
  if (!Array.isArray(raw.slots) || raw.slots.length === 0)
    throw new ValidationError(`${field}.slots`, `must list the run's slots; got ${show(raw.slots)}`);
  if (raw.slots.length > MAX_SLOTS) throw tooLong(`${field}.slots`, MAX_SLOTS, raw.slots.length, 'slots');
  const slots = raw.slots.map((x: unknown, i: number) => {
    const slot = isObject(x) ? x : {};
    return {
      index: whole(slot.index, `${field}.slots[${i}].index`),
      start: storedTime(slot.start, `${field}.slots[${i}].start`),
      end: storedTime(slot.end, `${field}.slots[${i}].end`),
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
    setting: parseSetting(raw.setting, settings, `${field}.setting`),
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
  settings: ScheduleSettings,
  maxValidityMs: number,
  dropped?: (err: unknown) => void,
): PlayerState {
  const field = 'stored schedule';
  if (!isObject(raw))
    throw new ValidationError(
      field,
      `must be the object this version saves ({v: ${STATE_VERSION}, runs, inForce?, stopped?}); got ${show(raw)}`,
    );
  if (raw.v !== STATE_VERSION)
    throw new ValidationError(
      `${field}.v`,
      `must be ${STATE_VERSION}, the version this node saves and reads; got ${show(raw.v)}`,
    );
  if (!Array.isArray(raw.runs))
    throw new ValidationError(`${field}.runs`, `must be an array of runs; got ${show(raw.runs)}`);
  if (raw.runs.length > MAX_SLOTS) throw tooLong(`${field}.runs`, MAX_SLOTS, raw.runs.length, 'runs');
  const runs = raw.runs
    .map((r: unknown, i: number) => runOf(r, `${field}.runs[${i}]`, settings))
    .flatMap((r: PlayRun) => splitRun(r, maxValidityMs));
  let inForce: PlayRun | undefined;
  try {
    inForce = raw.inForce === undefined ? undefined : runOf(raw.inForce, `${field}.inForce`, settings);
  } catch (e) {
    inForce = undefined;
    dropped?.(e);
  }
  const state: PlayerState = { runs };
  if (inForce) state.inForce = inForce;
  if (raw.stopped === true) state.stopped = true;
  return state;
}

/** A node's context, as Node-RED hands it (callbacks, a store name or undefined for the default). */
export interface Store {
  get(key: string, store: string | undefined, cb: (err: unknown, v: unknown) => void): void;
  set(key: string, value: unknown, store: string | undefined, cb: (err: unknown) => void): void;
}

export const text = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The node's key and store, as errors name them. */
export const where = (key: string, store: string | undefined): string =>
  `context key "${key}" of store "${store || 'default'}"`;

/** The stored state (undefined when there is none); rejects with the store's error. */
export function readStored(ctx: Store, store: string | undefined): Promise<unknown> {
  return new Promise((resolve, reject) => {
    try {
      ctx.get(STATE_KEY, store, (err, v) => (err ? reject(err) : resolve(v)));
    } catch (e) {
      reject(e);
    }
  });
}

/** The key a value found unreadable at `now` is kept under. */
const unreadKey = (now: number): string => `${STATE_KEY}-unread-${now}`;

export interface Kept {
  /** The end of the error's text: where the value is, and that nothing of it is sent. */
  text: string;
  /** Set when it could not be kept elsewhere: why nothing may be written to the node's key. */
  held?: string;
}

/**
 * Keeps `value`, found unreadable for `err`, under unreadKey(now) with the time it was found,
 * why, and the key it came from. Never rejects: a store that refuses says so in `held`.
 */
export function keepUnread(
  ctx: Store,
  store: string | undefined,
  value: unknown,
  err: unknown,
  now: number,
): Promise<Kept> {
  const key = unreadKey(now);
  const from = where(STATE_KEY, store);
  const record = { at: new Date(now).toISOString(), key: STATE_KEY, error: text(err), value };
  return new Promise((resolve) => {
    const done = (e: unknown) => {
      if (!e)
        return resolve({
          text: `; the value of ${from} is kept as it was under context key "${key}" (found ${record.at}); nothing of it is sent`,
        });
      const held = `${from} holds a schedule that could not be read, nor kept under "${key}" (${text(e)}); nothing is written over it`;
      resolve({ text: `; ${held}`, held });
    };
    try {
      ctx.set(key, record, store, done);
    } catch (e) {
      done(e);
    }
  });
}

/** A stored schedule that is not resumed: the reason, and where what could not be read is (`kept`). */
export function notResumed(e: unknown, kept: string): Error {
  return e instanceof ValidationError
    ? new ValidationError('stored schedule', `not resumed: ${e.message}${kept}`, e.kind)
    : new Error(`stored schedule not resumed: ${text(e)}${kept}`);
}
