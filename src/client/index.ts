/**
 * Client room: HTTP to the partner API (transport with retries, bounded concurrency and
 * wall-clock deadlines, authentication, the shape checks of answers, error classes).
 */
export {
  EmsClient,
  mergeSeries,
  toTimeSeriesRequest,
  MAX_SPANS,
  type ClientOptions,
  type CallOptions,
  type TimeSeriesQuery,
  type Listener,
} from './client';
export { isRetryable, type ConnectionState } from './transport';
export * from './errors';
export * from './auth';
export { Limiter, mapLimit } from './limiter';
export { isAborted, onAbort } from './abort-hub';
export * from './responses';
export { rawAnswerOf, type RawResponse, type RawOptions } from './any-endpoint';
export * from './request-path';
export { attemptPath, type Attempt, type AttemptHook, type AttemptOutcome } from './attempts';
