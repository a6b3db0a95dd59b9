/**
 * Authentication strategies: none, API key in a header, bearer token, and OAuth2 client
 * credentials with a cached token (one fetch for concurrent callers, refreshed before
 * expiry, invalidated on a 401, failures cooled down so they never turn into a storm).
 */
import type { AxiosInstance } from 'axios';
import { isCancel } from './http-lib';
import { ApiError, apiError, redact, serviceMessageOf } from './errors';
import { checkHeaderName, checkNoControl } from './request-path';
import { redirectText } from './error-map';

export type AuthConfig =
  | { type: 'none' }
  | { type: 'header'; apiKey: string; header?: string }
  | { type: 'bearer'; token: string }
  | { type: 'oauth2'; tokenUrl: string; clientId: string; clientSecret: string; scope?: string };

export type AuthType = AuthConfig['type'];

/** Every secret of a config, for redaction (the OAuth2 access tokens are added when fetched). */
export function secretsOf(auth: AuthConfig | undefined): string[] {
  if (!auth) return [];
  if (auth.type === 'header') return [auth.apiKey];
  if (auth.type === 'bearer') return [auth.token];
  if (auth.type === 'oauth2') return [auth.clientSecret];
  return [];
}

/**
 * Refuses (ValidationError naming the config node's field) an authentication that would not be
 * sent as set: a key header that is not an HTTP token or is one the transport owns, a line break
 * or control character in a key, token, secret or URL. Checked as a client is made, so a
 * deployed config node and the editor's Test connection refuse alike.
 */
export function checkAuth(auth: AuthConfig): void {
  if (auth.type === 'header') {
    checkHeaderName(auth.header, 'apiKeyHeader');
    checkNoControl(auth.apiKey, 'apiKey');
  } else if (auth.type === 'bearer') {
    checkNoControl(auth.token, 'apiKey');
  } else if (auth.type === 'oauth2') {
    for (const k of ['tokenUrl', 'clientId', 'clientSecret', 'scope'] as const) checkNoControl(auth[k], k);
  }
}

interface CachedToken {
  token: string;
  expiresAt: number;
  /** Refresh from this time on: 60 s before expiry, or 10 % of the lifetime for short-lived tokens. */
  refreshAt: number;
}

export class OAuth2TokenSource {
  private cached?: CachedToken;
  private inflight?: Promise<string>;
  private failedUntil = 0;
  private lastFailure?: ApiError;
  private lastFailureAt = 0;
  private failures = 0;
  /** Number of token requests made (for tests and diagnostics). */
  fetchCount = 0;

  constructor(
    private readonly cfg: Extract<AuthConfig, { type: 'oauth2' }>,
    private readonly http: AxiosInstance,
    private readonly secrets: () => string[],
    private readonly now: () => number = Date.now,
    /** Told every access token fetched, before it is used (for redaction). */
    private readonly onToken?: (token: string) => void,
  ) {}

  /** A valid token; concurrent callers share one fetch. */
  async token(signal?: AbortSignal): Promise<string> {
    const now = this.now();
    if (this.cached && now < this.cached.refreshAt) return this.cached.token;
    if (this.inflight) return this.inflight;
    if (now < this.failedUntil && this.lastFailure) throw this.repeated(this.lastFailure, now);
    this.inflight = this.fetch(signal).finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /** Drops the cached token (after a 401) so the next call fetches a new one. */
  invalidate(token?: string): void {
    if (!token || this.cached?.token === token) this.cached = undefined;
  }

  private async fetch(signal?: AbortSignal): Promise<string> {
    this.fetchCount++;
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: this.cfg.clientId,
      client_secret: this.cfg.clientSecret,
    });
    if (this.cfg.scope) form.set('scope', this.cfg.scope);
    const path = safePath(this.cfg.tokenUrl);
    try {
      const res = await this.http.post(this.cfg.tokenUrl, form.toString(), {
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        signal,
        validateStatus: () => true,
        'axios-retry': { retries: 0 },
      } as never);
      const body = res.data as Record<string, unknown> | undefined;
      if (
        res.status >= 200 &&
        res.status < 300 &&
        body &&
        typeof body.access_token === 'string' &&
        body.access_token !== ''
      ) {
        this.onToken?.(body.access_token);
        const expiresIn = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
        const lifetime = expiresIn * 1000;
        const at = this.now();
        this.cached = {
          token: body.access_token,
          expiresAt: at + lifetime,
          refreshAt: at + lifetime - Math.min(60_000, lifetime / 10),
        };
        this.failures = 0;
        return body.access_token;
      }
      const mask = (t: string) => redact(t, this.secrets());
      const said = serviceMessageOf(body, mask);
      let why: string;
      if (res.status >= 200 && res.status < 300)
        why = `no access_token in the answer (HTTP ${res.status}${said ? `: ${said}` : ''})`;
      else if (res.status >= 300 && res.status < 400) why = redirectText(res.status, res.headers?.location, mask);
      else why = said ? `${res.status} ${said}` : `HTTP ${res.status}`;
      throw this.fail(
        apiError({
          code: 'EMS_AUTH',
          status: res.status,
          message: mask(`OAuth2 token request to ${path} failed: ${why}`),
          serviceMessage: said ?? `HTTP ${res.status}`,
          request: { method: 'POST', path },
        }),
      );
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if (isCancel(err)) throw err;
      const code = /maxContentLength/.test((err as Error)?.message ?? '')
        ? 'answer too large'
        : ((err as { code?: string }).code ?? 'ERROR');
      throw this.fail(
        apiError({
          code: 'EMS_AUTH',
          message: `OAuth2 token request to ${path} failed: ${code}`,
          request: { method: 'POST', path },
        }),
      );
    }
  }

  /** Cools down after a failure: 1 s, 2 s, 4 s ... up to 60 s; callers in that window get the same failure, said to be repeated. */
  private fail(e: ApiError): ApiError {
    this.failures++;
    this.lastFailureAt = this.now();
    this.failedUntil = this.lastFailureAt + Math.min(60_000, 1000 * 2 ** (this.failures - 1));
    this.lastFailure = e;
    return e;
  }

  /** The last failure, for a caller in the cool-down: no token request was made; says when it failed and when the next try is. */
  private repeated(e: ApiError, now: number): ApiError {
    const iso = (t: number) => new Date(t).toISOString();
    const wait = Math.ceil((this.failedUntil - now) / 1000);
    return apiError({
      code: e.code,
      status: e.status,
      serviceMessage: e.serviceMessage,
      request: e.request,
      message: `${e.message}; repeated from the last token request (${iso(this.lastFailureAt)}, ${this.failures} failed in a row): none is made before ${iso(this.failedUntil)} (in ${wait} s)`,
    });
  }
}

/** Host and path of a URL, without query string or credentials. */
function safePath(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.host}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}
