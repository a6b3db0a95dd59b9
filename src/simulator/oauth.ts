/**
 * OAuth2 client-credentials token endpoint of the simulator (`POST /oauth/token`, form or
 * JSON body). Issued tokens are accepted as `Authorization: Bearer` until they expire on the
 * simulated clock, so tests can expire them with clock.advance.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from './clock';

export interface OAuthOptions {
  clientId: string;
  clientSecret: string;
  /** Lifetime of a token, s (default 3600). */
  tokenTtlSeconds?: number;
}

export class TokenIssuer {
  private readonly tokens = new Map<string, number>();
  /** Tokens issued so far. */
  issued = 0;

  constructor(
    private readonly opts: OAuthOptions,
    private readonly clock: Clock,
  ) {
    if (!opts.clientId || !opts.clientSecret) throw new TypeError('oauth needs clientId and clientSecret');
  }

  /** Answers a token request: status and JSON body. */
  handle(contentType: string | undefined, text: string): { status: number; body: object } {
    let form: Record<string, string>;
    try {
      form = /json/i.test(contentType ?? '') ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text));
    } catch {
      return {
        status: 400,
        body: { error: 'invalid_request', error_description: 'body must be form-encoded or JSON' },
      };
    }
    if (form.grant_type !== 'client_credentials') {
      return {
        status: 400,
        body: { error: 'unsupported_grant_type', error_description: 'only client_credentials is supported' },
      };
    }
    if (form.client_id !== this.opts.clientId || form.client_secret !== this.opts.clientSecret) {
      return { status: 401, body: { error: 'invalid_client', error_description: 'unknown client or wrong secret' } };
    }
    const ttl = this.opts.tokenTtlSeconds ?? 3600;
    const token = `tok_${randomBytes(16).toString('hex')}`;
    this.tokens.set(token, this.clock.now() + ttl * 1000);
    this.issued++;
    for (const [t, exp] of this.tokens) if (exp <= this.clock.now()) this.tokens.delete(t);
    return { status: 200, body: { access_token: token, token_type: 'Bearer', expires_in: ttl } };
  }

  valid(token: string): boolean {
    const expiresAt = this.tokens.get(token);
    return expiresAt !== undefined && expiresAt > this.clock.now();
  }

  /** Invalidates every token (e.g. to test a 401 after a key rotation). */
  revokeAll(): void {
    this.tokens.clear();
  }
}
