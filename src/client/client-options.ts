/** The options of an EmsClient, and those of each call. */
import { PATH_KEYS, PATH_SETTINGS, type ApiPaths } from '../protocol';
import type { AuthConfig } from './auth';
import type { AttemptHook } from './attempts';
import type { HttpAdapterName } from './http-pool';

export interface ClientOptions {
  baseUrl: string;
  auth?: AuthConfig;
  /** Wall-clock time per attempt, ms (default 10000): connecting, waiting and reading the whole body. */
  timeoutMs?: number;
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** Requests in flight at once (default 6). */
  concurrency?: number;
  rejectUnauthorized?: boolean;
  /** Extra CA certificates, PEM. */
  ca?: string;
  /** First backoff step, ms (default 250); doubles per retry up to retryMaxMs (default 8000). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Largest response body accepted, bytes (default 10 MB). */
  maxBodyBytes?: number;
  /** The paths the specification does not show (protocol/paths.ts); unset ones are the defaults. */
  paths?: Partial<ApiPaths>;
  /** Sees every attempt before and after it is sent (the runtime's request budget; attempts.ts). */
  attempts?: AttemptHook;
  /** The transport under axios: 'undici' (default) or axios' own 'http' adapter on Node's http. */
  adapter?: HttpAdapterName;
}

/** Paths keyed as the config node's properties (pathDevices, ...), for resolvePaths. */
export function pathSettings(paths: Partial<ApiPaths> | undefined): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const key of PATH_KEYS) settings[PATH_SETTINGS[key].property] = paths?.[key];
  return settings;
}

export interface CallOptions {
  signal?: AbortSignal;
}

/** Default largest response body: 10 MB. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;
