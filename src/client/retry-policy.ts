/**
 * Which failed attempts are retried (README "Retries"): reads (GETs and the time-series POST)
 * on connection errors, timeouts, 5xx and 429; steering on 429, 503, timeouts and connection
 * errors only. Other 4xx are never retried.
 */
import type { AxiosError } from 'axios';
import { isCancel } from './http-lib';
import type { MetaConfig } from './request-meta';

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
