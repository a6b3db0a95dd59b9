/**
 * Raw requests (EmsClient.raw, the `ems-request` node): any endpoint below the base URL,
 * through the client's own transport (authentication, retries, concurrency, the wall-clock
 * deadline, maxBodyBytes both ways), without a shape check. The path is checked before
 * anything is sent (request-path.ts). The answer is parsed JSON, else text, with every form
 * of every secret the client knows masked (in values and keys), and only selected headers,
 * never an authentication header or a cookie. A non-2xx answer rejects with its ApiError,
 * which carries the answer (rawAnswerOf), so a flow can still read what the service said.
 */
import type { AxiosInstance, AxiosRequestConfig, AxiosResponse } from 'axios';
import { isAxiosError } from './http-lib';
import { apiError, MAX_NESTING, oneLine, ValidationError, type Redactor } from './errors';
import { toApiError, type ErrorContext } from './error-map';
import { checkRequestMethod, requestUrl, type RequestMethod } from './request-path';
import { type EmsRequestMeta, RequestMeta } from './request-meta';

/** The answer of a raw request, as the ems-request node puts it on a message. */
export interface RawResponse {
  statusCode: number;
  /** Selected headers (ANSWER_HEADERS), lower-case names, values masked and on one line. */
  headers: Record<string, string>;
  /** Parsed JSON, else the text ('' for no body). */
  payload: unknown;
}

export interface RawOptions {
  signal?: AbortSignal;
  /** The fields the method, path and body came from, as refusals name them (default method, path, body). */
  fields?: { method?: string; path?: string; body?: string };
}

/** What a raw request needs of its client. */
export interface RawContext extends ErrorContext {
  axios: AxiosInstance;
  baseUrl: string;
  /** The client's signal joined with the caller's. */
  signal: AbortSignal;
  closed: boolean;
  /** Lower-case name of the configured API-key header, never relayed. */
  keyHeader?: string;
}

/** Answer headers relayed to msg.headers (nothing else is). */
const ANSWER_HEADERS: readonly string[] = [
  'content-type',
  'content-length',
  'content-language',
  'date',
  'etag',
  'last-modified',
  'location',
  'link',
  'deprecation',
  'sunset',
  'retry-after',
  'x-request-id',
  'request-id',
  'x-correlation-id',
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];
const RELAYED = new Set(ANSWER_HEADERS);
/** Never relayed, whatever the list above says (credentials and sessions). */
const NEVER = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'cookie',
  'set-cookie',
  'www-authenticate',
  'proxy-authenticate',
]);
/** Longest header value relayed. */
const MAX_HEADER = 1024;

/** The selected headers of an answer: lower-case names, values masked, on one line, cut to 1024 characters. */
export function selectHeaders(headers: unknown, r: Redactor, keyHeader?: string): Record<string, string> {
  const out: Record<string, string> = {};
  const plain =
    headers && typeof (headers as { toJSON?: unknown }).toJSON === 'function'
      ? (headers as { toJSON(): object }).toJSON()
      : headers;
  if (!plain || typeof plain !== 'object') return out;
  for (const [name, value] of Object.entries(plain as Record<string, unknown>)) {
    const lower = name.toLowerCase();
    if (!RELAYED.has(lower) || NEVER.has(lower) || lower === keyHeader) continue;
    const text = Array.isArray(value)
      ? value.join(', ')
      : typeof value === 'string' || typeof value === 'number'
        ? String(value)
        : undefined;
    if (text !== undefined) out[lower] = oneLine(r.text(text.slice(0, 65_536)), MAX_HEADER);
  }
  return out;
}

/** Masks every string and every key of a parsed answer, in place; RangeError past MAX_NESTING levels. */
function maskDeep(v: unknown, r: Redactor, depth: number): unknown {
  if (typeof v === 'string') return r.text(v);
  if (!v || typeof v !== 'object') return v;
  if (depth >= MAX_NESTING) throw new RangeError(`nested deeper than ${MAX_NESTING} levels`);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = maskDeep(v[i], r, depth + 1);
    return v;
  }
  const record = v as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const value = maskDeep(record[key], r, depth + 1);
    const masked = r.text(key);
    if (masked !== key) delete record[key];
    Object.defineProperty(record, masked, { value, writable: true, enumerable: true, configurable: true });
  }
  return record;
}

/**
 * An answer body: parsed JSON when it is JSON (whatever its content-type), else the text;
 * every form of every secret masked (in the text first, then in the parsed values and keys,
 * which catches JSON-escaped forms). JSON nested deeper than 64 levels stays text.
 */
export function answerPayload(data: unknown, r: Redactor): unknown {
  if (data === undefined || data === null) return '';
  const text = r.text(typeof data === 'string' ? data : Buffer.isBuffer(data) ? data.toString('utf8') : String(data));
  if (text.trim() === '') return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  if (r.secrets.length === 0) return parsed;
  try {
    return maskDeep(parsed, r, 0);
  } catch {
    return text;
  }
}

/** A request body: none, JSON (objects, arrays, numbers, booleans), text (strings) or bytes (Buffers). */
export function requestBody(
  body: unknown,
  method: RequestMethod,
  field: string,
): { data?: string | Buffer; type?: string } {
  if (body === undefined || body === null) return {};
  if (method === 'GET')
    throw new ValidationError(
      field,
      `must not be set for GET (a GET has no body; use POST, PUT or PATCH); got ${typeof body === 'string' ? 'a string' : Array.isArray(body) ? 'an array' : `a ${typeof body}`}`,
    );
  if (typeof body === 'string') return { data: body, type: 'text/plain; charset=utf-8' };
  if (Buffer.isBuffer(body)) return { data: body, type: 'application/octet-stream' };
  let data: string | undefined;
  try {
    data = JSON.stringify(body);
  } catch (e) {
    throw new ValidationError(
      field,
      `must be JSON (an object, array, number or boolean), a string or a Buffer; it cannot be sent as JSON (${e instanceof Error ? e.message.slice(0, 80) : 'not serialisable'})`,
    );
  }
  if (data === undefined)
    throw new ValidationError(
      field,
      `must be JSON (an object, array, number or boolean), a string or a Buffer; got a ${typeof body}`,
    );
  return { data, type: 'application/json' };
}

/** The answer an ApiError of a raw request carries, if any. */
export function rawAnswerOf(err: unknown): RawResponse | undefined {
  return err && typeof err === 'object' ? (err as { answer?: RawResponse }).answer : undefined;
}

/** The path as messages show it: at most 200 characters. */
function shown(path: string): string {
  return path.length > 200 ? `${path.slice(0, 199)}…` : path;
}

const ACCEPT = 'application/json, text/plain;q=0.9, */*;q=0.8';

/**
 * Sends one raw request (see the file's comment). GET goes by the read retry policy (connection
 * errors, timeouts, 5xx, 429); the other methods by the steering policy (429, 503, connection
 * errors, timeouts), so a POST whose answer was lost may be sent again: set retries 0 on the
 * config node for an endpoint that must never see a request twice.
 */
export async function sendRaw(
  ctx: RawContext,
  method: unknown,
  path: unknown,
  body: unknown,
  o: RawOptions = {},
): Promise<RawResponse> {
  const fields = { method: 'method', path: 'path', body: 'body', ...o.fields };
  const verb = checkRequestMethod(method, fields.method);
  requestUrl(ctx.baseUrl, path, fields.path);
  const pathText = path as string;
  const sent = requestBody(body, verb, fields.body);
  const request = { method: verb, path: shown(pathText) };
  const size =
    sent.data === undefined ? 0 : typeof sent.data === 'string' ? Buffer.byteLength(sent.data) : sent.data.length;
  if (size > ctx.maxBodyBytes) {
    const mb = Math.round((ctx.maxBodyBytes / 1024 / 1024) * 100) / 100;
    throw apiError({
      code: 'EMS_TOO_LARGE',
      message: `${verb} ${request.path} request body is over the limit of ${mb} MB (maxBodyMB); not sent`,
      request,
    });
  }
  if (ctx.closed)
    throw apiError({ code: 'EMS_CLOSED', message: `${verb} ${request.path} not sent: client closed`, request });
  const meta: EmsRequestMeta = new RequestMeta(verb === 'GET' ? 'read' : 'steer');
  const config = {
    method: verb,
    url: pathText,
    signal: ctx.signal,
    ems: meta,
    data: sent.data,
    headers: { accept: ACCEPT, ...(sent.type ? { 'content-type': sent.type } : {}) },
    // Never an absolute URL as it is (the path was checked; this is the second lock), no parsing by axios.
    allowAbsoluteUrls: false,
    responseType: 'text',
    transformResponse: [(d: unknown) => d],
  } as AxiosRequestConfig;
  let res: AxiosResponse<unknown>;
  try {
    res = await ctx.axios.request(config);
  } catch (err) {
    const answer = isAxiosError(err) && err.response && err.response.status >= 300 ? err.response : undefined;
    if (!answer) throw toApiError(err, verb, request.path, ctx);
    const payload = answerPayload(answer.data, ctx.redactor);
    answer.data = payload; // the service's message is read from the parsed body
    const error = toApiError(err, verb, request.path, ctx);
    Object.defineProperty(error, 'answer', {
      value: {
        statusCode: answer.status,
        headers: selectHeaders(answer.headers, ctx.redactor, ctx.keyHeader),
        payload,
      } satisfies RawResponse,
      enumerable: false,
    });
    throw error;
  }
  return {
    statusCode: res.status,
    headers: selectHeaders(res.headers, ctx.redactor, ctx.keyHeader),
    payload: answerPayload(res.data, ctx.redactor),
  };
}
