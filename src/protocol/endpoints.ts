/**
 * The steering endpoints of the partner API in one table (spec 4.6-4.8, assumption A2, vendor
 * notes): per endpoint its method, its path, the components its body carries, how that body
 * is built and how it is validated. Each request is built here exactly once, as a typed
 * SteeringRequest the client sends as it is; the steering queue picks endpoints from the table
 * and the simulator routes and validates by it (docs/architecture.md, "One steering message").
 */
import {
  validateActiveSteering,
  validateCurtailmentRequest,
  validateEssRequest,
  validateGridLimitsRequest,
  validateGridTargetRequest,
} from './validate';
import { DEFAULT_PATHS, fillSite, type ApiPaths, type PathKey } from './paths';
import type {
  ActiveSteeringRequest,
  CurtailmentSteeringRequest,
  CurtailmentValue,
  EssSteeringRequest,
  GridLimitsRequest,
  GridTargetCancelResponse,
  GridTargetRequest,
  PowerValue,
  SteeringResponse,
} from './types';

/** The components of a site's steering (spec section 3, vendor notes), in the order bodies carry them. */
const STEERING_COMPONENTS = [
  'energyStorageSetting',
  'productionCurtailment',
  'maximizeGridImport',
  'gridTarget',
  'gridLimits',
] as const;
export type SteeringComponent = (typeof STEERING_COMPONENTS)[number];

/** The value of each component; a gridTarget of null cancels the grid target. */
interface SteeringComponentValues {
  energyStorageSetting?: PowerValue;
  productionCurtailment?: CurtailmentValue;
  maximizeGridImport?: boolean;
  gridTarget?: Pick<GridTargetRequest, 'setpoint' | 'deadband'> | null;
  gridLimits?: Pick<GridLimitsRequest, 'upperLimit' | 'lowerLimit'>;
}

/**
 * The steering types of the service (vendor notes): "only the last received steering request
 * of each type is processed", and asset steering and grid target cannot be used together, so
 * a request of one ends the other in force on the site (assumption). Grid limits are a type of
 * their own that coexists with both (assumption: the documentation does not say otherwise).
 */
export type SteeringType = 'asset' | 'grid-target' | 'grid-limits';

/** The types a request of each type ends on the site (vendor notes; assumption for the direction). */
export const DISPLACES: Readonly<Record<SteeringType, readonly SteeringType[]>> = Object.freeze({
  asset: ['grid-target'],
  'grid-target': ['asset'],
  'grid-limits': [],
});

/** The validity window of a signal, epoch ms. */
export interface SteeringValidity {
  validFrom?: number;
  validUntil?: number;
}

/** The body each endpoint takes (none for the cancel). */
export interface SteeringBodies {
  combined: ActiveSteeringRequest;
  ess: EssSteeringRequest;
  curtailment: CurtailmentSteeringRequest;
  'grid-target': GridTargetRequest;
  'cancel-grid-target': undefined;
  'grid-limits': GridLimitsRequest;
}

/** What each endpoint answers (assumption A5: the accepted body plus a requestId). */
export interface SteeringAnswers {
  combined: SteeringResponse<ActiveSteeringRequest>;
  ess: SteeringResponse<EssSteeringRequest>;
  curtailment: SteeringResponse<CurtailmentSteeringRequest>;
  'grid-target': SteeringResponse<GridTargetRequest>;
  'cancel-grid-target': GridTargetCancelResponse;
  'grid-limits': SteeringResponse<GridLimitsRequest>;
}

export type SteeringEndpoint = keyof SteeringBodies;

export interface SteeringEndpointSpec<E extends SteeringEndpoint = SteeringEndpoint> {
  method: 'POST' | 'DELETE';
  /** Path template; `<site>` stands for the URL-encoded site reference. */
  path: string;
  /** The configurable path (paths.ts) that replaces `path` when a config node sets it. */
  pathKey?: PathKey;
  /** The steering type (exclusivity, see DISPLACES). */
  type: SteeringType;
  /** The components the body carries (a DELETE: the component it clears). */
  components: readonly SteeringComponent[];
  /** Validates a body (with `now`, a validUntil not in the future is refused too); none for a DELETE. */
  validate?: (body: unknown, now?: number) => SteeringBodies[E];
  /** Builds the body from validated components and their validity; none for a DELETE. */
  body?: (c: SteeringComponentValues, v: SteeringValidity) => SteeringBodies[E];
}

/** validFrom (when set) and validUntil, in that order, as the validators return them. */
function validity(v: SteeringValidity): { validFrom?: number; validUntil: number } {
  return v.validFrom !== undefined
    ? { validFrom: v.validFrom, validUntil: v.validUntil! }
    : { validUntil: v.validUntil! };
}

/** The keys of `o` that are set, in the order of `keys` (the order bodies carry them). */
function setOf<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const k of keys) if (o[k] !== undefined) picked[k] = o[k];
  return picked;
}

/** The steering endpoints. The first POST endpoint that carries a set of components is where they are merged. */
export const STEERING_ENDPOINTS: { readonly [E in SteeringEndpoint]: SteeringEndpointSpec<E> } = {
  combined: {
    method: 'POST',
    path: '/sites/<site>/steering',
    type: 'asset',
    components: ['energyStorageSetting', 'productionCurtailment', 'maximizeGridImport'],
    validate: validateActiveSteering,
    body: (c, v) =>
      ({
        ...setOf(c, ['energyStorageSetting', 'productionCurtailment', 'maximizeGridImport']),
        ...validity(v),
      }) as ActiveSteeringRequest,
  },
  ess: {
    method: 'POST',
    path: '/sites/<site>/steering/ess',
    type: 'asset',
    components: ['energyStorageSetting'],
    validate: validateEssRequest,
    body: (c, v) => ({ setting: c.energyStorageSetting!, ...validity(v) }),
  },
  curtailment: {
    method: 'POST',
    path: DEFAULT_PATHS.curtailment,
    pathKey: 'curtailment',
    type: 'asset',
    components: ['productionCurtailment'],
    validate: validateCurtailmentRequest,
    body: (c, v) => ({ setting: c.productionCurtailment!, ...validity(v) }),
  },
  'grid-target': {
    method: 'POST',
    path: '/sites/<site>/steering/grid-target',
    type: 'grid-target',
    components: ['gridTarget'],
    validate: validateGridTargetRequest,
    body: (c, v) => ({ ...setOf(c.gridTarget!, ['setpoint', 'deadband']), ...validity(v) }) as GridTargetRequest,
  },
  'cancel-grid-target': {
    method: 'DELETE',
    path: '/sites/<site>/steering/grid-target',
    type: 'grid-target',
    components: ['gridTarget'],
  },
  'grid-limits': {
    method: 'POST',
    path: DEFAULT_PATHS.gridLimits,
    pathKey: 'gridLimits',
    type: 'grid-limits',
    components: ['gridLimits'],
    validate: validateGridLimitsRequest,
    body: (c, v) => ({ ...setOf(c.gridLimits!, ['upperLimit', 'lowerLimit']), ...validity(v) }) as GridLimitsRequest,
  },
};

export const STEERING_ENDPOINT_NAMES = Object.keys(STEERING_ENDPOINTS) as SteeringEndpoint[];

/**
 * A steering request as it goes over the wire: the endpoint, its method, the path with the
 * site URL-encoded, and the body (none for a DELETE). Built by steeringRequest() or
 * steeringRequestFor() only; the client sends it as it is.
 */
export interface SteeringRequest<E extends SteeringEndpoint = SteeringEndpoint> {
  site: string;
  endpoint: E;
  method: 'POST' | 'DELETE';
  path: string;
  body?: SteeringBodies[E];
  /**
   * The body's validUntil, epoch ms (none for a DELETE): set by the builders from the body they
   * build, so the client (the check that it lies in the future, the retry bound, the request
   * budget) and the steering queue (the types in force) read it here, not out of the body.
   */
  validUntil?: number;
}

/** The request of `endpoint` for `site` with `body` (when the endpoint takes one), and the body's validUntil. */
function requestOf<E extends SteeringEndpoint>(
  endpoint: E,
  site: string,
  body: SteeringBodies[E] | undefined,
  paths?: Partial<ApiPaths>,
): SteeringRequest<E> {
  const spec: SteeringEndpointSpec = STEERING_ENDPOINTS[endpoint];
  const req: SteeringRequest<E> = { site, endpoint, method: spec.method, path: steeringPath(endpoint, site, paths) };
  if (spec.body && body !== undefined) {
    req.body = body;
    req.validUntil = (body as Exclude<SteeringBodies[SteeringEndpoint], undefined>).validUntil;
  }
  return req;
}

/** What a node echoes in msg.request: the method, path and body that were sent. */
export interface SentRequest {
  method: 'POST' | 'DELETE';
  path: string;
  body?: unknown;
}

/**
 * A validated steering command (the site-steer node's buildCommand, or code): the components
 * it sets, their validity, and `kind`, the endpoint the command is meant for (a lone component
 * keeps that endpoint; merged components go to the endpoint that carries them together).
 */
export interface SteeringCommand extends SteeringValidity {
  site: string;
  kind: SteeringEndpoint;
  energyStorageSetting?: PowerValue;
  productionCurtailment?: CurtailmentValue;
  maximizeGridImport?: boolean;
  gridTarget?: Pick<GridTargetRequest, 'setpoint' | 'deadband'>;
  gridLimits?: Pick<GridLimitsRequest, 'upperLimit' | 'lowerLimit'>;
}

/** One component of a request to build, and the endpoint of the command it came from. */
export interface SteeringPart {
  name: SteeringComponent;
  value: unknown;
  from: SteeringEndpoint;
}

/** The path template of an endpoint: the configured one (paths.ts) where it has one, else the table's. */
export function steeringTemplate(endpoint: SteeringEndpoint, paths?: Partial<ApiPaths>): string {
  const spec: SteeringEndpointSpec = STEERING_ENDPOINTS[endpoint];
  return (spec.pathKey && paths?.[spec.pathKey]) || spec.path;
}

/** The path of an endpoint for a site (the site URL-encoded), with the configured paths. */
export function steeringPath(endpoint: SteeringEndpoint, site: string, paths?: Partial<ApiPaths>): string {
  return fillSite(steeringTemplate(endpoint, paths), site);
}

/** The typed request of an endpoint with a body that is already validated (the client's public methods). */
export function steeringRequest<E extends SteeringEndpoint>(
  endpoint: E,
  site: string,
  body?: SteeringBodies[E],
  paths?: Partial<ApiPaths>,
): SteeringRequest<E> {
  return requestOf(endpoint, site, body, paths);
}

const covers = (e: SteeringEndpoint, names: readonly SteeringComponent[]) =>
  names.every((n) => STEERING_ENDPOINTS[e].components.includes(n));

/**
 * The endpoint that carries `names`: the commands' own endpoint when they all came from the
 * same one and it carries them all, else the first POST endpoint of the table that does.
 */
export function endpointFor(names: readonly SteeringComponent[], from: readonly SteeringEndpoint[]): SteeringEndpoint {
  const own = from[0];
  if (own !== undefined && from.every((f) => f === own) && covers(own, names)) return own;
  const carrier = STEERING_ENDPOINT_NAMES.find((n) => STEERING_ENDPOINTS[n].body && covers(n, names));
  if (!carrier) throw new TypeError(`no steering endpoint carries ${names.join(' and ')} together`);
  return carrier;
}

/**
 * The key of the group a component is merged in: components with the same key (the same
 * validity and the same carrying endpoint) go out in one request.
 */
export function mergeKey(name: SteeringComponent, v: SteeringValidity): string {
  return `${endpointFor([name], [])}|${v.validFrom ?? ''}|${v.validUntil ?? ''}`;
}

/**
 * The one place a steering request is built: the components of one validity window (each
 * with the endpoint of its command) become a typed request on the endpoint that carries them.
 */
export function steeringRequestFor(
  site: string,
  parts: readonly SteeringPart[],
  v: SteeringValidity,
  paths?: Partial<ApiPaths>,
): SteeringRequest {
  const one = parts.length === 1 ? parts[0] : undefined;
  // One component its command's own endpoint carries (most requests): endpointFor's answer, without its arrays.
  const endpoint =
    one && STEERING_ENDPOINTS[one.from].components.includes(one.name)
      ? one.from
      : endpointFor(
          parts.map((p) => p.name),
          parts.map((p) => p.from),
        );
  const build = STEERING_ENDPOINTS[endpoint].body as SteeringEndpointSpec['body'];
  const values: Record<string, unknown> = {};
  for (const p of parts) values[p.name] = p.value;
  return requestOf(endpoint, site, build?.(values as SteeringComponentValues, v), paths);
}

/** The parts of a command: each component it sets (a cancel clears the grid target). */
export function partsOf(cmd: SteeringCommand): SteeringPart[] {
  const parts: SteeringPart[] = [];
  for (const name of STEERING_COMPONENTS) {
    const value = name === 'gridTarget' && cmd.kind === 'cancel-grid-target' ? null : cmd[name];
    if (value !== undefined) parts.push({ name, value, from: cmd.kind });
  }
  return parts;
}

/** The request a lone command is sent as (dry runs): empty commands have none (undefined). */
export function steeringRequestOf(cmd: SteeringCommand, paths?: Partial<ApiPaths>): SteeringRequest | undefined {
  const parts = partsOf(cmd);
  return parts.length === 0 ? undefined : steeringRequestFor(cmd.site, parts, cmd, paths);
}

/** The steering type of an endpoint (exclusivity). */
export function steeringTypeOf(endpoint: SteeringEndpoint): SteeringType {
  return STEERING_ENDPOINTS[endpoint].type;
}

/** The request as a node echoes it in msg.request: method, path and (when there is one) the body, as sent. */
export function sentForm(req: SteeringRequest): SentRequest {
  return req.body === undefined
    ? { method: req.method, path: req.path }
    : { method: req.method, path: req.path, body: req.body };
}
