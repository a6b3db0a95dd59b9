/**
 * The typed client of the partner API: one method per operation. Public methods validate every
 * input before sending (ValidationError names the field); failures become ApiError (status, the
 * service's message, method and path, requestId; never a secret). Two trusted paths send typed
 * requests that are validated already, as they are: read() (ReadRequest, for the coalescer) and
 * sendSteering() (SteeringRequest from the protocol's endpoint table, for the steering queue).
 * raw() reaches any endpoint below the base URL (raw.ts); error mapping is in error-map.ts.
 */
import {
  PATH_KEYS,
  PATH_SETTINGS,
  pathSegment,
  resolvePaths,
  LIMITS,
  SERVICE,
  accepts,
  refusal,
  HOUR_MS,
  checkFuture,
  parseIsoTime,
  parseTime,
  splitRange,
  toIsoSeconds,
  validateProperty,
  validateReadRequest,
  validateReference,
  validateTimeSeriesRequest,
  STEERING_ENDPOINTS,
  steeringRequest,
} from '../protocol';
import type {
  ApiPaths,
  SteeringAnswers,
  SteeringEndpoint,
  SteeringRequest,
  ActiveSteeringRequest,
  CurtailmentSteeringRequest,
  Device,
  EssSteeringRequest,
  GridTargetCancelResponse,
  GridLimitsRequest,
  GridTargetRequest,
  Measurement,
  MeasurementList,
  MeasurementMap,
  ReadAnswers,
  ReadRequest,
  ReadShape,
  SiteSummary,
  SteeringResponse,
  TimeInput,
  TimeSeriesRequest,
  TimeSeriesResponse,
} from '../protocol';
import { setMaxListeners } from 'node:events';
import type { AxiosRequestConfig } from 'axios';
import { ApiError, apiError, Redactor, ValidationError } from './errors';
import { hostPortOf, toApiError, type ErrorContext } from './error-map';
import { sendRaw, type RawOptions, type RawResponse } from './raw';
import { checkAuth, secretsOf, type AuthConfig } from './auth';
import { checkNoControl } from './request-path';
import {
  CANCEL,
  DEVICES,
  MEASUREMENT,
  MEASUREMENT_LIST,
  MEASUREMENT_MAP,
  readResponse,
  SITES,
  STEERING,
  TIME_SERIES,
  type ResponseShape,
} from './responses';
import { mapLimit } from './limiter';
import { Transport, type ConnectionState, type EmsRequestMeta } from './transport';
import type { AttemptHook } from './attempts';
import type { HttpAdapterName } from './http-pool';

export interface ClientOptions {
  baseUrl: string;
  auth?: AuthConfig;
  /** Wall-clock time per attempt, ms (default 10000): connecting, waiting and reading the whole body. */
  timeoutMs?: number;
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** Requests in flight at once (default 6). */
  concurrency?: number;
  rejectUnauthorized?: boolean;
  /** Extra CA certificates, PEM. */
  ca?: string;
  /** First backoff step, ms (default 250); doubles per retry up to retryMaxMs (default 8000). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Largest response body accepted, bytes (default 10 MB). */
  maxBodyBytes?: number;
  /** The paths the specification does not show (protocol/paths.ts); unset ones are the defaults. */
  paths?: Partial<ApiPaths>;
  /** Sees every attempt before and after it is sent (the runtime's request budget; attempts.ts). */
  attempts?: AttemptHook;
  /** The transport under axios: 'undici' (default) or axios' own 'http' adapter on Node's http. */
  adapter?: HttpAdapterName;
}

/** Paths keyed as the config node's properties (pathDevices, ...), for resolvePaths. */
function pathSettings(paths: Partial<ApiPaths> | undefined): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const key of PATH_KEYS) o[PATH_SETTINGS[key].property] = paths?.[key];
  return o;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface TimeSeriesQuery {
  property: string;
  start: TimeInput;
  end: TimeInput;
  /** Hours between points (default 1). */
  resolutionHours?: number;
}

/** Called with each change of the connection state. */
export type Listener = (s: ConnectionState) => void;

/** At most this many 30-day requests for one time series (about 5 years). */
export const MAX_SPANS = SERVICE.maxSpans;

/** Default largest response body: 10 MB. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** The content type of a steering body sent as bytes (what axios sets for an object). */
const JSON_BODY = Object.freeze({ 'Content-Type': 'application/json' });

export { hostPortOf };
export type { RawOptions, RawResponse };

export class EmsClient {
  readonly transport: Transport;
  private readonly closer = new AbortController();
  /** The client's signal combined with each caller signal, made once per caller signal. */
  private readonly combined = new WeakMap<AbortSignal, AbortSignal>();
  private readonly listeners = new Set<Listener>();
  /** Masks every form of the client's secrets (and of the OAuth2 access tokens it fetched). */
  readonly redactor: Redactor;
  /** What error messages name: host:port (never a path or query), the time and size limits; and the redactor. */
  private readonly errorContext: ErrorContext;
  private readonly baseUrl: string;
  /** Lower-case name of the configured API-key header (raw answers never relay it). */
  private readonly keyHeader?: string;
  state: ConnectionState = { state: 'ok' };
  readonly concurrency: number;
  /** The paths in use: configured (checked) or the defaults. */
  readonly paths: Readonly<ApiPaths>;

  constructor(opts: ClientOptions) {
    checkNoControl(opts.baseUrl, 'baseUrl'); // a URL parser drops a line break where the request would not
    if (typeof opts.baseUrl !== 'string' || !/^https?:\/\/[^\s/]+/i.test(opts.baseUrl) || !URL.canParse(opts.baseUrl)) {
      throw new ValidationError('baseUrl', 'must be an http:// or https:// URL, e.g. "https://api.example.com/v1"');
    }
    // Every waiting request listens on this one signal: many listeners are expected, not a leak.
    setMaxListeners(0, this.closer.signal);
    const auth = opts.auth ?? { type: 'none' };
    checkAuth(auth);
    this.redactor = new Redactor(secretsOf(auth));
    this.baseUrl = opts.baseUrl;
    this.keyHeader = auth.type === 'header' ? (auth.header || 'x-api-key').trim().toLowerCase() : undefined;
    this.concurrency = Math.max(1, Math.floor(opts.concurrency ?? 6));
    this.paths = Object.freeze(resolvePaths(pathSettings(opts.paths)));
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const maxBodyBytes =
      opts.maxBodyBytes !== undefined && opts.maxBodyBytes > 0 ? Math.floor(opts.maxBodyBytes) : DEFAULT_MAX_BODY_BYTES;
    this.errorContext = { redactor: this.redactor, hostPort: hostPortOf(opts.baseUrl), timeoutMs, maxBodyBytes };
    this.transport = new Transport({
      baseUrl: opts.baseUrl,
      auth,
      timeoutMs,
      maxBodyBytes,
      retries: Math.max(0, Math.floor(opts.retries ?? 3)),
      concurrency: this.concurrency,
      rejectUnauthorized: opts.rejectUnauthorized ?? true,
      ca: opts.ca,
      retryBaseMs: opts.retryBaseMs ?? 250,
      retryMaxMs: opts.retryMaxMs ?? 8_000,
      redactor: this.redactor,
      onState: (s) => this.setState(s),
      hook: opts.attempts,
      adapter: opts.adapter,
    });
  }

  /** Connection state changes (ok, rate-limited, error), for node status. Returns an unsubscribe. */
  onState(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  get closed(): boolean {
    return this.closer.signal.aborted;
  }

  /** Aborts every request in flight or waiting, and frees the sockets. */
  close(): void {
    if (this.closed) return;
    this.closer.abort(apiError({ code: 'EMS_CLOSED', message: 'client closed', request: { method: '-', path: '-' } }));
    this.transport.destroy();
    this.listeners.clear();
  }

  // ------------------------------------------------------------------ device data

  async listDevices(o?: CallOptions): Promise<Device[]> {
    return this.request('GET', this.paths.devices, { kind: 'read' }, o, undefined, DEVICES);
  }

  async getMeasurement(device: string, property: string, o?: CallOptions): Promise<Measurement> {
    return this.read(validateReadRequest('single', device, property), o);
  }

  async getMeasurementsMap(device: string, properties: string[] | string, o?: CallOptions): Promise<MeasurementMap> {
    return this.read(validateReadRequest('map', device, properties), o);
  }

  async getMeasurementsList(device: string, properties: string[] | string, o?: CallOptions): Promise<MeasurementList> {
    return this.read(validateReadRequest('list', device, properties), o);
  }

  /**
   * The trusted read path: sends a read whose device and properties are validated already
   * (validateReadRequest, or a node that named its fields) as it is. The runtime's coalescer
   * uses it; code should call the public methods above.
   */
  read<S extends ReadShape>(req: ReadRequest<S>, o?: CallOptions): Promise<ReadAnswers[S]> {
    const r = READS[req.shape];
    let path: string;
    try {
      path = `/devices/${pathSegment(req.device, 'deviceReference')}${r.path}`;
    } catch (e) {
      return Promise.reject(e);
    }
    return this.request(
      'GET',
      path,
      READ_META,
      o,
      { url: `${path}${r.query}${encList(req.properties)}` },
      r.shape as ResponseShape<ReadAnswers[S]>,
    );
  }

  /** One time-series request (at most 30 days, one property), as the API takes it. */
  async getTimeSeries(
    device: string,
    req: TimeSeriesRequest | TimeSeriesQuery,
    o?: CallOptions,
  ): Promise<TimeSeriesResponse> {
    const ref = validateReference(device, 'deviceReference');
    const body = validateTimeSeriesRequest('range' in req ? req : toTimeSeriesRequest(req));
    return this.request(
      'POST',
      `/devices/${pathSegment(ref, 'deviceReference')}/measurements/time-series`,
      { kind: 'read' },
      o,
      { data: body },
      TIME_SERIES,
    );
  }

  /**
   * A time series over any range: split into spans of at most 30 days (aligned on the
   * resolution), fetched in parallel up to the client's concurrency, merged in order.
   */
  async getTimeSeriesRange(device: string, q: TimeSeriesQuery, o?: CallOptions): Promise<TimeSeriesResponse> {
    const ref = validateReference(device, 'deviceReference');
    const property = validateProperty(q.property, 'property');
    const res = resolutionOf(q.resolutionHours);
    // The API takes whole seconds: round up, so a start with milliseconds keeps its first point.
    const start = Math.ceil(parseTime(q.start, 'start') / 1000) * 1000;
    const end = Math.ceil(parseTime(q.end, 'end') / 1000) * 1000;
    if (!(end > start)) throw new ValidationError('end', `must be after start (${toIsoSeconds(start)})`);
    const spans = splitRange(start, end, res * HOUR_MS);
    if (spans.length > MAX_SPANS) {
      throw new ValidationError(
        'range',
        `must span at most ${MAX_SPANS} requests of ${SERVICE.maxSpanDays} days (about 5 years); got ${((end - start) / 86_400_000).toFixed(0)} days`,
      );
    }
    const parts = await mapLimit(spans, this.concurrency, (s) =>
      this.getTimeSeries(ref, { property, start: s.start, end: s.end, resolutionHours: res }, o),
    );
    return mergeSeries(parts, start, end);
  }

  // ---------------------------------------------------------------------- steering

  async steer(
    site: string,
    body: ActiveSteeringRequest,
    o?: CallOptions,
  ): Promise<SteeringResponse<ActiveSteeringRequest>> {
    return this.steerEndpoint('combined', site, body, o);
  }

  async steerEss(
    site: string,
    body: EssSteeringRequest,
    o?: CallOptions,
  ): Promise<SteeringResponse<EssSteeringRequest>> {
    return this.steerEndpoint('ess', site, body, o);
  }

  async steerCurtailment(
    site: string,
    body: CurtailmentSteeringRequest,
    o?: CallOptions,
  ): Promise<SteeringResponse<CurtailmentSteeringRequest>> {
    return this.steerEndpoint('curtailment', site, body, o);
  }

  async steerGridTarget(
    site: string,
    body: GridTargetRequest,
    o?: CallOptions,
  ): Promise<SteeringResponse<GridTargetRequest>> {
    return this.steerEndpoint('grid-target', site, body, o);
  }

  /** Grid-limits steering (vendor notes; the path is the configured pathGridLimits, by default assumed). */
  async steerGridLimits(
    site: string,
    body: GridLimitsRequest,
    o?: CallOptions,
  ): Promise<SteeringResponse<GridLimitsRequest>> {
    return this.steerEndpoint('grid-limits', site, body, o);
  }

  async cancelGridTarget(site: string, o?: CallOptions): Promise<GridTargetCancelResponse> {
    return this.steerEndpoint('cancel-grid-target', site, undefined, o);
  }

  /**
   * Any steering endpoint of the protocol's table (STEERING_ENDPOINTS): validates the site
   * reference and the body (a validUntil must lie in the future), then sends it.
   */
  async steerEndpoint<E extends SteeringEndpoint>(
    endpoint: E,
    site: string,
    body: unknown,
    o?: CallOptions,
  ): Promise<SteeringAnswers[E]> {
    const ref = validateReference(site, 'siteReference');
    const validate = STEERING_ENDPOINTS[endpoint].validate as ((b: unknown, now?: number) => never) | undefined;
    return this.sendSteering(steeringRequest(endpoint, ref, validate?.(body, Date.now()), this.paths), o);
  }

  /**
   * The trusted steering path: sends exactly the typed request given (its method, path and
   * body, built by the protocol's endpoint table from a validated command), with the steering
   * retry policy bound by its validUntil. Nothing is validated again; the one check left is
   * the time: a request whose validUntil has passed is not sent (ValidationError).
   */
  async sendSteering<E extends SteeringEndpoint>(
    req: SteeringRequest<E>,
    o?: CallOptions,
  ): Promise<SteeringAnswers[E]> {
    const { validUntil } = req;
    if (validUntil !== undefined) checkFuture(validUntil, Date.now());
    // The body as JSON bytes: axios deep-copies a plain-object body in its config merge, then checks and stringifies it.
    const extra =
      req.body === undefined ? undefined : { data: Buffer.from(JSON.stringify(req.body)), headers: JSON_BODY };
    return this.request(
      req.method,
      req.path,
      { kind: 'steer', validUntil },
      o,
      extra,
      (req.method === 'DELETE' ? CANCEL : STEERING) as ResponseShape<SteeringAnswers[E]>,
    );
  }

  /** Sites with their devices. The reference simulator has this; the real service may not (404 gives []). */
  async listSites(o?: CallOptions): Promise<SiteSummary[]> {
    try {
      return await this.request('GET', this.paths.sites, { kind: 'read' }, o, undefined, SITES);
    } catch (e) {
      if (e instanceof ApiError && (e.status === 404 || e.status === 405)) return [];
      throw e;
    }
  }

  /**
   * A request to any endpoint below the base URL (the ems-request node): method GET, POST, PUT,
   * PATCH or DELETE, a path relative to the base URL (refused before sending when it could
   * leave it), a body (JSON, text or bytes). Same transport, limits and redaction as every
   * other call, no shape check: parsed JSON or text, selected headers (raw.ts). A non-2xx
   * answer rejects with its ApiError, which carries the answer (rawAnswerOf).
   */
  async raw(method: unknown, path: unknown, body?: unknown, o: RawOptions = {}): Promise<RawResponse> {
    return sendRaw(
      {
        ...this.errorContext,
        axios: this.transport.axios,
        baseUrl: this.baseUrl,
        signal: this.signalFor(o.signal),
        closed: this.closed,
        keyHeader: this.keyHeader,
      },
      method,
      path,
      body,
      o,
    );
  }

  // ---------------------------------------------------------------------- plumbing

  /**
   * Sends one request (with the transport's retries) and maps failures to ApiError. With a
   * `shape`, the answer is checked against it (EMS_BAD_RESPONSE when it does not fit).
   */
  async request<T>(
    method: string,
    path: string,
    meta: EmsRequestMeta,
    o?: CallOptions,
    extra?: AxiosRequestConfig,
    shape?: ResponseShape<T>,
  ): Promise<T> {
    if (this.closed)
      throw apiError({
        code: 'EMS_CLOSED',
        message: `${method} ${path} not sent: client closed`,
        request: { method, path },
      });
    const signal = this.signalFor(o?.signal);
    let res;
    try {
      res = await this.transport.axios.request<T>({
        method,
        url: path,
        signal,
        ems: { ...meta },
        ...extra,
      } as AxiosRequestConfig);
    } catch (err) {
      throw toApiError(err, method, path, this.errorContext);
    }
    return shape ? readResponse(shape, res.status, res.data, method, path, this.redactor) : res.data;
  }

  /**
   * The client's signal combined with a caller's, made once per caller signal: an
   * AbortSignal.any() per request leaks on Node 20 (about 100 bytes per call kept by each
   * long-lived source signal, e.g. a polling node's).
   */
  private signalFor(s: AbortSignal | undefined): AbortSignal {
    if (!s || s === this.closer.signal) return this.closer.signal;
    let c = this.combined.get(s);
    if (!c) {
      c = AbortSignal.any([this.closer.signal, s]);
      setMaxListeners(0, c); // one listener per request in flight is expected
      this.combined.set(s, c);
    }
    return c;
  }

  private setState(s: ConnectionState): void {
    const prev = this.state;
    this.state = s;
    if (prev.state === s.state && (s.state !== 'error' || (prev as { reason?: string }).reason === s.reason)) return;
    for (const fn of this.listeners) {
      try {
        fn(s);
      } catch {
        /* a listener's failure must not break a request */
      }
    }
  }
}

function enc(ref: string): string {
  return encodeURIComponent(ref);
}

/** The read endpoints by shape: path after the device, query parameter, answer shape. */
const READS: Record<ReadShape, { path: string; query: string; shape: ResponseShape<unknown> }> = {
  single: { path: '/measurement', query: '?property=', shape: MEASUREMENT },
  map: { path: '/measurements/map', query: '?properties=', shape: MEASUREMENT_MAP },
  list: { path: '/measurements', query: '?properties=', shape: MEASUREMENT_LIST },
};
/** Reads carry no per-request meta; request() copies it for each request. */
const READ_META: EmsRequestMeta = { kind: 'read' };

/** Property names, each URL-encoded, comma-separated. */
function encList(props: readonly string[]): string {
  let s = enc(props[0] ?? '');
  for (let i = 1; i < props.length; i++) s += `,${enc(props[i])}`;
  return s;
}

/** Hours between points: a number within LIMITS.resolution (its default when not given). */
function resolutionOf(h: unknown): number {
  if (h === undefined) return LIMITS.resolution.dflt;
  if (typeof h !== 'number' || !accepts(LIMITS.resolution, h))
    throw new ValidationError('resolution', `${refusal(LIMITS.resolution)}; got ${String(h)}`);
  return h;
}

export function toTimeSeriesRequest(q: TimeSeriesQuery): TimeSeriesRequest {
  return {
    property: q.property,
    range: {
      type: 'absolute',
      start: toIsoSeconds(parseTime(q.start, 'start')),
      end: toIsoSeconds(parseTime(q.end, 'end')),
    },
    resolution: { value: resolutionOf(q.resolutionHours), unit: 'h' },
  };
}

/** Concatenates span responses in order, keeping only points in [start, end) and dropping repeats at seams. */
export function mergeSeries(parts: TimeSeriesResponse[], start: number, end: number): TimeSeriesResponse {
  const time: string[] = [];
  const data: number[] = [];
  let last = Number.NEGATIVE_INFINITY;
  for (const p of parts) {
    const n = Math.min(p.time?.length ?? 0, p.data?.length ?? 0);
    for (let i = 0; i < n; i++) {
      const t = parseIsoTime(p.time[i]);
      if (!(t > last) || t < start || t >= end) continue;
      last = t;
      time.push(p.time[i]);
      data.push(p.data[i]);
    }
  }
  return { time, data };
}
