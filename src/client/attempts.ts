/**
 * The hook every attempt of a client passes through (transport.ts), for the runtime's request
 * budget (runtime/budget.ts): `admit` as a request arrives, `before` an attempt is sent, in its
 * concurrency slot, and `after` it, with its outcome. Kept apart so the transport stays small; no I/O here.
 */
/** What a request is for: a read, a steering signal, or a control call (the transport's retry policy differs). */
export type RequestKind = 'read' | 'steer' | 'control';

/** How one attempt ended: an answer in 2xx, a 429, or anything else (error status, timeout, connection error, abort). */
export type AttemptOutcome = 'ok' | '429' | 'failure';

/** One attempt, as the hook sees it (never a header or a body). */
export interface Attempt {
  kind: RequestKind;
  method: string;
  /** The URL as given to axios (a path below the base URL, with its query). */
  url: string;
  /** A retry of an earlier attempt (axios-retry's, or the one fresh-token retry after a 401). */
  retry: boolean;
  /** For steering: nothing may be sent at or after this time. */
  validUntil?: number;
  /** The request's signal: aborts a wait. */
  signal?: AbortSignal;
  /** Set by the hook's `admit`: when the request was admitted (a wait is bounded from then, not from its slot). */
  admittedAt?: number;
}

export interface AttemptHook {
  /**
   * Before an attempt: returns nothing to send it at once, a promise to wait first (it resolves
   * when the attempt may go), or throws / rejects to refuse it (nothing is sent; the error ends
   * the request, never retried). Once it returns or resolves, the attempt is sent.
   */
  before(a: Attempt): void | Promise<void>;
  /** After an attempt that was sent, with its outcome. Must not throw. */
  after(a: Attempt, outcome: AttemptOutcome): void;
  /**
   * On arrival of a first attempt, before it waits for a concurrency slot (or a 429 pause):
   * throws to refuse it at once (one that could not be sent in time), else it is admitted and
   * reaches `before` in arrival order, or `release` if it ends before that (aborted).
   */
  admit?(a: Attempt): void;
  /** An admitted attempt ended before `before` (aborted while it waited for a slot). Must not throw. */
  release?(a: Attempt): void;
}

/** The path of an attempt's URL without its query (as errors name a request). */
export function attemptPath(url: string): string {
  const queryAt = url.indexOf('?');
  const pathOnly = queryAt < 0 ? url : url.slice(0, queryAt);
  return pathOnly.length > 200 ? `${pathOnly.slice(0, 199)}…` : pathOnly;
}
