/** What the client carries on each request through axios' config: its kind, and the state of its retries. */
import type { InternalAxiosRequestConfig } from 'axios';
import type { RequestKind } from './attempts';

/** Extra per-request settings carried through axios' config. */
export interface EmsRequestMeta {
  kind: RequestKind;
  /** For steering: no retry is scheduled that would start after this time. */
  validUntil?: number;
  /** The delay chosen for the next retry (set by the retry condition). */
  nextDelay?: number;
}

/**
 * A request's meta as its axios config carries it: an instance of a class, not a plain object,
 * so axios' mergeConfig passes it on as it is instead of deep-copying it for every request
 * (and for every retry, which then shares it: nextDelay is set and read within one failure).
 */
export class RequestMeta implements EmsRequestMeta {
  nextDelay?: number;

  constructor(
    readonly kind: RequestKind,
    readonly validUntil?: number,
  ) {}
}

export type MetaConfig = InternalAxiosRequestConfig & {
  ems?: EmsRequestMeta;
  emsAuthRetried?: boolean;
  'axios-retry'?: { retryCount?: number };
};
