/**
 * The HTTP transport of one client: one axios instance on a keep-alive connection pool (http-pool.ts), bounded
 * concurrency, a shared pause after a 429, authentication headers, and retries
 * (axios-retry) with exponential backoff, jitter and Retry-After. Every attempt is bounded:
 * its body by maxBodyBytes (maxContentLength), its time by a wall-clock deadline (an abort
 * timer, so a body that drips or never ends is cut off and its concurrency slot freed).
 * What is retried: retry-policy.ts; the attempt hook (the runtime's request budget): attempts.ts.
 */
import type { AxiosError, AxiosAdapter, AxiosInstance, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { httpLib, isCancel, methodName } from './http-lib';
import { Limiter } from './limiter';
import { isAborted } from './abort-hub';
import { started, withDeadline } from './deadline';
import { isRetryable } from './retry-policy';
import type { MetaConfig } from './request-meta';
import { OAuth2TokenSource, type AuthConfig } from './auth';
import type { Redactor } from './errors';
import type { Attempt, AttemptHook } from './attempts';

export { withDeadline } from './deadline';
export type { EmsRequestMeta, MetaConfig } from './request-meta';
export { isRetryable, isTransientNetworkError } from './retry-policy';
import { createHttpPool, type HttpAdapterName, type HttpPool } from './http-pool';

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

/** The state after an answer, the same object each time (one per answer would be an allocation per read). */
const OK: ConnectionState = Object.freeze({ state: 'ok' });

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
      deadline: true,
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
        adapter: this.pool.deadlined ? send : (config) => withDeadline(send, config, opts.timeoutMs),
      });
      const redactor = opts.redactor;
      this.tokens = new OAuth2TokenSource(
        opts.auth,
        tokenHttp,
        () => redactor.secrets as string[],
        Date.now,
        (t) => redactor.add(t),
      );
    }
    // Without authentication no interceptor is needed. axios runs the request interceptors inline only when
    // every one is marked synchronous; otherwise each one is a promise and a microtask of every request.
    // A key or a token is set at once (synchronous); an OAuth2 token may have to be fetched first.
    if (opts.auth.type !== 'none')
      this.axios.interceptors.request.use((config) => this.authorize(config as MetaConfig), undefined, {
        synchronous: opts.auth.type !== 'oauth2',
      });
    const retry = axiosRetry(this.axios, {
      retries: opts.retries,
      shouldResetTimeout: true,
      retryCondition: (err) => this.shouldRetry(err),
      retryDelay: (_n, err) => (err.config as MetaConfig | undefined)?.ems?.nextDelay ?? 0,
    });
    // axios-retry's request interceptor builds its state (retry count 0, start time) on every request, and
    // is not marked synchronous. Its response interceptor builds the same state when a request first fails,
    // and the start time is read only without shouldResetTimeout: without it, a request's state is built
    // only when it fails, and the request chain runs inline.
    this.axios.interceptors.request.eject(retry.requestInterceptorId);
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

  /** Retry condition: the policy (retry-policy.ts), and for steering only while the retry starts before validUntil. */
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
    // Promise chains, not async functions: a read passes here once per attempt, and each await
    // would cost it a promise and a turn of the microtask queue.
    return (config) => {
      const hook = this.opts.hook;
      const signal = config.signal as AbortSignal | undefined;
      // Admitted on arrival: one the hook could not let go in time is refused now, not after
      // waiting for a slot (that wait has no bound of its own).
      const attempt = hook ? attemptOf(config as MetaConfig) : undefined;
      try {
        if (attempt && hook!.admit) hook!.admit(attempt);
      } catch (err) {
        maskRefusal(err, this.opts.redactor);
        return Promise.reject(err);
      }
      // The clock is asked only while a pause is set; one that has passed is cleared.
      let paused = false;
      if (this.pausedUntil !== 0) {
        paused = this.pausedUntil > Date.now();
        if (!paused) this.pausedUntil = 0;
      }
      // A free slot and nothing to wait for: the attempt starts now.
      if (!paused && !isAborted(signal) && this.limiter.tryAcquire()) return this.inSlot(inner, config, attempt);
      const slot = paused
        ? this.waitPause(signal).then(() => this.limiter.acquire(signal))
        : this.limiter.acquire(signal);
      return slot.then(
        () => this.inSlot(inner, config, attempt),
        (err: unknown) => {
          if (attempt) hook!.release?.(attempt);
          throw err;
        },
      );
    };
  }

  /**
   * One attempt in its concurrency slot (released however it ends). The hook's decision comes
   * here, just before sending: a refused or aborted wait sends nothing.
   */
  private inSlot(inner: AxiosAdapter, config: InternalAxiosRequestConfig, attempt: Attempt | undefined) {
    let wait: Promise<void> | void;
    try {
      wait = attempt ? this.opts.hook!.before(attempt) : undefined;
    } catch (err) {
      return this.refused(err);
    }
    if (!wait) return this.sent(this.send(inner, config), attempt);
    return wait.then(
      () => this.sent(this.send(inner, config), attempt),
      (err: unknown) => this.refused(err),
    );
  }

  private send(inner: AxiosAdapter, config: InternalAxiosRequestConfig): Promise<AxiosResponse> {
    return this.pool.deadlined ? started(inner, config) : withDeadline(inner, config, this.opts.timeoutMs);
  }

  /** The hook refused the attempt (or its wait was aborted): nothing was sent. */
  private refused(err: unknown): never {
    this.limiter.release();
    maskRefusal(err, this.opts.redactor); // its text names the path, which could hold a secret
    throw err;
  }

  /** The attempt was sent: its outcome is told to the connection state and the hook, and its slot released. */
  private sent(pending: Promise<AxiosResponse>, attempt: Attempt | undefined): Promise<AxiosResponse> {
    if (attempt === undefined) return pending.then(this.answered, this.unanswered);
    return pending.then(
      (res) => {
        try {
          this.opts.onState(OK);
          if (attempt) this.opts.hook!.after(attempt, 'ok');
          return res;
        } catch (err) {
          return this.failed(err, attempt);
        } finally {
          this.limiter.release();
        }
      },
      (err: unknown) => {
        try {
          return this.failed(err, attempt);
        } finally {
          this.limiter.release();
        }
      },
    );
  }

  /** sent()'s handlers for an attempt the hook does not see, made once: none is made per attempt. */
  private readonly answered = (res: AxiosResponse): AxiosResponse => {
    try {
      this.opts.onState(OK);
      return res;
    } catch (err) {
      return this.failed(err, undefined);
    } finally {
      this.limiter.release();
    }
  };

  private readonly unanswered = (err: unknown): never => {
    try {
      return this.failed(err, undefined);
    } finally {
      this.limiter.release();
    }
  };

  private failed(err: unknown, attempt: Attempt | undefined): never {
    this.observeFailure(err as AxiosError);
    if (attempt) this.opts.hook!.after(attempt, (err as AxiosError)?.response?.status === 429 ? '429' : 'failure');
    throw err;
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
    method: methodName(String(config.method ?? 'get')),
    url: String(config.url ?? ''),
    retry: (config['axios-retry']?.retryCount ?? 0) > 0 || config.emsAuthRetried === true,
    validUntil: meta?.validUntil,
    signal: config.signal as AbortSignal | undefined,
  };
}
