/** Public entry of the typed API core (no Node-RED imports). */
export * from './types';
export * from './errors';
export * from './units';
export * from './time';
export * from './validate';
export * from './devices';
export * from './auth';
export * from './limiter';
export { EmsClient, mergeSeries, toTimeSeriesRequest, hostPortOf, DEFAULT_MAX_BODY_BYTES, type ClientOptions, type CallOptions, type TimeSeriesQuery } from './client';
export { readResponse, badResponse, type ResponseShape } from './responses';
export { isRetryable, type ConnectionState } from './transport';
export * from './steering-queue';
export * from './coalescer';
export * from './poll-scheduler';
