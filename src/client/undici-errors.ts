/**
 * undici's errors as axios' http adapter (on Node's http) raises the same failures, so the
 * retry policy, the error classes and the messages users see do not depend on the adapter.
 * Errors of the socket itself (ECONNREFUSED, ENOTFOUND, EHOSTUNREACH, TLS codes such as
 * DEPTH_ZERO_SELF_SIGNED_CERT) reach us as Node raised them and keep their code.
 */
import type { AxiosError, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { httpLib } from './http-lib';

/** undici's own codes, as Node's http names the same failure. */
const CODES: Readonly<Record<string, string>> = {
  // The connection closed before the whole answer came ("socket hang up" / "aborted" in Node).
  UND_ERR_SOCKET: 'ECONNRESET',
  UND_ERR_CLOSED: 'ECONNRESET',
  UND_ERR_DESTROYED: 'ECONNRESET',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'ECONNRESET',
  UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_HEADERS_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_BODY_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_HEADERS_OVERFLOW: 'HPE_HEADER_OVERFLOW',
  UND_ERR_INVALID_ARG: 'ERR_BAD_REQUEST',
  UND_ERR_NOT_SUPPORTED: 'ERR_NOT_SUPPORT',
  UND_ERR_REQ_CONTENT_LENGTH_MISMATCH: 'ERR_BAD_REQUEST',
};

/** The AxiosError for an error undici (or the socket under it) reported for one request. */
export function undiciError(
  err: unknown,
  config: InternalAxiosRequestConfig,
  request: unknown,
  response?: AxiosResponse,
): AxiosError {
  const { AxiosError } = httpLib().axios;
  const error = (err instanceof Error ? err : new Error(String(err))) as Error & { code?: string; cause?: unknown };
  let code = error.code;
  let message = error.message;
  if (code !== undefined && code.startsWith('UND_ERR')) {
    const cause = error.cause as { code?: unknown } | undefined;
    // A socket error undici wraps keeps the code Node gave it (ECONNRESET, EPIPE, ...).
    code =
      code === 'UND_ERR_SOCKET' && typeof cause?.code === 'string' && /^E[A-Z]+$/.test(cause.code)
        ? cause.code
        : (CODES[code] ?? 'ERR_NETWORK');
    if (code === 'ECONNRESET' && response) {
      // Cut off after the headers: axios' http adapter names it so (with the answer so far).
      code = 'ERR_BAD_RESPONSE';
      message = 'stream has been aborted';
    } else if (code === 'ECONNRESET') message = 'socket hang up';
    else if (code === 'ETIMEDOUT') message = `timeout: ${message}`;
  }
  const out = new AxiosError(message, code, config, request, response);
  out.cause = error;
  return out;
}
