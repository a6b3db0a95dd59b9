/**
 * The admin routes as the editor calls them (part of window.EmsPartnerEditor, see editor.ts): what
 * the editor knows of a config node, the calls of the config node's admin routes (ems-partner/...)
 * with a cache per list, server and configuration, and the one line of text of a failure.
 */

const CONFIG_TYPE = 'ems-partner-config';

// The settings the editor sends and the credentials: the admin routes' own lists (resources/config-keys.js,
// built from src/nodes/config/config-keys.ts), read when used (the scripts of a panel load in any order).
export function keys(): Window['EmsPartnerConfigKeys'] {
  return window.EmsPartnerConfigKeys;
}

export function t(key: string, opts?: object): string {
  const def = RED.nodes.getType(CONFIG_TYPE);
  return def && def._ ? def._(CONFIG_TYPE + '.' + key, opts) : key;
}
export function isSecret(v: unknown): v is string {
  return typeof v === 'string' && v !== '' && v !== '__PWRD__';
}

/** The settings of a config node as the admin routes take them. */
export type ConfigSettings = Record<string, unknown>;

// What the editor knows of a config node, deployed or not. Secrets only when typed in this session:
// stored ones never reach the browser, the runtime then uses the deployed node's credentials.
export function configOf(serverId: string): ConfigSettings | undefined {
  const configNode = RED.nodes.node(serverId);
  if (!configNode) {
    return undefined;
  }
  const settings: ConfigSettings = {};
  keys().CONNECTION_KEYS.forEach(function (k) {
    settings[k] = configNode[k];
  });
  if (settings.timeout !== undefined) {
    settings.timeout = Number(settings.timeout);
  } // the editor saves form values as strings
  const credentials = configNode.credentials || {};
  keys().SECRET_KEYS.forEach(function (k) {
    if (isSecret(credentials[k])) {
      settings[k] = credentials[k];
    }
  });
  return settings;
}
// The body is always JSON: the runtime refuses anything else. `config` only for unsaved settings.
export function post(what: string, serverId: string, config?: ConfigSettings): JQueryXHR {
  const body: { server: string; config?: ConfigSettings } = { server: serverId };
  if (config) {
    body.config = config;
  }
  return $.ajax({
    url: 'ems-partner/' + what,
    type: 'POST',
    contentType: 'application/json',
    dataType: 'json',
    data: JSON.stringify(body),
    timeout: 60000,
  });
}
// Deployed as the editor shows it: the runtime uses it by id alone (read permission), its secrets stay put.
export function deployedAsIs(serverId: string): boolean {
  const configNode = RED.nodes.node(serverId);
  return !!configNode && !configNode.changed;
}
// By id when deployed as is (with the settings, `config()`, if the runtime does not know the id); else with the settings.
export function ask(
  what: string,
  serverId: string,
  config: () => ConfigSettings | undefined,
): JQueryPromise<unknown, JQueryAjaxFailure> {
  if (!deployedAsIs(serverId)) {
    return post(what, serverId, config());
  }
  const deferred = $.Deferred<unknown, JQueryAjaxFailure>(); // (not .then: it would pass on only the first argument of a failure)
  post(what, serverId)
    .done(deferred.resolve)
    .fail(function (xhr, status, err) {
      if (xhr !== undefined && xhr !== null && xhr.responseJSON && xhr.responseJSON.error === 'unknown config node') {
        post(what, serverId, config()).done(deferred.resolve).fail(deferred.reject);
      } else {
        deferred.reject(xhr, status, err);
      }
    });
  return deferred.promise();
}
// One line of text for a failed request: the runtime's message, or the HTTP status (never an HTML page).
export function errorText(xhr: JQueryXHR | undefined, status?: string, err?: string): string {
  const answer = xhr && xhr.responseJSON;
  let message: unknown = answer && (answer.message || answer.error);
  if (xhr && xhr.status === 0 && status !== 'timeout') {
    message = t('picker.unreachable');
  }
  if (!message && xhr && xhr.status >= 400) {
    message = 'HTTP ' + xhr.status + (xhr.statusText && xhr.statusText !== 'error' ? ' (' + xhr.statusText + ')' : '');
  }
  // (<site>: the paths' placeholder, text)
  const text = String(message || err || status || 'error')
    .replace(/<(?!site>)[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > 200 ? text.slice(0, 199) + '\u2026' : text;
}

const TTL = 60000;
interface CacheEntry {
  at: number;
  pending: boolean;
  promise: JQueryPromise<unknown[], [string]>;
}
const cache: Record<string, CacheEntry> = {};
// One request per list, server and configuration in flight; results kept for a minute, failures not kept.
export function load(what: string, serverId: string, force?: boolean): JQueryPromise<unknown[], [string]> {
  const config = configOf(serverId); // in the key even when only the id is sent: a redeploy with new settings misses the cache
  const key = what + '|' + serverId + '|' + deployedAsIs(serverId) + '|' + JSON.stringify(config || null);
  const hit = cache[key];
  if (hit && !force && (hit.pending || Date.now() - hit.at < TTL)) {
    return hit.promise;
  }
  const deferred = $.Deferred<unknown[], [string]>();
  const entry: CacheEntry = (cache[key] = { at: Date.now(), pending: true, promise: deferred.promise() });
  ask(what, serverId, function () {
    return config;
  })
    .done(function (list) {
      entry.pending = false;
      entry.at = Date.now();
      deferred.resolve(Array.isArray(list) ? list : []);
    })
    .fail(function (xhr, status, err) {
      if (cache[key] === entry) {
        delete cache[key];
      }
      deferred.reject(errorText(xhr, status, err));
    });
  return entry.promise;
}
export function splitList(v: unknown): string[] {
  return String(v || '')
    .split(',')
    .map(function (s) {
      return s.trim();
    })
    .filter(Boolean);
}
