/**
 * The admin routes as the editor calls them (part of window.EmsPartnerEditor, see editor.ts): what
 * the editor knows of a config node, the calls of the config node's admin routes (ems-partner/...)
 * with a cache per list, server and configuration, and the one line of text of a failure.
 */

const T = 'ems-partner-config';

// The settings the editor sends and the credentials: the admin routes' own lists (resources/config-keys.js,
// built from src/nodes/config/config-keys.ts), read when used (the scripts of a panel load in any order).
export function keys(): Window['EmsPartnerConfigKeys'] {
  return window.EmsPartnerConfigKeys;
}

export function t(key: string, opts?: object): string {
  const def = RED.nodes.getType(T);
  return def && def._ ? def._(T + '.' + key, opts) : key;
}
export function isSecret(v: unknown): v is string {
  return typeof v === 'string' && v !== '' && v !== '__PWRD__';
}

/** The settings of a config node as the admin routes take them. */
export type ConfigSettings = Record<string, unknown>;

// What the editor knows of a config node, deployed or not. Secrets only when typed in this session:
// stored ones never reach the browser, the runtime then uses the deployed node's credentials.
export function configOf(serverId: string): ConfigSettings | undefined {
  const n = RED.nodes.node(serverId);
  if (!n) {
    return undefined;
  }
  const c: ConfigSettings = {};
  keys().CONNECTION_KEYS.forEach(function (k) {
    c[k] = n[k];
  });
  if (c.timeout !== undefined) {
    c.timeout = Number(c.timeout);
  } // the editor saves form values as strings
  const cr = n.credentials || {};
  keys().SECRET_KEYS.forEach(function (k) {
    if (isSecret(cr[k])) {
      c[k] = cr[k];
    }
  });
  return c;
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
  const n = RED.nodes.node(serverId);
  return !!n && !n.changed;
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
  const d = $.Deferred<unknown, JQueryAjaxFailure>(); // (not .then: it would pass on only the first argument of a failure)
  post(what, serverId)
    .done(d.resolve)
    .fail(function (xhr, status, err) {
      if (xhr && xhr.responseJSON && xhr.responseJSON.error === 'unknown config node') {
        post(what, serverId, config()).done(d.resolve).fail(d.reject);
      } else {
        d.reject(xhr, status, err);
      }
    });
  return d.promise();
}
// One line of text for a failed request: the runtime's message, or the HTTP status (never an HTML page).
export function errorText(xhr: JQueryXHR | undefined, status?: string, err?: string): string {
  const j = xhr && xhr.responseJSON;
  let m: unknown = j && (j.message || j.error);
  if (xhr && xhr.status === 0 && status !== 'timeout') {
    m = t('picker.unreachable');
  }
  if (!m && xhr && xhr.status >= 400) {
    m = 'HTTP ' + xhr.status + (xhr.statusText && xhr.statusText !== 'error' ? ' (' + xhr.statusText + ')' : '');
  }
  // (<site>: the paths' placeholder, text)
  const s = String(m || err || status || 'error')
    .replace(/<(?!site>)[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return s.length > 200 ? s.slice(0, 199) + '\u2026' : s;
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
  const d = $.Deferred<unknown[], [string]>();
  const entry: CacheEntry = (cache[key] = { at: Date.now(), pending: true, promise: d.promise() });
  ask(what, serverId, function () {
    return config;
  })
    .done(function (list) {
      entry.pending = false;
      entry.at = Date.now();
      d.resolve(Array.isArray(list) ? list : []);
    })
    .fail(function (xhr, status, err) {
      if (cache[key] === entry) {
        delete cache[key];
      }
      d.reject(errorText(xhr, status, err));
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
