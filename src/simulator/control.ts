/**
 * Control endpoints for tests and demos (handleControl lists them). They need no API key, are
 * never faulted and are not counted in the request log.
 */
import { ValidationError, show, DAY_MS } from '../protocol';
import { HttpError } from './http-util';
import type { Simulator } from './simulator';

const MAX_ADVANCE_MS = 3660 * DAY_MS;

const CONTROL: Record<string, Record<string, (sim: Simulator, body: unknown, query: string) => unknown>> = {
  // -> { requests, byRoute, byStatus, faults }
  stats: { GET: (sim) => sim.stats() },
  log: {
    // -> { entries: LogEntry[] } (?limit=n: the last n)
    GET: (sim, _body, query) => {
      const entries = sim.requestLog;
      const limit = Number(new URLSearchParams(query).get('limit') ?? NaN);
      return {
        entries: Number.isInteger(limit) && limit >= 0 ? entries.slice(Math.max(0, entries.length - limit)) : entries,
      };
    },
  },
  faults: {
    // GET -> the current FaultConfig; POST body: Partial<FaultConfig>, replaces the whole config -> FaultConfig
    // { rate500, rate503, rate429, retryAfterSeconds, resetRate, latencyMs: [min, max] }
    GET: (sim) => sim.faults.config,
    POST: (sim, body) => sim.setFaults((body ?? {}) as object),
  },
  clock: {
    // GET -> { now, frozen }; POST body: { advanceMs } (0 .. 10 years) -> { now }
    GET: (sim) => ({ now: sim.clock.now(), frozen: sim.clock.frozen }),
    POST: (sim, body) => {
      const record = (body ?? {}) as Record<string, unknown>;
      const ms = typeof record === 'object' && !Array.isArray(record) ? record.advanceMs : undefined;
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_ADVANCE_MS) {
        throw new ValidationError(
          'advanceMs',
          `must be a number of milliseconds from 0 to ${MAX_ADVANCE_MS} (10 years); got ${show(ms)}`,
        );
      }
      return { now: sim.clock.advance(ms) };
    },
  },
  reset: {
    // Clears steering of every site and the request log -> { reset: true, now }
    POST: (sim) => {
      sim.reset();
      return { reset: true, now: sim.clock.now() };
    },
  },
};

/** Handles /sim/<name> (the routes: CONTROL); returns the body to send with status 200, or throws an HttpError. */
export function handleControl(
  sim: Simulator,
  method: string,
  segments: readonly string[],
  body: unknown,
  query: string,
): unknown {
  const methods = segments.length === 2 ? CONTROL[segments[1]] : undefined;
  if (!methods || !Object.prototype.hasOwnProperty.call(CONTROL, segments[1])) {
    throw new HttpError(
      404,
      `unknown control endpoint /${segments.join('/')}; known: ${Object.keys(CONTROL)
        .map((k) => `/sim/${k}`)
        .join(', ')}`,
    );
  }
  const handler = methods[method];
  if (!handler)
    throw new HttpError(405, `method ${method} not allowed on /sim/${segments[1]}`, {
      allow: Object.keys(methods).join(', '),
    });
  return handler(sim, body, query);
}
