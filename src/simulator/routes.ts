/**
 * The API routes of the simulator and their handlers: each takes the parsed request and
 * returns the response body (status 200) or throws an HttpError / ValidationError. The reads
 * are in TABLE (GET /sites, /sites/:ref/steering and /sites/:ref/state are the simulator's own,
 * behind the API key like the rest); the steering routes come from the protocol's endpoint table
 * (STEERING_ENDPOINTS) and steering-store.ts. Configurable paths (protocol/paths.ts) are served
 * there and then not on their defaults.
 */
import * as protocol from '../protocol';
import {
  STEERING_ENDPOINTS,
  STEERING_ENDPOINT_NAMES,
  steeringTemplate,
  DEFAULT_PATHS,
  SITE_PLACEHOLDER,
} from '../protocol';
import type { SteeringEndpoint, ApiPaths } from '../protocol';
import { HttpError } from './http-util';
import type { RouteContext } from './route-types';

// The validators of the read routes, read once: a name imported from the protocol's index is
// read through a re-export getter at every use in the compiled CommonJS.
const validateProperty = protocol.validateProperty;
const validateProperties = protocol.validateProperties;
const validateTimeSeriesRequest = protocol.validateTimeSeriesRequest;

/** A handler returns either a value to serialise or `{ json }` with a pre-serialised body. */
type RouteHandler = (ctx: RouteContext) => unknown;

export interface Route {
  /** Path pattern, e.g. "/devices/:ref/measurement". */
  pattern: string;
  segments: string[];
  methods: Record<string, RouteHandler>;
  /** The request log's route per served method, e.g. "GET /devices/:ref/measurement". */
  labels: Record<string, string>;
}

export class PreSerialised {
  constructor(readonly json: string) {}
}

/**
 * The first value of a query parameter, as URLSearchParams(query).get(name) gives it. A query
 * without escapes (no "%", no "+") is read directly, without building the parameter list.
 */
function queryParam(query: string, name: string): string | null {
  if (query === '') return null;
  if (query.includes('%') || query.includes('+')) return new URLSearchParams(query).get(name);
  const queryLength = query.length;
  let pos = query.charCodeAt(0) === 63 ? 1 : 0; // a leading "?" is not part of the first name
  while (pos < queryLength) {
    let amp = query.indexOf('&', pos);
    if (amp === -1) amp = queryLength;
    if (query.startsWith(name, pos)) {
      const after = pos + name.length;
      if (after === amp) return '';
      if (after < amp && query.charCodeAt(after) === 61) return query.slice(after + 1, amp); // "="
    }
    pos = amp + 1;
  }
  return null;
}

function requiredQuery(query: string, name: string, example: string): string {
  const value = queryParam(query, name);
  if (value === null || value.trim() === '')
    throw new HttpError(400, `query parameter ${name} is required, e.g. ?${name}=${example}`);
  return value;
}

/** The query string the single-measurement route last read, and its property: a poller sends the same one again. */
let lastQuery = '';
let lastProperty = '';

/** The validated `property` of a single-measurement query (400 if missing or invalid). */
function propertyOf(query: string): string {
  if (query === lastQuery && query !== '') return lastProperty;
  const property = validateProperty(requiredQuery(query, 'property', 'soc'), 'property');
  lastQuery = query;
  lastProperty = property;
  return property;
}

/** The handler of a steering endpoint: 404 for an unknown site, then the table's validator, then the simulator's handler. */
function steer(endpoint: SteeringEndpoint): RouteHandler {
  const validate = STEERING_ENDPOINTS[endpoint].validate as ((body: unknown, now: number) => never) | undefined;
  return ({ sim, params, body, requestId }) => {
    const site = sim.site(params[0]); // 404 before validation
    const accepted = validate?.(body, site.t);
    return { ...sim.steer(params[0], endpoint, accepted), requestId };
  };
}

const TABLE: Array<[string, Record<string, RouteHandler>]> = [
  ['/devices', { GET: ({ sim }) => new PreSerialised(sim.devicesJson) }],
  [
    '/devices/:ref/measurement',
    {
      GET: ({ sim, params, query }) => new PreSerialised(sim.measureJson(params[0], propertyOf(query))),
    },
  ],
  [
    '/devices/:ref/measurements',
    {
      GET: ({ sim, params, query }) => {
        const props = validateProperties(requiredQuery(query, 'properties', 'soc,totalEnergyConsumed'), 'properties');
        const result = sim.measureMany(params[0], props);
        return { reference: result.reference, measurements: result.items };
      },
    },
  ],
  [
    '/devices/:ref/measurements/map',
    {
      GET: ({ sim, params, query }) => {
        const props = validateProperties(requiredQuery(query, 'properties', 'soc,totalEnergyConsumed'), 'properties');
        const result = sim.measureMany(params[0], props);
        const measurements: Record<string, { value: number; unit: string }> = {};
        for (const m of result.items) measurements[m.property] = { value: m.value, unit: m.unit };
        return { reference: result.reference, measurements };
      },
    },
  ],
  [
    '/devices/:ref/measurements/time-series',
    {
      POST: ({ sim, params, body }) => {
        sim.device(params[0]); // 404 before validation
        return sim.timeSeries(params[0], validateTimeSeriesRequest(body));
      },
    },
  ],
  ['/sites', { GET: ({ sim }) => new PreSerialised(sim.sitesJson) }],
  ['/sites/:ref/steering', { GET: ({ sim, params }) => sim.steeringState(params[0]) }],
  ['/sites/:ref/state', { GET: ({ sim, params }) => sim.siteState(params[0]) }],
];

/** A segment of a route's pattern: a literal, or the site (`<site>`, alone or between a prefix and a suffix). */
type Segment = string | { pre: string; post: string };

/** The API routes on one set of paths. */
export interface Routes {
  readonly list: readonly Route[];
  /** The route whose pattern matches the (decoded) segments, with the site values; null if none. */
  match(segments: readonly string[]): { route: Route; params: string[] } | null;
}

/**
 * The routes: the read routes above with the list of devices and of sites on their configured
 * paths, plus every steering endpoint of the protocol's table on its path (configured where it
 * has a pathKey) and method. Two handlers for one method and path are refused (TypeError).
 */
export function buildRoutes(paths: Readonly<ApiPaths> = DEFAULT_PATHS): Routes {
  const byPattern = new Map<string, Record<string, RouteHandler>>();
  const add = (template: string, method: string, handler: RouteHandler, what: string): void => {
    const pattern = template.split(SITE_PLACEHOLDER).join(':ref');
    const methods = byPattern.get(pattern) ?? {};
    if (methods[method]) throw new TypeError(`${what}: ${method} ${template} is already served by another endpoint`);
    methods[method] = handler;
    byPattern.set(pattern, methods);
  };
  const configured: Record<string, string> = { '/devices': paths.devices, '/sites': paths.sites };
  for (const [pattern, methods] of TABLE) {
    for (const [method, handler] of Object.entries(methods))
      add(configured[pattern] ?? pattern.replace(':ref', SITE_PLACEHOLDER), method, handler, pattern);
  }
  for (const endpoint of STEERING_ENDPOINT_NAMES) {
    add(
      steeringTemplate(endpoint, paths),
      STEERING_ENDPOINTS[endpoint].method,
      steer(endpoint),
      `steering endpoint ${endpoint}`,
    );
  }
  const list: Route[] = [...byPattern].map(([pattern, methods]) => ({
    pattern,
    segments: pattern.split('/').filter(Boolean),
    methods,
    labels: Object.fromEntries(Object.keys(methods).map((m) => [m, `${m} ${pattern}`])),
  }));
  const compiled = list.map((route) => ({ route, segs: route.segments.map(compileSegment) }));
  return {
    list,
    match(segments) {
      outer: for (const { route, segs } of compiled) {
        if (segs.length !== segments.length) continue;
        const params: string[] = [];
        for (let i = 0; i < segs.length; i++) {
          const pattern = segs[i];
          const segment = segments[i];
          if (typeof pattern === 'string') {
            if (pattern !== segment) continue outer;
          } else {
            if (
              segment.length <= pattern.pre.length + pattern.post.length ||
              !segment.startsWith(pattern.pre) ||
              !segment.endsWith(pattern.post)
            )
              continue outer;
            params.push(segment.slice(pattern.pre.length, segment.length - pattern.post.length));
          }
        }
        return { route, params };
      }
      return null;
    },
  };
}

function compileSegment(seg: string): Segment {
  const at = seg.indexOf(':ref');
  return at === -1 ? seg : { pre: seg.slice(0, at), post: seg.slice(at + 4) };
}

/** The routes on the default paths. */
const DEFAULT_ROUTES = buildRoutes();

/** The route (default paths, or `routes`) whose pattern matches the segments, with the `:ref` values; null if none. */
export function matchRoute(
  segments: readonly string[],
  routes: Routes = DEFAULT_ROUTES,
): { route: Route; params: string[] } | null {
  return routes.match(segments);
}
