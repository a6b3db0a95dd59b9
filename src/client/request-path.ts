/**
 * The method and path of a raw request (the `ems-request` node, EmsClient.raw): what may be
 * sent with a config node's credentials. A path is relative to the base URL and can never
 * leave it: absolute URLs (any scheme), scheme-relative `//host`, backslashes (raw or
 * encoded), `.` and `..` segments (raw or encoded), empty segments, spaces and control
 * characters, fragments and characters a URL path does not hold are refused before anything
 * is sent, and the URL the request would reach is checked to lie below the base URL.
 *
 * A query is allowed (e.g. `/devices/dvc_1/measurement?property=soc`); it cannot change the
 * host or the path. This file imports only the protocol's error and `show`: the build serves
 * the same rules to the editor (resources/request-path.js, window.EmsPartnerRequestPath).
 */
import { ValidationError } from '../protocol/errors';
import { show } from '../protocol/units';

export const REQUEST_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type RequestMethod = (typeof REQUEST_METHODS)[number];

/** Longest path (with its query) accepted. */
export const MAX_REQUEST_PATH = 2048;

/** The accepted form, as every refusal names it. */
export const REQUEST_PATH_FORM = 'a path relative to the base URL starting with one "/", e.g. "/devices/dvc_1/measurement?property=soc"';

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
// eslint-disable-next-line no-control-regex
const SPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/;
/** Characters of a path (RFC 3986 pchar and "/", with "%" escapes checked apart). */
const PATH_CHAR = /[A-Za-z0-9\-._~!$&'()*+,;=:@/%]/;
/** Characters of a query: those of a path and "?". */
const QUERY_CHAR = /[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]/;

function firstOutside(text: string, allowed: RegExp): string | undefined {
  for (const c of text) if (!allowed.test(c)) return c;
  return undefined;
}

/**
 * Why a request path is refused, in a few words (e.g. `an absolute URL (scheme "http:")`), or
 * undefined when its form is accepted. The base URL is not needed: requestUrl() adds the check
 * that the joined URL stays below it.
 */
export function requestPathProblem(input: unknown): string | undefined {
  if (input === undefined || input === null) return 'not set';
  if (typeof input !== 'string') return 'not a string';
  if (input === '') return 'empty';
  if (input.length > MAX_REQUEST_PATH) return `longer than ${MAX_REQUEST_PATH} characters`;
  if (SPACE_OR_CONTROL.test(input)) return 'a space or control character';
  const scheme = SCHEME.exec(input);
  if (scheme) return `an absolute URL (scheme "${scheme[1].toLowerCase()}:")`;
  if (input.includes('\\')) return 'a backslash';
  if (input.startsWith('//')) return 'a scheme-relative URL ("//host")';
  if (!input.startsWith('/')) return 'not starting with "/"';
  if (input.includes('#')) return 'a fragment ("#")';
  if (/%(?![0-9A-Fa-f]{2})/.test(input)) return 'a "%" not followed by two hex digits';
  const q = input.indexOf('?');
  const path = q < 0 ? input : input.slice(0, q);
  const query = q < 0 ? '' : input.slice(q + 1);
  if (/%(2e|2f|5c)/i.test(path)) return 'an encoded dot, slash or backslash (%2e, %2f, %5c) in the path';
  if (/%(0[0-9a-f]|1[0-9a-f]|7f)/i.test(path)) return 'an encoded control character in the path';
  if (path.includes('//')) return 'an empty segment ("//")';
  // "..;x" is ".." to some servers (path parameters).
  if (path.split('/').some((s) => s.split(';')[0] === '.' || s.split(';')[0] === '..')) return 'a "." or ".." segment';
  const bad = firstOutside(path, PATH_CHAR) ?? firstOutside(query, QUERY_CHAR);
  if (bad !== undefined) return `the character ${JSON.stringify(bad)} (encode it, e.g. with encodeURIComponent)`;
  return undefined;
}

/** The path as given, or a ValidationError on `field` naming the accepted form and the reason. */
export function checkRequestPath(input: unknown, field: string): string {
  const why = requestPathProblem(input);
  if (why !== undefined) throw new ValidationError(field, `must be ${REQUEST_PATH_FORM}; got ${show(input)}: ${why}`);
  return input as string;
}

/**
 * The URL a request path reaches below a base URL, joined as the client's HTTP library joins
 * them (the base URL without trailing slashes, "/", the path without leading ones). Refused
 * (ValidationError on `field`) when the path's form is refused, or when the URL, as a URL
 * parser reads it, has another origin or credentials than the base URL, or a path that is not
 * the base URL's path or below it.
 */
export function requestUrl(baseUrl: string, input: unknown, field: string): string {
  const path = checkRequestPath(input, field);
  const joined = `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  const leaves = () => new ValidationError(field, `must be ${REQUEST_PATH_FORM}; got ${show(input)}: it would leave the base URL`);
  let base: URL;
  let url: URL;
  try {
    base = new URL(baseUrl);
    url = new URL(joined);
  } catch {
    throw leaves();
  }
  const basePath = base.pathname.replace(/\/+$/, '');
  const below = url.pathname === basePath || url.pathname.startsWith(`${basePath}/`);
  if (url.origin !== base.origin || url.username !== base.username || url.password !== base.password || !below) throw leaves();
  return joined;
}

/** A method of REQUEST_METHODS (any case in; upper case out), or a ValidationError on `field`. */
export function checkRequestMethod(input: unknown, field: string): RequestMethod {
  const m = typeof input === 'string' ? input.trim().toUpperCase() : '';
  if ((REQUEST_METHODS as readonly string[]).includes(m)) return m as RequestMethod;
  throw new ValidationError(field, `must be one of ${REQUEST_METHODS.join(', ')} (any case); got ${show(input)}`);
}
