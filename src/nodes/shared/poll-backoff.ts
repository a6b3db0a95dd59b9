/**
 * Backoff and log throttling of a polling node (no Node-RED imports, no timers; the clock is
 * injected so tests can drive time).
 *
 * While the service is unreachable or failing (see `backsOff`), each failure doubles the
 * poller's effective interval, up to `MAX_FACTOR` × the configured one; the first success
 * returns it to the configured interval. The wait is given in turns of the PollScheduler
 * (`nextInTurns`, which a poll task returns to it), so it is exact whatever the timers' lateness.
 */
import { ValidationError } from '../../protocol';
import { ApiError } from '../../client';

/** The effective interval grows to at most this many times the configured one. */
const MAX_FACTOR = 10;
/** The same error is logged at most once in this time. */
const LOG_EVERY_MS = 60_000;

/** Codes of failures to reach the service at all (connection, DNS, timeout). */
const UNREACHABLE =
  /^(ECONN|ETIMEDOUT|EPIPE|EAI_AGAIN|ENOTFOUND|ENETUNREACH|EHOSTUNREACH|EHOSTDOWN|ERR_SOCKET|ERR_NETWORK|EMS_NETWORK|EMS_ERROR)/;

/** True when the error says the service could not be reached (no answer at all). */
export function isUnreachable(err: unknown): boolean {
  const failure = err as { code?: unknown; status?: unknown } | null;
  return (
    !!failure &&
    typeof failure === 'object' &&
    failure.status === undefined &&
    typeof failure.code === 'string' &&
    UNREACHABLE.test(failure.code)
  );
}

/**
 * Whether a poll's failure counts as the service being unreachable or failing, so the
 * node backs off: no answer (connection error, DNS, timeout), HTTP 408, 429 and 5xx, and an
 * answer of the wrong shape or size (EMS_BAD_RESPONSE, EMS_TOO_LARGE). Not: the node's own
 * settings refused before sending (ValidationError), a refusal of the request by the service
 * (other 4xx, e.g. an unknown device or a wrong key: only a change of the flow or the
 * credentials helps, and a redeploy restarts the poller anyway), and a poll aborted on close.
 */
function backsOff(err: unknown): boolean {
  if (err instanceof ValidationError || !err || typeof err !== 'object') return false;
  const { code, status } = err as { code?: unknown; status?: unknown };
  if (code === 'EMS_ABORTED' || code === 'EMS_CLOSED' || code === 'EMS_VALIDATION') return false;
  if (code === 'EMS_BAD_RESPONSE' || code === 'EMS_TOO_LARGE') return true;
  if (typeof status === 'number') return status === 408 || status === 429 || status >= 500;
  return isUnreachable(err) || err instanceof ApiError;
}

/** What the node does after a failed poll. */
export interface FailureAdvice {
  /** Log (node.error) this error: it differs from the last logged one, or that is a minute old. */
  log: boolean;
  /** True when the node is backing off (the next try is later than the configured interval). */
  backingOff: boolean;
  /** Turns of the schedule from the failed try's start to the next try (for the PollScheduler). */
  nextInTurns: number;
  /** Time until the next try, ms (for the status). */
  nextInMs: number;
}

export class PollBackoff {
  /** Consecutive failures that count (see backsOff). */
  private failures = 0;
  /** When the last try started (clock ms); NaN before the first. */
  private startedAt = NaN;
  private lastLogged: string | undefined;
  private lastLoggedAt = -Infinity;

  constructor(
    readonly intervalMs: number,
    private readonly now: () => number = Date.now,
    private readonly logEveryMs = LOG_EVERY_MS,
  ) {}

  /** The current effective interval, in turns (intervals). */
  get factor(): number {
    return Math.min(MAX_FACTOR, 2 ** this.failures);
  }

  /** Marks the start of a try. */
  started(): void {
    this.startedAt = this.now();
  }

  /** A poll succeeded: back to the configured interval. */
  success(): void {
    this.failures = 0;
  }

  /**
   * A poll failed with `err`: returns whether to log it (the same error at most once per
   * LOG_EVERY_MS; a different error at once) and when the next try comes.
   */
  failure(err: unknown): FailureAdvice {
    const now = this.now();
    const start = Number.isNaN(this.startedAt) ? now : this.startedAt;
    if (backsOff(err)) this.failures = Math.min(this.failures + 1, 32);
    else this.failures = 0;
    const key = errorKey(err);
    const log = key !== this.lastLogged || now - this.lastLoggedAt >= this.logEveryMs;
    if (log) {
      this.lastLogged = key;
      this.lastLoggedAt = now;
    }
    const nextInTurns = this.factor;
    return {
      log,
      backingOff: this.failures > 0,
      nextInTurns,
      nextInMs: Math.max(0, start + nextInTurns * this.intervalMs - now),
    };
  }
}

/** An error's text for "the same error": a request id differs on every answer and is left out. */
function errorKey(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.replace(/\s*\(requestId [^)]*\)/g, '');
}

/** "40 s", "2.5 s", "0.1 s": the wait until the next try, for a status text. */
export function seconds(ms: number): string {
  const secs = ms / 1000;
  return `${secs >= 10 ? Math.round(secs) : Math.max(0.1, Math.round(secs * 10) / 10)} s`;
}
