/**
 * Errors of requests (client room): ApiError, with one subclass per kind of failure, made by
 * apiError() from a status or code; and the redaction of secrets. Secrets never enter an
 * error: the request is kept as method and path only (no headers, no query credentials), and
 * messages from the service are masked with every form of the secrets the client knows.
 */
import { EmsError, ValidationError } from '../protocol';

export { EmsError, ValidationError };

export interface RequestInfo {
  method: string;
  path: string;
}

export interface ApiErrorOptions {
  message: string;
  code: string;
  request: RequestInfo;
  status?: number;
  serviceMessage?: string;
  requestId?: string;
  retryAfter?: number;
  field?: string;
  /** For EMS_BUDGET: the cap that refused the request. */
  budget?: BudgetRefusal;
}

/** What a request-budget refusal names: the cap, its limit, the count, and when it frees (epoch ms). */
export interface BudgetRefusal {
  cap: 'maxPerMinute' | 'maxPerDay';
  limit: number;
  count: number;
  freesAt: number;
}

/** A request that failed (HTTP status, timeout, connection error, abort, bad answer). Use apiError() to make one. */
export class ApiError extends EmsError {
  readonly code: string;
  readonly status?: number;
  readonly serviceMessage?: string;
  readonly request: RequestInfo;
  readonly requestId?: string;
  /** Seconds the service asked us to wait (429 / 503 Retry-After). */
  readonly retryAfter?: number;
  constructor(opts: ApiErrorOptions) {
    super(opts.message);
    // Each class its own name (RateLimitError, NotFoundError, ...): Node-RED shows `name: message` in msg.error.
    this.name = new.target.name;
    this.code = opts.code;
    this.status = opts.status;
    this.serviceMessage = opts.serviceMessage;
    this.request = opts.request;
    this.requestId = opts.requestId;
    this.retryAfter = opts.retryAfter;
    (this as { field?: string }).field = opts.field;
  }
}

/** The service answered with an HTTP error status. */
export class HttpError extends ApiError {}
/** 429: too many requests (retryAfter says for how long). */
export class RateLimitError extends HttpError {}
/** 401 or 403: credentials missing, wrong or not allowed. */
export class AuthenticationError extends HttpError {}
/** 404: unknown device, site or path. */
export class NotFoundError extends HttpError {}
/** Another 4xx: the service refused the request (400, 409, 422, …). */
export class RefusedError extends HttpError {}
/** 5xx: the service failed. */
export class ServerError extends HttpError {}
/** No answer: the connection failed (refused, reset, DNS, unreachable). */
export class NetworkError extends ApiError {}
/** No complete answer within the attempt's wall-clock deadline. */
export class TimeoutError extends ApiError {}
/** Not sent or not finished: the caller aborted, or the client or queue was closed. */
export class AbortedError extends ApiError {}
/** A queued steering component that was dropped before sending (node closed, redeployed). */
export class DroppedError extends ApiError {}
/** An answer of the wrong shape (EMS_BAD_RESPONSE) or over the size limit (EMS_TOO_LARGE). */
export class BadResponseError extends ApiError {}
/** Not sent: the config node's request budget (maxPerMinute, maxPerDay) refused it (EMS_BUDGET); `field` names the cap. */
export class BudgetError extends ApiError {
  readonly budget?: BudgetRefusal;
  constructor(opts: ApiErrorOptions) {
    super(opts);
    this.budget = opts.budget;
  }
}

/** Not sent: a steering command that sets no component (EMS_EMPTY). */
export class EmptyRequestError extends ApiError {}

/**
 * The class of each code this package raises without an HTTP status: the one table apiError()
 * reads (test/client/error-codes.test.ts checks that every code the source passes to apiError() is
 * here). A code that is not here is a connection failure reported by Node.js (ECONNREFUSED,
 * ENOTFOUND, EPIPE, ...) and becomes a NetworkError.
 */
export const ERROR_CODE_CLASSES: Readonly<Record<string, new (opts: ApiErrorOptions) => ApiError>> = Object.freeze({
  EMS_ABORTED: AbortedError,
  EMS_CLOSED: AbortedError,
  EMS_DROPPED: DroppedError,
  EMS_BAD_RESPONSE: BadResponseError,
  EMS_TOO_LARGE: BadResponseError,
  /** A list answer without a requested property. */
  EMS_MISSING: BadResponseError,
  EMS_BUDGET: BudgetError,
  EMS_EMPTY: EmptyRequestError,
  /** The OAuth2 token endpoint failed or could not be reached: no request can be authenticated. */
  EMS_AUTH: AuthenticationError,
  /** A transport failure that is not an axios error (the request did not complete). */
  EMS_ERROR: NetworkError,
  EMS_NETWORK: NetworkError,
  ETIMEDOUT: TimeoutError,
  ECONNABORTED: TimeoutError,
  ERR_SOCKET_CONNECTION_TIMEOUT: TimeoutError,
});

/**
 * The ApiError subclass for a failure: a token failure (EMS_AUTH) is an AuthenticationError
 * whatever the token endpoint answered; otherwise by its HTTP status, else its code. Never
 * throws and never recurses.
 */
export function apiError(opts: ApiErrorOptions): ApiError {
  const code = opts.code;
  if (code === 'EMS_AUTH') return new AuthenticationError(opts);
  const status = opts.status;
  if (status !== undefined) {
    if (status === 429) return new RateLimitError(opts);
    if (status === 401 || status === 403) return new AuthenticationError(opts);
    if (status === 404) return new NotFoundError(opts);
    if (status >= 500) return new ServerError(opts);
    if (status >= 400) return new RefusedError(opts);
    return new HttpError(opts);
  }
  const cls = Object.prototype.hasOwnProperty.call(ERROR_CODE_CLASSES, code) ? ERROR_CODE_CLASSES[code] : NetworkError;
  return new cls(opts);
}

/**
 * A service refusal (400, 404, 409, 422) attributed to the input field the refused value came
 * from, e.g. `msg.deviceReference was refused by the service: GET … failed: HTTP 404 unknown
 * device`. Other errors are returned unchanged.
 */
export function refusedField(err: unknown, field: string): unknown {
  if (!(err instanceof ApiError) || err.field || ![400, 404, 409, 422].includes(err.status ?? 0)) return err;
  return apiError({
    code: err.code,
    status: err.status,
    serviceMessage: err.serviceMessage,
    request: err.request,
    requestId: err.requestId,
    retryAfter: err.retryAfter,
    field,
    message: `${field} was refused by the service: ${err.message}`,
  });
}

/** Longest service message relayed from a JSON field; text and HTML bodies give at most 120 characters. */
const MAX_FIELD_MESSAGE = 200;
const MAX_TEXT_MESSAGE = 120;

/** Masking is applied to this much of a text before it is cut, so no secret is cut in half and shown in part. */
const MASK_SPAN = 65_536;
const same = (s: string): string => s;

/**
 * Reads the service's own message from the usual fields of an error body, as one short line.
 * A text body gives its first 120 characters; an HTML page its `<title>` (or, without one, a
 * short excerpt of its text), never the page itself. `mask` (the client's redaction) is
 * applied before the text is cut.
 */
export function serviceMessageOf(body: unknown, mask: (s: string) => string = same): string | undefined {
  if (typeof body === 'string') return textMessage(mask(body.slice(0, MASK_SPAN)));
  if (!body || typeof body !== 'object') return undefined;
  const fields = body as Record<string, unknown>;
  const line = (s: string) => oneLine(mask(s.slice(0, MASK_SPAN)), MAX_FIELD_MESSAGE);
  // OAuth2 error responses (RFC 6749 5.2): {error: code, error_description: text}.
  if (typeof fields.error === 'string' && typeof fields.error_description === 'string')
    return line(`${fields.error}: ${fields.error_description}`) || undefined;
  for (const key of ['message', 'error', 'detail', 'title', 'error_description']) {
    const value = fields[key];
    if (typeof value === 'string' && value.trim()) return line(value);
    if (key === 'error' && value && typeof value === 'object') {
      const inner = (value as Record<string, unknown>).message;
      if (typeof inner === 'string' && inner.trim()) return line(inner);
    }
  }
  return undefined;
}

/** Whether a text body is an HTML (or XML) page rather than a message. */
export function looksLikeHtml(text: string): boolean {
  return /^\s*</.test(text.slice(0, 64));
}

/** Collapses whitespace and control characters to single spaces and cuts to `max` characters. */
export function oneLine(text: string, max: number): string {
  const flat = text
    .slice(0, max * 4)
    // eslint-disable-next-line no-control-regex -- control characters are what this collapses
    .replace(/[\s\u0000-\u001f\u007f]+/g, ' ')
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function textMessage(body: string): string | undefined {
  const trimmed = body.trim();
  if (!trimmed) return undefined;
  return looksLikeHtml(trimmed) ? htmlMessage(trimmed) : oneLine(trimmed, MAX_TEXT_MESSAGE);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(s: string): string {
  return s.replace(/&(#\d{1,6}|#x[0-9a-f]{1,6}|[a-z]{2,6});/gi, (m, e: string) => {
    if (e[0] !== '#') return ENTITIES[e.toLowerCase()] ?? m;
    const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
  });
}

/** The `<title>` of a page, or a short excerpt of its text. Linear in the page (indexOf, no backtracking). */
function htmlMessage(page: string): string {
  const head = page.slice(0, 65_536);
  const lower = head.toLowerCase();
  const open = lower.indexOf('<title');
  if (open >= 0) {
    const from = lower.indexOf('>', open);
    const to = from >= 0 ? lower.indexOf('</title', from) : -1;
    const title = to > from ? oneLine(decodeEntities(head.slice(from + 1, to)), MAX_TEXT_MESSAGE) : '';
    if (title) return title;
  }
  const text = oneLine(decodeEntities(head.replace(/<[^>]*>/g, ' ')), MAX_TEXT_MESSAGE);
  return text || 'an HTML page';
}

/** Tokens kept for redaction besides the configured secrets (OAuth2 access tokens fetched). */
const MAX_DYNAMIC_SECRETS = 8;
/** A base64 fragment shorter than this is not masked on its own (it would match ordinary text). */
const MIN_BASE64_FRAGMENT = 8;
/** Deepest nesting a redacted (steering) answer may have. */
export const MAX_NESTING = 64;

/**
 * Every form in which a secret may come back from a service: raw, URL-encoded
 * (encodeURIComponent, form encoding with `+` for spaces, lower-case hex), and base64
 * (standard and URL-safe, with or without padding, and the part of it that the secret
 * alone determines at each of the three byte alignments, so it is found inside the base64
 * of a longer text such as an echoed header block).
 */
export function secretForms(secret: string): string[] {
  const out = new Set<string>([secret]);
  const uri = encodeURIComponent(secret);
  const form = new URLSearchParams({ s: secret }).toString().slice(2);
  for (const e of [uri, uri.replace(/%20/g, '+'), form, encodeURI(secret)]) {
    out.add(e);
    out.add(e.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  }
  const bytes = Buffer.from(secret, 'utf8');
  const byteCount = bytes.length;
  const full = bytes.toString('base64');
  const urlSafe = (b: string) => b.replace(/\+/g, '-').replace(/\//g, '_');
  if (byteCount >= 3) {
    out.add(full);
    out.add(urlSafe(full));
    out.add(full.replace(/=+$/, ''));
    out.add(urlSafe(full).replace(/=+$/, ''));
  }
  for (let k = 0; k < 3; k++) {
    const encoded = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    const core = encoded.slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + byteCount)) / 6));
    if (core.length >= MIN_BASE64_FRAGMENT) {
      out.add(core);
      out.add(urlSafe(core));
    }
  }
  out.delete('');
  // Longest first, so a form that contains another is replaced whole.
  return [...out].sort((a, b) => b.length - a.length);
}

/**
 * Masks secrets in texts and in answers. The forms of every secret are computed once per
 * secret set (when a secret is added), so masking a text is a few `includes` calls.
 */
export class Redactor {
  private readonly fixed: string[];
  private dynamic: string[] = [];
  private forms: string[] = [];
  private all: string[] = [];

  constructor(secrets: ReadonlyArray<string | undefined> = []) {
    this.fixed = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length > 0))];
    this.rebuild();
  }

  /** The secrets themselves (configured ones and those added), a stable array until one is added. */
  get secrets(): readonly string[] {
    return this.all;
  }

  /** Adds a secret learnt at run time (an OAuth2 access token); the oldest added ones are dropped. */
  add(secret: string | undefined): void {
    if (!secret || this.all.includes(secret)) return;
    this.dynamic.push(secret);
    if (this.dynamic.length > MAX_DYNAMIC_SECRETS) this.dynamic.shift();
    this.rebuild();
  }

  /** The text with every form of every secret replaced by `***`. */
  text(s: string): string {
    const forms = this.forms;
    if (forms.length === 0 || typeof s !== 'string') return s;
    let out = s;
    for (let i = 0; i < forms.length; i++) {
      if (out.includes(forms[i])) out = out.split(forms[i]).join('***');
    }
    return out;
  }

  /**
   * Masks every string value of a parsed JSON answer, in place (the answer is ours: axios
   * parsed it for this call). Throws a RangeError past MAX_NESTING levels.
   */
  deep<T>(value: T, depth = 0): T {
    if (this.forms.length === 0) return value;
    if (typeof value === 'string') return this.text(value) as T;
    if (!value || typeof value !== 'object') return value;
    if (depth >= MAX_NESTING) throw new RangeError(`nested deeper than ${MAX_NESTING} levels`);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = this.deep(value[i], depth + 1);
    } else {
      const record = value as Record<string, unknown>;
      for (const k of Object.keys(record)) {
        const entry = record[k];
        if (entry && (typeof entry === 'string' || typeof entry === 'object')) {
          const copied = this.deep(entry, depth + 1);
          if (copied !== entry)
            Object.defineProperty(record, k, { value: copied, writable: true, enumerable: true, configurable: true });
        }
      }
    }
    return value;
  }

  private rebuild(): void {
    this.all = [...this.fixed, ...this.dynamic];
    this.forms = [...new Set(this.all.flatMap(secretForms))].sort((a, b) => b.length - a.length);
  }
}

let lastSecrets: ReadonlyArray<string | undefined> | undefined;
let lastRedactor = new Redactor();

/** Replaces every form of every secret (see secretForms) by `***`. Secrets shorter than 4 characters are masked too. */
export function redact(text: string, secrets: ReadonlyArray<string | undefined>): string {
  if (secrets !== lastSecrets) {
    lastSecrets = secrets;
    lastRedactor = new Redactor(secrets);
  }
  return lastRedactor.text(text);
}
