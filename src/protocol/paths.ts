/**
 * The paths the specification does not show (spec 4.1, 4.8; vendor notes: grid limits), with
 * the package's assumptions as defaults. A config node may set each one (its "Endpoints"
 * section); `<site>` stands for the URL-encoded site reference. One table: the config node,
 * the editor, the client and the simulator read it.
 */
import { ValidationError } from './errors';
import { show } from './units';

export interface ApiPaths {
  /** List of devices (assumption A1). */
  devices: string;
  /** List of sites (the simulator's; assumed on the real service). */
  sites: string;
  /** Curtailment-only steering (assumption A2). */
  curtailment: string;
  /** Grid-limits steering (vendor notes; path not published). */
  gridLimits: string;
}

export type PathKey = keyof ApiPaths;

/** Placeholder of the site reference in a path. */
export const SITE_PLACEHOLDER = '<site>';

export const DEFAULT_PATHS: Readonly<ApiPaths> = Object.freeze({
  devices: '/devices',
  sites: '/sites',
  curtailment: '/sites/<site>/steering/curtailment',
  gridLimits: '/sites/<site>/steering/grid-limits',
});

/** The config node's property of each path, and whether the path names a site. */
export const PATH_SETTINGS: Readonly<Record<PathKey, { property: string; site: boolean }>> = Object.freeze({
  devices: { property: 'pathDevices', site: false },
  sites: { property: 'pathSites', site: false },
  curtailment: { property: 'pathCurtailment', site: true },
  gridLimits: { property: 'pathGridLimits', site: true },
});

export const PATH_KEYS = Object.keys(PATH_SETTINGS) as PathKey[];

/** Characters of a configured path: unreserved, sub-delims that are harmless in a path, '/', and the placeholder. */
const PATH_RE = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/;

/**
 * A configured path: '' (or undefined) is the default. Refused: not starting with '/', '//',
 * '.' or '..' segments (also percent-encoded), backslashes, a query or fragment, any other
 * '%' escape, a '<site>' missing where the path names a site or present where it does not.
 */
export function validatePath(key: PathKey, input: unknown): string {
  const { property, site } = PATH_SETTINGS[key];
  if (input === undefined || input === null || input === '') return DEFAULT_PATHS[key];
  const forms = `a path below the base URL starting with "/"${site ? ` with ${SITE_PLACEHOLDER} once` : ''}, e.g. ${DEFAULT_PATHS[key]} (empty: that default)`;
  if (typeof input !== 'string') throw new ValidationError(property, `must be ${forms}; got ${show(input)}`);
  const path = input.trim();
  if (path === '') return DEFAULT_PATHS[key];
  const count = path.split(SITE_PLACEHOLDER).length - 1;
  const bare = path.split(SITE_PLACEHOLDER).join('x');
  const segments = bare.split('/');
  const bad =
    !PATH_RE.test(bare) ||
    bare.includes('//') ||
    segments.some((s) => s === '.' || s === '..') ||
    (site ? count !== 1 : count !== 0) ||
    path.length > 512;
  if (bad) throw new ValidationError(property, `must be ${forms}; got ${show(input)}`);
  return path;
}

/** All paths from a config node's properties (pathDevices, ...): defaults where empty. Throws on the first bad one. */
export function resolvePaths(o: Record<string, unknown> | undefined): ApiPaths {
  const out = { ...DEFAULT_PATHS };
  for (const key of PATH_KEYS) out[key] = validatePath(key, o?.[PATH_SETTINGS[key].property]);
  return out;
}

/**
 * A reference as one path segment (URL-encoded). `.` and `..` stay what they are when encoded and
 * a URL resolves them (`/devices/../measurement` is `/measurement`), so they are refused here too,
 * where every path is built, also for callers of the client that skip validateReference.
 */
export function pathSegment(ref: string, field: string): string {
  if (ref === '.' || ref === '..')
    throw new ValidationError(field, `must not be "${ref}" (a URL resolves it as a path step); nothing was sent`);
  return encodeURIComponent(ref);
}

/** A path template with the site filled in (URL-encoded). */
export function fillSite(template: string, site: string): string {
  return template.replace(SITE_PLACEHOLDER, pathSegment(site, 'site'));
}
