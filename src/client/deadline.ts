/**
 * The wall-clock deadline of one attempt on an adapter that has none of its own (axios' http
 * adapter; the undici exchange keeps the deadline itself): an abort timer joined with the
 * caller's signal, in the form axios' adapters take as config.signal (no AbortController per attempt).
 */
import type { AxiosError, AxiosAdapter, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { httpLib } from './http-lib';
import { isAborted, joinAbort, leaveAbort } from './abort-hub';

/**
 * The abort signal of one attempt, in the form axios takes (its GenericAbortSignal: `aborted`,
 * add/removeEventListener): it aborts at the attempt's wall-clock deadline, or when the caller's
 * signal aborts. A plain object: an
 * AbortController per attempt, with its EventTarget, costs several µs of every read.
 */
class AttemptSignal {
  aborted = false;
  /** Its place among the waiters of the caller's signal (abort-hub.ts). */
  abortSlot = -1;
  timedOut = false;
  private listeners: Array<(event: { type: string }) => void> = [];

  addEventListener(_type: string, fn: (event: { type: string }) => void): void {
    this.listeners.push(fn);
  }

  removeEventListener(_type: string, fn: (event: { type: string }) => void): void {
    const at = this.listeners.indexOf(fn);
    if (at >= 0) this.listeners.splice(at, 1);
  }

  abort(timedOut: boolean): void {
    if (this.aborted) return;
    this.aborted = true;
    this.timedOut = timedOut;
    const fns = this.listeners;
    this.listeners = [];
    // An abort event, as an AbortSignal's listeners get it (axios then fails the attempt as cancelled).
    for (const fn of fns) fn({ type: 'abort' });
  }

  /** The caller's signal aborted (abort-hub.ts calls this). */
  notifyAbort(): void {
    this.abort(false);
  }

  /** The attempt settled: nothing is kept (axios' listener holds its request). */
  dispose(): void {
    this.listeners = [];
  }
}

function onDeadline(attempt: AttemptSignal): void {
  attempt.abort(true);
}

/**
 * Runs one attempt through `inner` with a wall-clock deadline: an abort timer of `ms` (so a
 * body that drips or never ends cannot outlive it), joined with the caller's signal. When the
 * deadline fires the attempt fails as a timeout (ETIMEDOUT, retryable as any timeout), not as
 * a cancel. The timer and the listener are removed when the attempt settles; the caller's
 * config (its signal, the retry state) is what the response or error carries on.
 */
export function withDeadline(
  inner: AxiosAdapter,
  config: InternalAxiosRequestConfig,
  ms: number,
): Promise<AxiosResponse> {
  const outer = config.signal as AbortSignal | undefined;
  // Never started with a signal that aborted already (e.g. while the attempt hook made it wait):
  // axios' HTTP adapter rejects such a request as cancelled but still sends it.
  if (isAborted(outer)) return Promise.reject(new (httpLib().axios.CanceledError)(undefined, config));
  if (!(ms > 0)) return started(inner, config);
  const attempt = new AttemptSignal();
  const timer = setTimeout(onDeadline, ms, attempt);
  // Through the hub (abort-hub.ts): the caller's signal (a node's, shared by all its reads) keeps
  // one listener instead of gaining and losing one per attempt.
  const hub = outer ? joinAbort(outer, attempt) : undefined;
  const hadSignal = Object.prototype.hasOwnProperty.call(config, 'signal');
  let pending: Promise<AxiosResponse>;
  // The adapter gets the caller's config itself (a copy of axios' merged config costs about 4 µs),
  // with the attempt's signal in place only while the adapter starts: axios' HTTP adapter subscribes
  // to config.signal synchronously as it starts, so the signal is put back before anything else can see the config.
  try {
    config.signal = attempt;
    pending = started(inner, config);
  } finally {
    if (hadSignal) config.signal = outer;
    else delete config.signal;
  }
  const settled = () => {
    clearTimeout(timer);
    if (hub) leaveAbort(hub, attempt);
    attempt.dispose();
  };
  // A promise chain, not an async function: one reaction per attempt.
  return pending.then(
    (res) => {
      settled();
      res.config = config;
      return res;
    },
    (err: unknown) => {
      settled();
      if (attempt.timedOut) {
        const { AxiosError } = httpLib().axios;
        throw new AxiosError(
          `timeout of ${ms}ms exceeded (wall-clock)`,
          'ETIMEDOUT',
          config,
          (err as AxiosError)?.request,
        );
      }
      if (err && typeof err === 'object') (err as { config?: unknown }).config = config;
      throw err;
    },
  );
}

/** The adapter's promise; a throw as it starts is its rejection. */
export function started(inner: AxiosAdapter, config: InternalAxiosRequestConfig): Promise<AxiosResponse> {
  try {
    return inner(config);
  } catch (err) {
    return Promise.reject(err);
  }
}
