/**
 * Where a request of the undici adapter goes: axios' buildFullPath (baseURL + url), and the
 * origin, host and path of the full URL, as the URL parser gives them. The package's own
 * requests (the base URL and a plain path) are taken apart without the parser.
 */
const ABSOLUTE = /^([a-z][a-z\d+\-.]*:)?\/\//i;

/** axios' buildFullPath: baseURL joined with a relative url (or any url when absolute ones are not allowed). */
export function fullPathOf(baseURL: string | undefined, url: string, allowAbsolute: boolean | undefined): string {
  if (!baseURL) return url;
  // The common case, a path with one leading slash, cannot be absolute: no pattern to run.
  if (url.charCodeAt(0) === 47 && url.charCodeAt(1) !== 47) return `${trimmed(baseURL)}${url}`;
  if (!ABSOLUTE.test(url) || allowAbsolute === false) {
    if (!url) return baseURL;
    return `${trimmed(baseURL)}/${url.replace(/^\/+/, '')}`;
  }
  return url;
}

let lastBase = '';
let lastTrimmed = '';

/** The base URL without its trailing slashes (the last one kept: a client has one base URL). */
function trimmed(baseURL: string): string {
  if (baseURL === lastBase) return lastTrimmed;
  let end = baseURL.length;
  while (end > 0 && baseURL.charCodeAt(end - 1) === 47) end--;
  lastBase = baseURL;
  lastTrimmed = baseURL.slice(0, end);
  return lastTrimmed;
}

/** Where a request goes, as the URL parser reads its full URL. */
interface Target {
  origin: string;
  host: string;
  protocol: string;
  /** Path and query. */
  path: string;
  username: string;
  password: string;
}

/** A base URL the parser gives back as it is (no credentials, query or fragment), once parsed. */
interface Base {
  /** The base URL without its trailing slashes, and "/". */
  prefix: string;
  origin: string;
  host: string;
  protocol: string;
  path: string;
}

const bases = new Map<string, Base | null>();
/** A path and query of characters the URL parser keeps as they are (a non-empty query). */
const PLAIN = /^[A-Za-z0-9\-._~!$&()*+,;=:@/%]*(\?[A-Za-z0-9\-._~!$&()*+,;=:@/?%]+)?$/;
/** "." and ".." segments, raw or encoded, which the parser resolves. */
const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

function baseOf(baseURL: string): Base | null {
  let parsed: URL;
  try {
    parsed = new URL(baseURL);
  } catch {
    return null;
  }
  const trimmed = baseURL.replace(/\/+$/, '');
  const path = parsed.pathname.replace(/\/+$/, '');
  if (parsed.username || parsed.password || parsed.search || parsed.hash || `${parsed.origin}${path}` !== trimmed)
    return null;
  return { prefix: `${trimmed}/`, origin: parsed.origin, host: parsed.host, protocol: parsed.protocol, path };
}

/** The base URL's parts, parsed once (null: one the parser would change, or none). */
function knownBase(baseURL: string): Base | null {
  let base = bases.get(baseURL);
  if (base === undefined) {
    base = baseOf(baseURL);
    if (bases.size < 64) bases.set(baseURL, base);
  }
  return base;
}

/** The target of a plain path and query below a known base, or undefined when the parser must decide. */
function plainTarget(base: Base, rest: string): Target | undefined {
  const queryAt = rest.indexOf('?');
  if (!PLAIN.test(rest) || DOT_SEGMENT.test(queryAt < 0 ? rest : rest.slice(0, queryAt))) return undefined;
  return {
    origin: base.origin,
    host: base.host,
    protocol: base.protocol,
    path: base.path + rest,
    username: '',
    password: '',
  };
}

/**
 * The target of a request's url below its base URL without joining the two first: the package's
 * own requests (an absolute path, no params). Undefined for any other (then: fullPathOf, targetOf).
 */
export function relativeTargetOf(baseURL: string | undefined, url: string | undefined): Target | undefined {
  if (!baseURL || url === undefined || url.charCodeAt(0) !== 47 || url.charCodeAt(1) === 47) return undefined;
  const base = knownBase(baseURL);
  return base ? plainTarget(base, url) : undefined;
}

/**
 * The target of a full URL. A URL made of the base URL and a plain path (the package's own
 * requests: every reference and property is checked) is taken apart without the URL parser,
 * which would give the same parts at several µs a request; any other goes through the parser.
 */
export function targetOf(full: string, baseURL: string | undefined): Target {
  if (baseURL) {
    const base = knownBase(baseURL);
    if (base && full.startsWith(base.prefix)) {
      const target = plainTarget(base, full.slice(base.prefix.length - 1));
      if (target) return target;
    }
  }
  const url = new URL(full);
  return {
    origin: url.origin,
    host: url.host,
    protocol: url.protocol,
    path: url.pathname + url.search,
    username: url.username,
    password: url.password,
  };
}
