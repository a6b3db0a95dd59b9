/**
 * The schedule node's stored state in its context: read back, and, when it cannot be read (wrong
 * types, another version, too many runs, beyond the node's current limits), kept as it was
 * under a key of its own with the time, so that nothing that could not be read is ever written
 * over. Each find gets its own key (`ems-schedule-unread-<epoch ms>`): an earlier one is never
 * overwritten either.
 */
import { STATE_KEY } from './support';

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
export const unreadKey = (now: number): string => `${STATE_KEY}-unread-${now}`;

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
