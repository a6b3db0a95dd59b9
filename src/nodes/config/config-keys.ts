/**
 * The config node's settings as the editor's admin routes (admin-routes.ts) take them: the one
 * list. No imports: `npm run build` wraps the compiled file into resources/config-keys.js
 * (window.EmsPartnerConfigKeys), from which the editor (resources/editor.js, the config node's
 * panel) sends what the routes read here (admin-guard.ts).
 */

/**
 * The settings that decide where and how a request of the routes reaches the service (base URL
 * or simulator, authentication, time and size limits, TLS, paths): what the editor sends of a
 * config node being edited, and what its cache of listed devices and sites is keyed by.
 */
export const CONNECTION_KEYS = [
  'baseUrl',
  'simulator',
  'authType',
  'apiKeyHeader',
  'tokenUrl',
  'clientId',
  'scope',
  'timeout',
  'rejectUnauthorized',
  'caCert',
  'maxBodyMB',
  'pathDevices',
  'pathSites',
  'pathCurtailment',
  'pathGridLimits',
] as const;

/**
 * The config node's other settings: a request may carry them too (the route builds its
 * runtime from them, with retries 0), but the editor does not send them, as they change
 * nothing a listing or a connection test reads.
 */
export const OTHER_KEYS = [
  'name',
  'retries',
  'concurrency',
  'coalesceMs',
  'maxValidity',
  'percentCurtailment',
  'maxPerMinute',
  'maxPerDay',
  'budgetMode',
  'maxWaiting',
] as const;

/** Every setting a request's `config` may carry (everything else in it is ignored). */
export const CONFIG_KEYS = [...CONNECTION_KEYS, ...OTHER_KEYS] as const;

/** The credentials: sent only when typed in the editor (stored ones never reach the browser). */
export const SECRET_KEYS = ['apiKey', 'clientSecret'] as const;
