/**
 * axios and axios-retry, loaded on first use. Requiring axios costs about 130 ms; a Node-RED
 * that has this package installed but no config node deployed should not pay that at start-up
 * (BENCHMARKS.md, benchmark 5).
 */
import type { AxiosError } from 'axios';

interface HttpLib {
  axios: typeof import('axios');
  axiosRetry: typeof import('axios-retry').default;
  retryAfter: typeof import('axios-retry').retryAfter;
}

let lib: HttpLib | undefined;

export function httpLib(): HttpLib {
  if (!lib) {
    const axios = require('axios') as typeof import('axios');
    const retry = require('axios-retry') as typeof import('axios-retry');
    lib = { axios, axiosRetry: retry.default, retryAfter: retry.retryAfter };
  }
  return lib;
}

/** axios' own test, without loading axios: a cancelled request carries __CANCEL__. */
export function isCancel(err: unknown): boolean {
  return !!err && typeof err === 'object' && (err as { __CANCEL__?: boolean }).__CANCEL__ === true;
}

export function isAxiosError(err: unknown): err is AxiosError {
  return !!err && typeof err === 'object' && (err as { isAxiosError?: boolean }).isAxiosError === true;
}

/** axios' methods (lower case in its config) as sent; any other is upper-cased per request. */
const METHODS = new Map(['get', 'post', 'put', 'patch', 'delete', 'head', 'options'].map((m) => [m, m.toUpperCase()]));

/** A request's method as sent (upper case), without a new string for the usual ones. */
export function methodName(method: string): string {
  return METHODS.get(method) ?? method.toUpperCase();
}
