/**
 * How a failed request becomes an ApiError (client room): axios errors, aborts, the size
 * limit, timeouts, connection failures and HTTP error answers, each with the method and path
 * only (never a header or a query credential) and every text masked by the client's Redactor.
 */
import { isAxiosError } from './http-lib';
import { ApiError, apiError, oneLine, serviceMessageOf, ValidationError, type Redactor } from './errors';

/** What the mapping needs to know of the client. */
export interface ErrorContext {
  redactor: Redactor;
  /** Largest body, bytes (named in EMS_TOO_LARGE). */
  maxBodyBytes: number;
  /** Wall-clock time per attempt, ms (named in timeouts). */
  timeoutMs: number;
  /** host:port of the service (named in connection errors). */
  hostPort: string;
}

/** Longest requestId relayed from a service. */
const MAX_REQUEST_ID = 128;

/** host:port of a base URL, with the scheme's default port when it names none. */
export function hostPortOf(baseUrl: string): string {
  try {
    const parsed = new URL(baseUrl);
    return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return '(invalid base URL)';
  }
}

/** The requestId of an answer (its body's, else its x-request-id header), masked, on one line, cut to 128 characters. */
function requestIdOf(body: unknown, headerId: unknown, r: Redactor): string | undefined {
  const fields = body as Record<string, unknown> | undefined;
  const rawId =
    fields && typeof fields === 'object' && typeof fields.requestId === 'string'
      ? fields.requestId
      : typeof headerId === 'string'
        ? headerId
        : undefined;
  // Masked before they are cut, so a secret is never shown in part.
  return rawId ? oneLine(r.text(rawId.slice(0, 65_536)), MAX_REQUEST_ID) || undefined : undefined;
}

/**
 * What a 3xx answer says, for an error: that it was a redirect, that it was not followed
 * (maxRedirects 0: credentials never go to another place), and where it pointed: its Location
 * without query or fragment (they may carry credentials), masked by `mask`, on one line, cut
 * to 200 characters.
 */
export function redirectText(status: number, location: unknown, mask: (s: string) => string): string {
  const loc = typeof location === 'string' ? location.slice(0, 65_536) : '';
  const cut = loc.search(/[?#]/);
  const shown = oneLine(mask(cut < 0 ? loc : `${loc.slice(0, cut)}${loc[cut]}…`), 200);
  const where = shown ? `a redirect to ${shown}` : 'a redirect without a Location';
  return `HTTP ${status}, ${where}, not followed (redirects are never followed: set the URL to where the service answers)`;
}

/** Codes of Node's HTTP parser (llhttp): the answer was not a well-formed HTTP message. */
const PARSE_ERROR = /^HPE_/;

/**
 * The text for an answer the HTTP parser refused: a malformed answer, not a connection
 * failure. HPE_INVALID_CONSTANT is what a body longer than its Content-Length gives (the bytes
 * after it are read as the start of another answer).
 */
function malformedText(code: string, message: string): string {
  const why = oneLine(message.replace(/^Parse Error:\s*/i, ''), 80);
  const hint = code === 'HPE_INVALID_CONSTANT' ? ', e.g. a body longer than its Content-Length' : '';
  return `answered with a malformed HTTP message (${code}${why ? `: ${why}` : ''}${hint}), not a connection failure`;
}

/** The ApiError (or ValidationError, passed on) for a failed request `method path`. */
export function toApiError(err: unknown, method: string, path: string, ctx: ErrorContext): Error {
  if (err instanceof ApiError || err instanceof ValidationError) return err;
  const request = { method, path };
  const redactor = ctx.redactor;
  if (!isAxiosError(err)) {
    const reason =
      (err as { name?: string })?.name === 'AbortError' || (err as { code?: string })?.code === 'ERR_CANCELED'
        ? 'aborted'
        : 'failed';
    return apiError({
      code: reason === 'aborted' ? 'EMS_ABORTED' : 'EMS_ERROR',
      message: `${method} ${path} ${reason}`,
      request,
    });
  }
  if (err.code === 'ERR_CANCELED')
    return apiError({ code: 'EMS_ABORTED', message: `${method} ${path} aborted`, request });
  if (/maxContentLength|maxBodyLength/.test(err.message)) {
    const mb = Math.round((ctx.maxBodyBytes / 1024 / 1024) * 100) / 100;
    const what = /maxBodyLength/.test(err.message) ? 'request body is' : 'answer is';
    return apiError({
      code: 'EMS_TOO_LARGE',
      message: `${method} ${path} ${what} over the limit of ${mb} MB (maxBodyMB)`,
      request,
    });
  }
  const res = err.response;
  const code = err.code ?? 'EMS_NETWORK';
  if (!res && PARSE_ERROR.test(code)) {
    return apiError({
      code: 'EMS_BAD_RESPONSE',
      message: redactor.text(`${method} ${path} ${malformedText(code, err.message ?? '')}`),
      request,
    });
  }
  if (!res || (res.status >= 200 && res.status < 300)) {
    // No answer, or an answer cut off mid-body: name the host and port, never the path's query.
    const what =
      code === 'ETIMEDOUT' || code === 'ECONNABORTED'
        ? `timed out after ${ctx.timeoutMs} ms (${code})`
        : `connection to ${ctx.hostPort} failed (${code})`;
    return apiError({ code, message: redactor.text(`${method} ${path} ${what}`), request });
  }
  const body = res.data as Record<string, unknown> | string | undefined;
  const requestId = requestIdOf(body, res.headers?.['x-request-id'], redactor);
  const serviceMessage = serviceMessageOf(body, (s) => redactor.text(s));
  const ra = Number(res.headers?.['retry-after']);
  return apiError({
    code: `HTTP_${res.status}`,
    status: res.status,
    serviceMessage,
    requestId,
    retryAfter: Number.isFinite(ra) ? ra : undefined,
    request,
    message: redactor.text(
      `${method} ${path} failed: ${
        res.status >= 300 && res.status < 400
          ? redirectText(res.status, res.headers?.location, (t) => redactor.text(t))
          : `HTTP ${res.status}${serviceMessage ? ` ${serviceMessage}` : ''}`
      }${requestId ? ` (requestId ${requestId})` : ''}`,
    ),
  });
}
