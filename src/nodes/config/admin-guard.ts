/**
 * The checks of the editor's admin routes (admin-routes.ts), kept apart so each can be read
 * on its own:
 *  - only JSON bodies (a cross-site form cannot send one), of a known shape;
 *  - stored credentials only for the deployed node's own destination (`destinationChanges`);
 *  - replies that carry a short, single-line, redacted message, never a service's page.
 */
import http from 'node:http';
import { ValidationError } from '../../protocol';
import { ApiError } from '../../client';
import { usesSimulator, type ConfigCredentials, type ConfigProps } from '../../runtime';
// The settings a request may carry, and its credentials: one list with the editor's (config-keys.ts).
import { CONFIG_KEYS, SECRET_KEYS } from './config-keys';

/** A refusal of the route itself: nothing was sent anywhere. */
export class RouteError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
  ) {
    super(message);
    this.name = 'RouteError';
  }
}

/** The editor's placeholder for a stored password credential. */
const PLACEHOLDER = '__PWRD__';

export interface RouteBody {
  server?: string;
  /** Settings of a config node being edited; secrets only when typed in the editor. */
  config?: { props: ConfigProps; typed: ConfigCredentials };
}

/** True when a body carries unsaved settings (they need write permission). */
export function hasConfig(body: unknown): boolean {
  return !!body && typeof body === 'object' && (body as { config?: unknown }).config != null;
}

/** Refuses anything but an application/json body with 415, before any other check. */
export function jsonOnly(
  req: { headers?: Record<string, unknown> },
  res: { status(n: number): { json(v: unknown): void } },
  next: () => void,
): void {
  const type = String(req.headers?.['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (type !== 'application/json') {
    res
      .status(415)
      .json({ error: 'unsupported media type', message: 'the body must be JSON (content-type: application/json)' });
    return;
  }
  next();
}

/** Checks the shape of a request body: `{server?: string, config?: object}`. */
export function parseBody(raw: unknown): RouteBody {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new RouteError(400, 'bad body', 'the body must be a JSON object {server, config}');
  const body = raw as Record<string, unknown>;
  if (
    body.server !== undefined &&
    body.server !== null &&
    (typeof body.server !== 'string' || body.server.length > 100)
  ) {
    throw new RouteError(400, 'bad server', 'server must be the id of a config node');
  }
  const out: RouteBody = { server: typeof body.server === 'string' && body.server ? body.server : undefined };
  if (body.config == null) return out;
  if (typeof body.config !== 'object' || Array.isArray(body.config))
    throw new RouteError(400, 'bad config', 'config must be an object of config node settings');
  const config = body.config as Record<string, unknown>;
  const props: Record<string, unknown> = {};
  for (const k of CONFIG_KEYS) {
    const value = Object.prototype.hasOwnProperty.call(config, k) ? config[k] : undefined;
    if (value === undefined || value === null) continue;
    if (!['string', 'number', 'boolean'].includes(typeof value))
      throw new RouteError(400, `bad ${k}`, `config.${k} must be a string, number or boolean`);
    props[k] = value;
  }
  const typed: ConfigCredentials = {};
  for (const k of SECRET_KEYS) {
    const value = Object.prototype.hasOwnProperty.call(config, k) ? config[k] : undefined;
    if (value !== undefined && value !== null && typeof value !== 'string')
      throw new RouteError(400, `bad ${k}`, `config.${k} must be a string`);
    if (typeof value === 'string' && value !== '' && value !== PLACEHOLDER) typed[k] = value;
  }
  out.config = { props: props as ConfigProps, typed };
  return out;
}

/** A URL as the client would reach it: scheme, credentials, host and port, path without trailing slashes, query. */
function normalUrl(v: unknown): string {
  const text = String(v ?? '').trim();
  try {
    const url = new URL(text);
    return `${url.protocol}//${url.username}:${url.password}@${url.host}${url.pathname.replace(/\/+$/, '')}${url.search}`;
  } catch {
    return `unparsed:${text}`;
  }
}

const authTypeOf = (p: ConfigProps) => String(p.authType || 'none');
const headerOf = (p: ConfigProps) =>
  String(p.apiKeyHeader || 'x-api-key')
    .trim()
    .toLowerCase();
const verifies = (p: ConfigProps) => !(p.rejectUnauthorized === false || p.rejectUnauthorized === 'false');
const caText = (p: ConfigProps) => String(p.caCert ?? '').trim();

/**
 * The settings that decide where (and how safely) a secret travels, in which a caller's
 * settings differ from the deployed node's: [] when stored secrets may be used.
 */
export function destinationChanges(deployed: ConfigProps, caller: ConfigProps): string[] {
  // The paths (pathDevices, …) are not among them: each is checked (protocol/paths.ts) to be a path
  // that the client joins below the base URL (no scheme, host, "//", "." or "..", "%" or backslash),
  // so with the deployed baseUrl a secret stays on the deployed origin and below its path, whichever
  // paths a caller sends. A caller may thus list devices from another path of the same service with
  // the stored key; deploying those paths needs the same write permission.
  const out: string[] = [];
  if (usesSimulator(deployed) !== usesSimulator(caller)) out.push('simulator');
  if (normalUrl(deployed.baseUrl) !== normalUrl(caller.baseUrl)) out.push('baseUrl');
  if (authTypeOf(deployed) !== authTypeOf(caller)) out.push('authType');
  if (authTypeOf(caller) === 'header' && headerOf(deployed) !== headerOf(caller)) out.push('apiKeyHeader');
  if (authTypeOf(caller) === 'oauth2' && normalUrl(deployed.tokenUrl) !== normalUrl(caller.tokenUrl))
    out.push('tokenUrl');
  if (verifies(deployed) !== verifies(caller)) out.push('rejectUnauthorized');
  if (caText(deployed) !== caText(caller)) out.push('caCert');
  return out;
}

/** The credential a configuration sends, if any. */
export function secretNeeded(p: ConfigProps): keyof ConfigCredentials | undefined {
  if (usesSimulator(p)) return undefined;
  const authType = authTypeOf(p);
  return authType === 'header' || authType === 'bearer' ? 'apiKey' : authType === 'oauth2' ? 'clientSecret' : undefined;
}

/** Whether a caller's caCert may be given to the runtime as is: empty, PEM text, or the deployed node's own value. */
export function sameCaCert(deployed: ConfigProps | undefined, caller: ConfigProps): boolean {
  return !!deployed && caText(deployed) === caText(caller);
}

/** Every form in which a secret could be echoed: raw, URL-encoded (both styles), base64 and base64url. */
export function secretForms(secrets: ReadonlyArray<string | undefined>): string[] {
  const out = new Set<string>();
  for (const s of secrets) {
    if (!s) continue;
    out.add(s);
    out.add(encodeURIComponent(s));
    out.add(new URLSearchParams({ s }).toString().slice(2));
    const b64 = Buffer.from(s, 'utf8').toString('base64');
    out.add(b64);
    out.add(b64.replace(/=+$/, ''));
    out.add(Buffer.from(s, 'utf8').toString('base64url'));
  }
  // Longest first, so a form that contains another is replaced whole.
  return [...out].filter((f) => f.length > 0).sort((a, b) => b.length - a.length);
}

function redactAll(text: string, forms: readonly string[]): string {
  let out = text;
  for (const f of forms) out = out.split(f).join('***');
  return out;
}

/** A copy of a reply with every string redacted (bounded depth: replies are lists of plain objects). */
export function redactDeep(v: unknown, forms: readonly string[], depth = 0): unknown {
  if (forms.length === 0) return v;
  if (typeof v === 'string') return redactAll(v, forms);
  if (!v || typeof v !== 'object' || depth > 20) return v;
  if (Array.isArray(v)) return v.map((x) => redactDeep(x, forms, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[redactAll(k, forms)] = redactDeep(x, forms, depth + 1);
  return out;
}

const MAX = 120;

/** Text without markup, control characters or line breaks (the paths' placeholder `<site>` is text, kept). */
function plain(text: string): string {
  return text
    .replace(/<(?!site>)[^>]*>/g, ' ')
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A short status code-like reason for a reply's `error` field. */
export function replyError(err: unknown): string {
  if (err instanceof RouteError) return err.error;
  if (err instanceof ValidationError) return `bad ${err.field}`;
  if (err instanceof ApiError) return err.status ? `HTTP ${err.status}` : plain(err.code).slice(0, 40);
  return 'error';
}

/**
 * The message of a reply: one line of at most 120 characters, redacted, never markup. A
 * service's answer shows as its status and reason phrase, e.g. `HTTP 404 (Not Found)`,
 * followed by its message only when that is short plain text.
 */
export function replyMessage(err: unknown, forms: readonly string[]): string {
  let text: string;
  if (err instanceof ApiError && err.status) {
    const reason = http.STATUS_CODES[err.status] ?? 'unknown status';
    const head = `${err.request.method} ${err.request.path} failed: HTTP ${err.status} (${reason})`;
    const serviceText = err.serviceMessage ?? '';
    const said = /[<>]/.test(serviceText) ? '' : plain(redactAll(serviceText, forms));
    // A message that only repeats the status (e.g. an HTML page's title "404 Not Found") adds nothing.
    const bare = (t: string) => t.toLowerCase().replace(/[^a-z0-9]+/g, '');
    text =
      said && ![bare(reason), bare(`${err.status} ${reason}`), String(err.status)].includes(bare(said))
        ? `${head}: ${said}`
        : head;
  } else {
    text = err instanceof Error ? err.message : String(err);
  }
  const out = plain(redactAll(text, forms));
  return out.length > MAX ? `${out.slice(0, MAX - 1)}…` : out;
}
