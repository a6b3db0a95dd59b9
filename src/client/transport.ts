/**
 * The HTTP transport of one client: one axios instance on a keep-alive connection pool (http-pool.ts), bounded
 * concurrency, a shared pause after a 429, authentication headers, and retries
 * (axios-retry) with exponential backoff, jitter and Retry-After. Every attempt is bounded:
 * its body by maxBodyBytes (maxContentLength), its time by a wall-clock deadline (an abort
 * timer, so a body that drips or never ends is cut off and its concurrency slot freed).
 *
 * Retry policy (README "Retries"): reads (GETs and the time-series POST) are retried on
 * connection errors, timeouts, 5xx and 429; steering on 429, 503, timeouts and connection
 * errors only, and never once its validUntil has passed. Other 4xx are never retried.
 *
 * An attempt hook (attempts.ts; the runtime's request budget) sees every request as it arrives
 * (it may refuse it at once), every attempt in its concurrency slot just before it is sent, and
 * its outcome after: it may delay or refuse it.
 */
import type { AxiosError, AxiosAdapter, AxiosInstance, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { httpLib, isCancel } from './http-lib';
import { Limiter } from './limiter';
import { onAbort } from './abort-hub';
import { OAuth2TokenSource, type AuthConfig } from './auth';
import type { Redactor } from './errors';
import type { Attempt, AttemptHook, RequestKind } from './attempts';
import { createHttpPool, type HttpAdapterName, type HttpPool } from './http-pool';

/** Extra per-request settings carried through axios' config. */
export interface EmsRequestMeta {
  kind: RequestKind;
  /** For steering: no retry is scheduled that would start after this time. */
  validUntil?: number;
  /** The delay chosen for the next retry (set by the retry condition). */
  nextDelay?: number;
}

export interface TransportOptions {
  baseUrl: string;
  auth: AuthConfig;
  /** Wall-clock deadline of each attempt, ms. */
  timeoutMs: number;
  /** Largest response (and request) body, bytes. */
  maxBodyBytes: number;
  retries: number;
  concurrency: number;
  rejectUnauthorized: boolean;
  ca?: string;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Masks secrets; learns each OAuth2 access token fetched. */
  redactor: Redactor;
  onState: (state: ConnectionState) => void;
  /** Sees every attempt before and after it is sent (the runtime's request budget); may delay or refuse one. */
  hook?: AttemptHook;
  /** The adapter under axios (http-pool.ts): undici by default. */
  adapter?: HttpAdapterName;
}

export type ConnectionState =
  { state: 'ok' } | { state: 'rate-limited'; until: number } | { state: 'error'; reason: string };

type MetaConfig = InternalAxiosRequestConfig & {
  ems?: EmsRequestMeta;
  emsAuthRetried?: boolean;
  'axios-retry'?: { retryCount?: number };
};

const RETRYABLE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'ECONNABORTED',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ERR_NETWORK',
]);

export function isTransientNetworkError(err: AxiosError): boolean {
  if (isCancel(err) || err.response) return false;
  return RETRYABLE_CODES.has(err.code ?? '') || /socket hang up|timeout/i.test(err.message);
}

/** Whether a failed attempt may be retried, by kind of request (see the policy above). */
export function isRetryable(err: AxiosError): boolean {
  const meta = (err.config as MetaConfig | undefined)?.ems;
  if (isCancel(err) || !meta) return false;
  const status = err.response?.status;
  if (meta.kind === 'steer') {
    if (status !== undefined && status !== 429 && status !== 503) return false;
    if (status === undefined && !isTransientNetworkError(err)) return false;
    return true;
  }
  if (status === undefined) return isTransientNetworkError(err);
  return status === 429 || status >= 500;
}

export class Transport {
  readonly axios: AxiosInstance;
  readonly limiter: Limiter;
  readonly tokens?: OAuth2TokenSource;
  /** The connections and the adapter that sends through them. */
  readonly pool: HttpPool;
  private pausedUntil = 0;

  constructor(private readonly opts: TransportOptions) {
    this.limiter = new Limiter(opts.concurrency);
    this.pool = createHttpPool({
      adapter: opts.adapter,
      concurrency: opts.concurrency,
      rejectUnauthorized: opts.rejectUnauthorized,
      ca: opts.ca,
      timeoutMs: opts.timeoutMs,
    });
    const { axios, axiosRetry } = httpLib();
    this.axios = axios.create({
      baseURL: opts.baseUrl.replace(/\/+$/, ''),
      // No axios `timeout`: the wall-clock deadline of each attempt (withDeadline) ends it first
      // and bounds all an idle-socket timeout would, without a socket timer per request.
      maxRedirects: 0,
      proxy: false,
      maxContentLength: opts.maxBodyBytes,
      maxBodyLength: opts.maxBodyBytes,
      headers: { accept: 'application/json', 'user-agent': '@ems-partner/node-red' },
      transitional: { clarifyTimeoutError: true, silentJSONParsing: true, forcedJSONParsing: true },
      adapter: this.wrapAdapter(this.pool.adapter),
    });
    if (opts.auth.type === 'oauth2') {
      const send = this.pool.adapter;
      const tokenHttp = axios.create({
        timeout: opts.timeoutMs,
        proxy: false,
        maxRedirects: 0,
        maxContentLength: opts.maxBodyBytes,
        maxBodyLength: opts.maxBodyBytes,
        transitional: { clarifyTimeoutError: true, silentJSONParsing: true, forcedJSONParsing: true },
        adapter: (config) => withDeadline(send, config, opts.timeoutMs),
      });
      const r = opts.redactor;
      this.tokens = new OAuth2TokenSource(
        opts.auth,
        tokenHttp,
        () => r.secrets as string[],
        Date.now,
        (t) => r.add(t),
      );
    }
    // Without authentication no interceptor is needed (each one is a step of every request's chain).
    if (opts.auth.type !== 'none')
      this.axios.interceptors.request.use((config) => this.authorize(config as MetaConfig));
    axiosRetry(this.axios, {
      retries: opts.retries,
      shouldResetTimeout: true,
      retryCondition: (err) => this.shouldRetry(err),
      retryDelay: (_n, err) => (err.config as MetaConfig | undefined)?.ems?.nextDelay ?? 0,
    });
    // Runs after axios-retry gave up: one fresh-token retry on a 401 under OAuth2.
    const tokens = this.tokens;
    if (tokens) {
      this.axios.interceptors.response.use(undefined, async (err: AxiosError) => {
        const config = err.config as MetaConfig | undefined;
        if (err.response?.status === 401 && config && !config.emsAuthRetried) {
          config.emsAuthRetried = true;
          const sent = String(config.headers?.Authorization ?? '').replace(/^Bearer /, '');
          tokens.invalidate(sent);
          return this.axios.request(config);
        }
        throw err;
      });
    }
  }

  /** Delay before retry n (1-based): exponential with full jitter, never less than Retry-After. */
  retryDelay(n: number, err: AxiosError): number {
    const exp = Math.min(this.opts.retryMaxMs, this.opts.retryBaseMs * 2 ** (n - 1));
    return Math.max(exp / 2 + Math.random() * (exp / 2), Math.min(httpLib().retryAfter(err), 60_000));
  }

  /** Retry condition: the policy above, and for steering only while the retry starts before validUntil. */
  private shouldRetry(err: AxiosError): boolean {
    const config = err.config as (MetaConfig & { 'axios-retry'?: { retryCount?: number } }) | undefined;
    const meta = config?.ems;
    if (!meta || !isRetryable(err)) return false;
    const delay = this.retryDelay((config['axios-retry']?.retryCount ?? 0) + 1, err);
    if (meta.kind === 'steer' && meta.validUntil !== undefined && Date.now() + delay >= meta.validUntil) return false;
    meta.nextDelay = delay;
    return true;
  }

  /** Sets the authentication header: at once for a key or token, after the token fetch for OAuth2. */
  private authorize(config: MetaConfig): MetaConfig | Promise<MetaConfig> {
    const auth = this.opts.auth;
    if (auth.type === 'header') config.headers.set(auth.header || 'x-api-key', auth.apiKey);
    else if (auth.type === 'bearer') config.headers.set('Authorization', `Bearer ${auth.token}`);
    else if (this.tokens) {
      return this.tokens.token(config.signal as AbortSignal | undefined).then((token) => {
        config.headers.set('Authorization', `Bearer ${token}`);
        return config;
      });
    }
    return config;
  }

  /**
   * Wraps the HTTP adapter: waits out a shared 429 pause, then holds a concurrency slot for
   * one attempt, which ends by its wall-clock deadline at the latest.
   */
  private wrapAdapter(inner: AxiosAdapter): AxiosAdapter {
    const hook = this.opts.hook;
    return async (config) => {
      const signal = config.signal as AbortSignal | undefined;
      // Admitted on arrival: one the hook could not let go in time is refused now, not after
      // waiting for a slot (that wait has no bound of its own).
      const a = hook ? attemptOf(config as MetaConfig) : undefined;
      if (a && hook!.admit) {
        try {
          hook!.admit(a);
        } catch (err) {
          maskRefusal(err, this.opts.redactor);
          throw err;
        }
      }
      try {
        if (this.pausedUntil > Date.now()) await this.waitPause(signal);
        await this.limiter.acquire(signal);
      } catch (err) {
        if (a) hook!.release?.(a);
        throw err;
      }
      // The hook's decision comes in the slot, just before sending: a refused or aborted wait sends nothing.
      let attempt: Attempt | undefined;
      try {
        if (a) {
          const wait = hook!.before(a);
          if (wait) await wait;
          attempt = a;
        }
        const res = await withDeadline(inner, config, this.opts.timeoutMs);
        this.opts.onState({ state: 'ok' });
        if (attempt) hook!.after(attempt, 'ok');
        return res;
      } catch (err) {
        if (!hook || attempt) {
          this.observeFailure(err as AxiosError);
          if (attempt) hook!.after(attempt, (err as AxiosError)?.response?.status === 429 ? '429' : 'failure');
        } else {
          maskRefusal(err, this.opts.redactor); // refused by the hook: its text names the path, which could hold a secret
        }
        throw err;
      } finally {
        this.limiter.release();
      }
    };
  }

  private observeFailure(err: AxiosError): void {
    const status = err.response?.status;
    if (status === 429) {
      // Retry-After as the service sent it (0 = no pause); 1 s when it sent none.
      const wait = err.response?.headers?.['retry-after'] === undefined ? 1000 : httpLib().retryAfter(err);
      this.pausedUntil = Math.max(this.pausedUntil, Date.now() + Math.min(wait, 60_000));
      this.opts.onState({ state: 'rate-limited', until: this.pausedUntil });
    } else if (status === 401 || status === 403) {
      this.opts.onState({ state: 'error', reason: `HTTP ${status}: check credentials` });
    } else if (status === undefined && !isCancel(err)) {
      const tooLarge = /maxContentLength/.test(err.message ?? '');
      this.opts.onState({ state: 'error', reason: tooLarge ? 'answer too large' : (err.code ?? 'connection error') });
    } else if (status !== undefined && status >= 500) {
      this.opts.onState({ state: 'error', reason: `HTTP ${status}` });
    }
  }

  private waitPause(signal?: AbortSignal): Promise<void> {
    const wait = this.pausedUntil - Date.now();
    if (wait <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', stop);
        resolve();
      }, wait);
      const stop = () => {
        clearTimeout(timer);
        reject(signal?.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', stop, { once: true });
    });
  }

  /** Whether the shared 429 pause is in force. */
  get rateLimitedUntil(): number {
    return this.pausedUntil > Date.now() ? this.pausedUntil : 0;
  }

  destroy(): void {
    this.pool.destroy();
  }
}

/** Masks the secrets in the message and request path of an error the attempt hook refused with (not sent). */
function maskRefusal(err: unknown, r: Redactor): void {
  if (!(err instanceof Error)) return;
  err.message = r.text(err.message);
  const req = (err as { request?: { path?: unknown } }).request;
  if (req && typeof req.path === 'string') req.path = r.text(req.path);
}

/** What the attempt hook sees of a request's config (attempts.ts). */
function attemptOf(config: MetaConfig): Attempt {
  const meta = config.ems;
  return {
    kind: meta?.kind ?? 'read',
    method: String(config.method ?? 'get').toUpperCase(),
    url: String(config.url ?? ''),
    retry: (config['axios-retry']?.retryCount ?? 0) > 0 || config.emsAuthRetried === true,
    validUntil: meta?.validUntil,
    signal: config.signal as AbortSignal | undefined,
  };
}

/**
 * The abort signal of one attempt, in the form axios takes (its GenericAbortSignal: `aborted`,
 * add/removeEventListener): it aborts at the attempt's wall-clock deadline, or when the caller's
 * signal aborts. A plain object: an
 * AbortController per attempt, with its EventTarget, costs several µs of every read.
 */
class AttemptSignal {
  aborted = false;
  timedOut = false;
  private listeners: Array<(event: { type: string }) => void> = [];

  addEventListener(_type: string, fn: (event: { type: string }) => void): void {
    this.listeners.push(fn);
  }

  removeEventListener(_type: string, fn: (event: { type: string }) => void): void {
    const i = this.listeners.indexOf(fn);
    if (i >= 0) this.listeners.splice(i, 1);
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
 *
 * The adapter gets the caller's config itself (a copy of axios' merged config costs about
 * 4 µs), with the attempt's signal in place only while the adapter starts: axios' HTTP adapter
 * subscribes to config.signal synchronously as it starts, so the signal is put back before
 * anything else can see the config.
 */
export async function withDeadline(
  inner: AxiosAdapter,
  config: InternalAxiosRequestConfig,
  ms: number,
): Promise<AxiosResponse> {
  const outer = config.signal as AbortSignal | undefined;
  // Never started with a signal that aborted already (e.g. while the attempt hook made it wait):
  // axios' HTTP adapter rejects such a request as cancelled but still sends it.
  if (outer?.aborted) throw new (httpLib().axios.CanceledError)(undefined, config);
  if (!(ms > 0)) return inner(config);
  const attempt = new AttemptSignal();
  const timer = setTimeout(onDeadline, ms, attempt);
  // Through the hub (abort-hub.ts): the caller's signal (a node's, shared by all its reads) keeps
  // one listener instead of gaining and losing one per attempt.
  const off = outer ? onAbort(outer, () => attempt.abort(false)) : undefined;
  const hadSignal = Object.prototype.hasOwnProperty.call(config, 'signal');
  let pending: Promise<AxiosResponse>;
  try {
    config.signal = attempt;
    pending = inner(config);
  } catch (err) {
    pending = Promise.reject(err);
  } finally {
    if (hadSignal) config.signal = outer;
    else delete config.signal;
  }
  try {
    const res = await pending;
    res.config = config;
    return res;
  } catch (err) {
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
  } finally {
    clearTimeout(timer);
    off?.();
    attempt.dispose();
  }
}
