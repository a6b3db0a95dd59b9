/**
 * The simulator's domain: sites and their models, devices, measurements, time series,
 * steering, faults and the request log. No HTTP here; server.ts maps requests onto it.
 */
import {
  HOUR_MS,
  toIsoSeconds,
  DISPLACES,
  STEERING_ENDPOINTS,
  DEFAULT_PATHS,
  PATH_KEYS,
  validatePath,
} from '../protocol';
import type {
  SteeringBodies,
  SteeringEndpoint,
  ApiPaths,
  Measurement,
  MeasurementListItem,
  SiteState,
  SiteSummary,
  SteeringState,
  TimeSeriesRequest,
  TimeSeriesResponse,
} from '../protocol';
import { Clock } from './clock';
import { PROPERTY_FIELDS, roundField } from './model-quantities';
import { FaultInjector, faultsFromShorthand, type FaultConfig } from './faults';
import { HttpError } from './http-util';
import { SiteModel } from './model';
import { requestIds } from './prng';
import { RequestLog, type LogEntry, type SimStats } from './request-log';
import { buildRoutes, type Routes } from './routes';
import type { RoutedSimulator } from './route-types';
import { DEFAULT_SITES, PROPERTY_UNITS, checkSites, contractOf, type DeviceKind, type SiteDefinition } from './sites';
import { STEERING_HANDLERS } from './steering-store';
import { seriesValues } from './timeseries';
import { TokenIssuer, type OAuthOptions } from './oauth';

export interface SimulatorOptions {
  /** When set, every API request needs `x-api-key: KEY` or `Authorization: Bearer KEY`. */
  apiKey?: string;
  /** Seed of weather, load noise, faults and request IDs (default 1). */
  seed?: number;
  /** Shorthand: fixed added latency per request, ms. */
  latencyMs?: number;
  /** Shorthand: overall fault rate f -> rate500 f/2, rate429 f/4, resetRate f/4. */
  faultRate?: number;
  /** Fault config; applied on top of the shorthands. */
  faults?: Partial<FaultConfig>;
  /** Simulated time at start, epoch ms (default: now). */
  startTime?: number;
  /** Simulated time moves only through clock.advance (default false). */
  frozen?: boolean;
  /** Sites to simulate (default DEFAULT_SITES). */
  sites?: SiteDefinition[];
  /** OAuth2 client credentials: enables POST /oauth/token and accepts its tokens as Bearer. */
  oauth?: OAuthOptions;
  /**
   * The paths the specification does not show (protocol/paths.ts: devices, sites, curtailment,
   * gridLimits; `<site>` for the site), where they differ from the defaults. The simulator then
   * serves them there and no longer on the default path.
   */
  paths?: Partial<ApiPaths>;
}

/** The configured paths, checked (protocol validatePath); a bad one is a TypeError naming it. */
function checkPaths(paths: Partial<ApiPaths> | undefined): ApiPaths {
  if (paths !== undefined && (paths === null || typeof paths !== 'object'))
    throw new TypeError('paths must be an object of paths (devices, sites, curtailment, gridLimits)');
  const out = { ...DEFAULT_PATHS };
  for (const key of Object.keys(paths ?? {})) {
    if (!(PATH_KEYS as string[]).includes(key))
      throw new TypeError(`paths.${key} is not a configurable path; known: ${PATH_KEYS.join(', ')}`);
  }
  for (const key of PATH_KEYS) {
    try {
      out[key] = validatePath(key, paths?.[key]);
    } catch (e) {
      throw new TypeError(`paths.${key}: ${(e as Error).message}`, { cause: e });
    }
    if (out[key].includes(':ref'))
      throw new TypeError(
        `paths.${key} must not contain ":ref" (the simulator's own placeholder); got ${JSON.stringify(out[key])}`,
      );
  }
  return out;
}

export interface DeviceEntry {
  deviceReference: string;
  name: string;
  kind: DeviceKind;
  model: SiteModel;
  units: Record<string, string>;
  /** measureJson's last answer per property, and the model snapshot (SiteModel.snapshotCount) it was made from. */
  answers: Map<string, { snapshot: number; json: string }>;
}

export class Simulator implements RoutedSimulator {
  readonly clock: Clock;
  readonly seed: number;
  readonly sites: ReadonlyArray<SiteDefinition>;
  readonly apiKey?: string;
  readonly oauth?: TokenIssuer;
  readonly faults: FaultInjector;
  readonly log = new RequestLog();
  /** The paths served (configured or default). */
  readonly paths: Readonly<ApiPaths>;
  /** The API routes on those paths. */
  readonly routes: Routes;
  private readonly models = new Map<string, SiteModel>();
  private readonly devices = new Map<string, DeviceEntry>();
  private requestCounter = 0;
  private readonly requestIds: (n: number) => string;
  /** Pre-serialised, the lists never change. */
  readonly devicesJson: string;
  readonly sitesJson: string;

  constructor(opts: SimulatorOptions = {}) {
    this.seed = opts.seed ?? 1;
    if (!Number.isInteger(this.seed)) throw new TypeError(`seed must be an integer; got ${opts.seed}`);
    if (opts.apiKey !== undefined && (typeof opts.apiKey !== 'string' || opts.apiKey === ''))
      throw new TypeError('apiKey must be a non-empty string');
    this.apiKey = opts.apiKey;
    this.clock = new Clock({ startTime: opts.startTime, frozen: opts.frozen });
    if (opts.oauth) this.oauth = new TokenIssuer(opts.oauth, this.clock);
    this.sites = Object.freeze(checkSites(opts.sites ?? (DEFAULT_SITES as SiteDefinition[])));
    this.paths = Object.freeze(checkPaths(opts.paths));
    this.routes = buildRoutes(this.paths);
    this.requestIds = requestIds(this.seed);
    this.faults = new FaultInjector(this.seed, {
      ...faultsFromShorthand(opts.faultRate, opts.latencyMs),
      ...opts.faults,
    });
    const start = this.clock.now();
    const devices: object[] = [];
    const summaries: SiteSummary[] = [];
    for (const def of this.sites) {
      const model = new SiteModel(def, this.seed, start);
      this.models.set(def.siteReference, model);
      const contract = contractOf(def);
      const summary: SiteSummary = {
        siteReference: def.siteReference,
        name: def.name,
        devices: [],
        pvPeakPower: def.pv.peakW,
        batteryMaxPower: def.battery.maxPowerW,
        batteryCapacity: def.battery.capacityWh,
        gridLimits: { upper: contract.maxImportW, lower: -contract.maxExportW || 0 },
      };
      for (const kind of ['battery', 'pv', 'meter'] as const) {
        const deviceDef = def[kind];
        const units: Record<string, string> = {};
        for (const p of PROPERTY_UNITS[kind]) units[p.name] = p.unit;
        this.devices.set(deviceDef.deviceReference, {
          deviceReference: deviceDef.deviceReference,
          name: deviceDef.name,
          kind,
          model,
          units,
          answers: new Map(),
        });
        devices.push({
          deviceReference: deviceDef.deviceReference,
          name: deviceDef.name,
          kind,
          siteReference: def.siteReference,
          properties: PROPERTY_UNITS[kind].map((p) => ({ ...p })),
        });
        summary.devices.push({ deviceReference: deviceDef.deviceReference, kind });
      }
      summaries.push(summary);
    }
    this.devicesJson = JSON.stringify({ devices });
    this.sitesJson = JSON.stringify({ sites: summaries });
  }

  /** Requests received so far, /sim/* and unanswered ones included. */
  get requestsReceived(): number {
    return this.requestCounter;
  }

  /** `req_` + 16 hex characters, deterministic for the seed. */
  nextRequestId(): string {
    return this.requestIds(++this.requestCounter);
  }

  // ------------------------------------------------------------------ lookups

  /** The site's model, advanced to now. 404 if unknown. */
  site(ref: string): SiteModel {
    const model = this.models.get(ref);
    if (!model) throw new HttpError(404, `unknown site ${JSON.stringify(ref.slice(0, 64))}`);
    model.advanceTo(this.clock.now());
    return model;
  }

  /** The device, its model advanced to now. 404 if unknown. */
  device(ref: string): DeviceEntry {
    const entry = this.devices.get(ref);
    if (!entry) throw new HttpError(404, `unknown device ${JSON.stringify(ref.slice(0, 64))}`);
    entry.model.advanceTo(this.clock.now());
    return entry;
  }

  private field(d: DeviceEntry, property: string): number {
    const column = PROPERTY_FIELDS[d.kind][property];
    if (column === undefined) {
      throw new HttpError(
        404,
        `device ${d.deviceReference} has no property ${JSON.stringify(property.slice(0, 64))}; available: ${Object.keys(d.units).join(', ')}`,
      );
    }
    return column;
  }

  // ------------------------------------------------------------- measurements

  measure(ref: string, property: string): Measurement {
    const entry = this.device(ref);
    const column = this.field(entry, property);
    return {
      timestamp: entry.model.t,
      property,
      value: roundField(column, entry.model.snapshot()[column]),
      unit: entry.units[property],
      reference: entry.deviceReference,
    };
  }

  /**
   * measure() serialised. The answer is kept per property until the model's snapshot changes
   * (time moved or steering changed), so requests within one millisecond, or on a frozen
   * clock, do not serialise it again.
   */
  measureJson(ref: string, property: string): string {
    const entry = this.device(ref);
    const column = this.field(entry, property);
    const values = entry.model.snapshot();
    const snapshot = entry.model.snapshotCount;
    const kept = entry.answers.get(property);
    if (kept !== undefined && kept.snapshot === snapshot) return kept.json;
    const measurement: Measurement = {
      timestamp: entry.model.t,
      property,
      value: roundField(column, values[column]),
      unit: entry.units[property],
      reference: entry.deviceReference,
    };
    const json = JSON.stringify(measurement);
    if (kept !== undefined) {
      kept.snapshot = snapshot;
      kept.json = json;
    } else {
      entry.answers.set(property, { snapshot, json });
    }
    return json;
  }

  /** Several properties at now; every name must exist (404 otherwise). */
  measureMany(ref: string, properties: string[]): { reference: string; items: MeasurementListItem[] } {
    const entry = this.device(ref);
    const fields = properties.map((p) => this.field(entry, p));
    const values = entry.model.snapshot();
    const items = properties.map((p, i) => ({
      timestamp: entry.model.t,
      property: p,
      value: roundField(fields[i], values[fields[i]]),
      unit: entry.units[p],
    }));
    return { reference: entry.deviceReference, items };
  }

  /** Points at start + k * resolution, start inclusive, end exclusive, none after now. */
  timeSeries(ref: string, req: TimeSeriesRequest): TimeSeriesResponse {
    const entry = this.device(ref);
    const column = this.field(entry, req.property);
    const now = entry.model.t;
    const start = Date.parse(req.range.start);
    const end = Date.parse(req.range.end);
    const step = req.resolution.value * HOUR_MS;
    const points: number[] = [];
    for (let t = start; t < end && t <= now; t += step) points.push(t);
    const data = seriesValues(
      entry.model.history,
      () => entry.model.past(),
      column,
      points,
      now,
      entry.model.snapshot(),
      step,
    );
    return { time: points.map(toIsoSeconds), data };
  }

  // ----------------------------------------------------------------- steering

  /**
   * Applies a validated steering request of an endpoint at now (the model is first advanced
   * to now): a request that sets something (a POST) first ends the steering types its own
   * type displaces (asset steering and grid target end each other), then the endpoint's
   * handler applies it. Returns the answer's fields (without the requestId).
   */
  steer<E extends SteeringEndpoint>(siteRef: string, endpoint: E, body: SteeringBodies[E]): object {
    const model = this.site(siteRef);
    const spec = STEERING_ENDPOINTS[endpoint];
    if (spec.method === 'POST' && DISPLACES[spec.type].length > 0) model.steering.displace(spec.type);
    return STEERING_HANDLERS[endpoint](model.steering, body, model.t, model.def);
  }

  cancelGridTarget(siteRef: string): boolean {
    const model = this.site(siteRef);
    return model.steering.cancelGridTarget(model.t);
  }

  // ------------------------------------------------------- programmatic API

  steeringState(siteRef: string): SteeringState {
    const model = this.site(siteRef);
    return model.steering.state(siteRef, model.t);
  }

  siteState(siteRef: string): SiteState {
    return this.site(siteRef).siteState();
  }

  setFaults(cfg: Partial<FaultConfig>): FaultConfig {
    return this.faults.set(cfg);
  }

  /** The last 10,000 API requests, oldest first. */
  get requestLog(): LogEntry[] {
    return this.log.entries();
  }

  stats(): SimStats {
    return this.log.stats();
  }

  clearLog(): void {
    this.log.clear();
  }

  /** Clears every site's steering and the request log (physical state and faults stay). */
  reset(): void {
    const now = this.clock.now();
    for (const m of this.models.values()) {
      m.advanceTo(now);
      m.steering.reset();
    }
    this.log.clear();
  }
}
