/**
 * The method and path of a raw request (the `ems-request` node, EmsClient.raw): what may be
 * sent with a config node's credentials. A path is relative to the base URL and can never
 * leave it; what breaks that rule is refused before anything is sent. Also the API key's
 * header name and the text of a key, token or URL. This file imports only the protocol's error
 * and `show`: the build serves the same rules to the editor (resources/request-path.js,
 * window.EmsPartnerRequestPath).
 */
import { ValidationError } from '../protocol/errors';
import { show } from '../protocol/units';

const REQUEST_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type RequestMethod = (typeof REQUEST_METHODS)[number];

/** Longest path (with its query) accepted. */
const MAX_REQUEST_PATH = 2048;

/** The accepted form, as every refusal names it. */
const REQUEST_PATH_FORM =
  'a path relative to the base URL starting with one "/", e.g. "/devices/dvc_1/measurement?property=soc"';

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
 * undefined when its form is accepted: absolute URLs (any scheme), scheme-relative `//host`,
 * backslashes (raw or encoded), `.` and `..` segments (raw or encoded), empty segments, spaces
 * and control characters, fragments and characters a URL path does not hold are refused. A
 * query is allowed (e.g. `/devices/dvc_1/measurement?property=soc`): it cannot change the host
 * or the path. The base URL is not needed: requestUrl() adds the check that the joined URL stays below it.
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
  const queryAt = input.indexOf('?');
  const path = queryAt < 0 ? input : input.slice(0, queryAt);
  const query = queryAt < 0 ? '' : input.slice(queryAt + 1);
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
  const leaves = () =>
    new ValidationError(field, `must be ${REQUEST_PATH_FORM}; got ${show(input)}: it would leave the base URL`);
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
  if (url.origin !== base.origin || url.username !== base.username || url.password !== base.password || !below)
    throw leaves();
  return joined;
}

/** A method of REQUEST_METHODS (any case in; upper case out), or a ValidationError on `field`. */
export function checkRequestMethod(input: unknown, field: string): RequestMethod {
  const verb = typeof input === 'string' ? input.trim().toUpperCase() : '';
  if ((REQUEST_METHODS as readonly string[]).includes(verb)) return verb as RequestMethod;
  throw new ValidationError(field, `must be one of ${REQUEST_METHODS.join(', ')} (any case); got ${show(input)}`);
}

/** A header name as RFC 9110 defines it: one token (tchar). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The longest header name accepted. */
const MAX_HEADER_NAME = 256;
/**
 * Headers the transport sets or that shape the connection and the message: the API key's header
 * can be none of them (a key sent as Host, or a Content-Length, would change where or what is sent).
 * "proxy-" covers every Proxy-* header.
 */
const OWNED_HEADERS = [
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'accept',
  'accept-encoding',
  'user-agent',
  'cookie',
  'http2-settings',
  'proxy-',
] as const;

/** The accepted form of the API key's header name, as every refusal names it. */
const HEADER_NAME_FORM = 'an HTTP header name (RFC 9110 token)';

/** The entry of OWNED_HEADERS a header name falls under ("proxy-*" for a Proxy- header), or undefined. */
function ownedHeader(name: string): string | undefined {
  const lower = name.toLowerCase();
  const owned = OWNED_HEADERS.find((h) => (h.endsWith('-') ? lower.startsWith(h) : lower === h));
  return owned && (owned.endsWith('-') ? `${owned}*` : owned);
}

/** Why a header name for the API key is refused (not an HTTP token, or a header the transport owns), or undefined. */
function headerNameProblem(input: unknown): string | undefined {
  if (typeof input !== 'string') return 'it is not a string';
  if (input.length > MAX_HEADER_NAME) return `it is longer than ${MAX_HEADER_NAME} characters`;
  if (/[\r\n]/.test(input)) return 'it has a line break';
  if (!TOKEN.test(input)) {
    const bad = [...input].find((c) => !TOKEN.test(c));
    return bad === undefined ? 'it is empty' : `it has the character ${JSON.stringify(bad)}`;
  }
  const owned = ownedHeader(input);
  return owned && `it names a header the transport sets (${owned})`;
}

/**
 * The header name as given ('' or undefined: "x-api-key"), or a ValidationError on `field`
 * naming it first (Test connection's reply keeps 120 characters) and why.
 */
export function checkHeaderName(input: unknown, field: string): string {
  if (input === undefined || input === null || input === '') return 'x-api-key';
  const why = headerNameProblem(input);
  if (why === undefined) return input as string;
  const owned = typeof input === 'string' && TOKEN.test(input) ? ownedHeader(input) : undefined;
  if (owned)
    throw new ValidationError(
      field,
      `${show(input)} names a header the transport sets (${owned}); the key goes in another, e.g. "x-api-key"`,
    );
  throw new ValidationError(field, `${show(input)} is not ${HEADER_NAME_FORM}: ${why}`);
}

/**
 * Refuses (ValidationError on `field`) a key, token or URL holding a line break or another
 * control character: HTTP libraries and URL parsers drop or split on them, so the value sent
 * would not be the one set. The value itself is never named (it may be a secret).
 */
export function checkNoControl(input: unknown, field: string): void {
  if (typeof input !== 'string') return;
  // eslint-disable-next-line no-control-regex
  const at = input.search(/[\u0000-\u001f\u007f]/);
  if (at < 0) return;
  const what = input[at] === '\n' || input[at] === '\r' ? 'a line break' : 'a control character';
  throw new ValidationError(
    field,
    `holds ${what} (character ${at + 1} of ${input.length}); it is refused, not removed: set the value again without it`,
  );
}
