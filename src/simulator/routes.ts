/**
 * The API routes of the simulator and their handlers: each takes the parsed request and
 * returns the response body (status 200) or throws an HttpError / ValidationError.
 *
 * Partner API (spec section 4 and vendor notes):
 *   GET    /devices
 *   GET    /devices/:ref/measurement?property=soc
 *   GET    /devices/:ref/measurements?properties=a,b
 *   GET    /devices/:ref/measurements/map?properties=a,b
 *   POST   /devices/:ref/measurements/time-series
 *   POST   /sites/:ref/steering                 (combined)
 *   POST   /sites/:ref/steering/ess
 *   POST   /sites/:ref/steering/curtailment
 *   POST   /sites/:ref/steering/grid-target
 *   DELETE /sites/:ref/steering/grid-target
 * Simulator-only reads (need the API key like the API):
 *   GET    /sites
 *   GET    /sites/:ref/steering                 (components that apply now)
 *   GET    /sites/:ref/state                    (live power flows)
 *
 * The steering routes come from the protocol's endpoint table (STEERING_ENDPOINTS: method,
 * path, validator) and the handlers in steering-store.ts (STEERING_HANDLERS).
 */
import { validateProperties, validateProperty, validateTimeSeriesRequest } from '../protocol/validate';
import { STEERING_ENDPOINTS, STEERING_ENDPOINT_NAMES, type SteeringEndpoint } from '../protocol/endpoints';
import { HttpError } from './http-util';
import type { Simulator } from './simulator';

export interface RouteContext {
  sim: Simulator;
  /** Values of the `:ref` segments, in order. */
  params: string[];
  query: string;
  body: unknown;
  requestId: string;
}

/** A handler returns either a value to serialise or `{ json }` with a pre-serialised body. */
export type RouteHandler = (ctx: RouteContext) => unknown;

export interface Route {
  /** Path pattern, e.g. "/devices/:ref/measurement". */
  pattern: string;
  segments: string[];
  methods: Record<string, RouteHandler>;
}

export class PreSerialised {
  constructor(readonly json: string) {}
}

function queryParam(query: string, name: string): string | null {
  return query === '' ? null : new URLSearchParams(query).get(name);
}

function requiredQuery(query: string, name: string, example: string): string {
  const v = queryParam(query, name);
  if (v === null || v.trim() === '') throw new HttpError(400, `query parameter ${name} is required, e.g. ?${name}=${example}`);
  return v;
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
      GET: ({ sim, params, query }) => sim.measure(params[0], validateProperty(requiredQuery(query, 'property', 'soc'), 'property')),
    },
  ],
  [
    '/devices/:ref/measurements',
    {
      GET: ({ sim, params, query }) => {
        const props = validateProperties(requiredQuery(query, 'properties', 'soc,totalEnergyConsumed'), 'properties');
        const r = sim.measureMany(params[0], props);
        return { reference: r.reference, measurements: r.items };
      },
    },
  ],
  [
    '/devices/:ref/measurements/map',
    {
      GET: ({ sim, params, query }) => {
        const props = validateProperties(requiredQuery(query, 'properties', 'soc,totalEnergyConsumed'), 'properties');
        const r = sim.measureMany(params[0], props);
        const measurements: Record<string, { value: number; unit: string }> = {};
        for (const m of r.items) measurements[m.property] = { value: m.value, unit: m.unit };
        return { reference: r.reference, measurements };
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

/** The read routes above plus every steering endpoint of the protocol's table, on its path and method. */
function withSteering(table: Array<[string, Record<string, RouteHandler>]>): Array<[string, Record<string, RouteHandler>]> {
  const byPattern = new Map(table.map(([pattern, methods]) => [pattern, { ...methods }]));
  for (const endpoint of STEERING_ENDPOINT_NAMES) {
    const spec = STEERING_ENDPOINTS[endpoint];
    const pattern = spec.path.replace('<site>', ':ref');
    const methods = byPattern.get(pattern) ?? {};
    methods[spec.method] = steer(endpoint);
    byPattern.set(pattern, methods);
  }
  return [...byPattern];
}

export const ROUTES: Route[] = withSteering(TABLE).map(([pattern, methods]) => ({ pattern, segments: pattern.split('/').filter(Boolean), methods }));

/** The route whose pattern matches the segments, with the `:ref` values; null if none. */
export function matchRoute(segments: string[]): { route: Route; params: string[] } | null {
  outer: for (const route of ROUTES) {
    const pat = route.segments;
    if (pat.length !== segments.length) continue;
    const params: string[] = [];
    for (let i = 0; i < pat.length; i++) {
      if (pat[i] === ':ref') params.push(segments[i]);
      else if (pat[i] !== segments[i]) continue outer;
    }
    return { route, params };
  }
  return null;
}
