/**
 * Typed errors of the API core. Secrets never enter an error: the request is kept as
 * method and path only (no headers, no query credentials), and messages from the
 * service are passed through `redact` with the secrets the client knows.
 */

/** Input that was refused before anything was sent. Names the field and the accepted forms. */
export class ValidationError extends Error {
  readonly field: string;
  readonly code = 'EMS_VALIDATION';
  /** `malformed`: wrong type or form (HTTP 400); `unprocessable`: well-formed but not allowed (HTTP 422). */
  readonly kind: 'malformed' | 'unprocessable';
  constructor(field: string, message: string, kind: 'malformed' | 'unprocessable' = 'malformed') {
    super(`${field} ${message}`);
    this.name = 'ValidationError';
    this.field = field;
    this.kind = kind;
  }
}

export interface RequestInfo {
  method: string;
  path: string;
}

/** A request that reached the wire and failed (HTTP status, timeout, connection error). */
export class ApiError extends Error {
  readonly code: string;
  readonly status?: number;
  readonly serviceMessage?: string;
  readonly request: RequestInfo;
  readonly requestId?: string;
  /** Seconds the service asked us to wait (429 / 503 Retry-After). */
  readonly retryAfter?: number;
  /** The input field the service refused, when the caller knows it (see refusedField). */
  readonly field?: string;
  constructor(opts: {
    message: string;
    code: string;
    request: RequestInfo;
    status?: number;
    serviceMessage?: string;
    requestId?: string;
    retryAfter?: number;
    field?: string;
  }) {
    super(opts.message);
    this.name = 'ApiError';
    this.code = opts.code;
    this.status = opts.status;
    this.serviceMessage = opts.serviceMessage;
    this.request = opts.request;
    this.requestId = opts.requestId;
    this.retryAfter = opts.retryAfter;
    this.field = opts.field;
  }
}

/**
 * A service refusal (400, 404, 409, 422) attributed to the input field the refused value came
 * from, e.g. `msg.deviceReference was refused by the service: GET … failed: HTTP 404 unknown
 * device`. Other errors are returned unchanged.
 */
export function refusedField(err: unknown, field: string): unknown {
  if (!(err instanceof ApiError) || err.field || ![400, 404, 409, 422].includes(err.status ?? 0)) return err;
  return new ApiError({
    code: err.code, status: err.status, serviceMessage: err.serviceMessage, request: err.request,
    requestId: err.requestId, retryAfter: err.retryAfter, field,
    message: `${field} was refused by the service: ${err.message}`,
  });
}

/** Reads the service's own message from the usual fields of an error body. */
export function serviceMessageOf(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim() ? body.trim().slice(0, 300) : undefined;
  if (!body || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  // OAuth2 error responses (RFC 6749 5.2): {error: code, error_description: text}.
  if (typeof b.error === 'string' && typeof b.error_description === 'string') return `${b.error}: ${b.error_description}`;
  for (const key of ['message', 'error', 'detail', 'title', 'error_description']) {
    const v = b[key];
    if (typeof v === 'string' && v) return v;
    if (key === 'error' && v && typeof v === 'object') {
      const inner = (v as Record<string, unknown>).message;
      if (typeof inner === 'string' && inner) return inner;
    }
  }
  return undefined;
}

/** Replaces every occurrence of a secret by `***`. Secrets shorter than 4 characters are masked too. */
export function redact(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length > 0) out = out.split(s).join('***');
  }
  return out;
}
