/**
 * The typed client of the partner API: one method per operation. Public methods validate every
 * input before sending (ValidationError names the field); failures become ApiError (status, the
 * service's message, method and path, requestId; never a secret). Two trusted paths send typed
 * requests that are validated already, as they are: read() (ReadRequest, for the coalescer) and
 * sendSteering() (SteeringRequest from the protocol's endpoint table, for the steering queue).
 * raw() reaches any endpoint below the base URL (any-endpoint.ts); error mapping is in error-map.ts.
 */
import {
  pathSegment,
  resolvePaths,
  checkFuture,
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
  TimeSeriesRequest,
  TimeSeriesResponse,
} from '../protocol';
import type { AxiosRequestConfig } from 'axios';
import { ApiError, apiError, Redactor, ValidationError } from './errors';
import { hostPortOf, toApiError, type ErrorContext } from './error-map';
import { sendRaw, type RawOptions, type RawResponse } from './any-endpoint';
import { checkAuth, secretsOf } from './auth';
import { readTarget } from './read-paths';
import { Closer } from './closer';
import { checkNoControl } from './request-path';
import { DEVICES, readResponse, SITES, STEERING, TIME_SERIES, type ResponseShape } from './responses';
import { mapLimit } from './limiter';
import { Transport, type ConnectionState, type EmsRequestMeta } from './transport';
import { RequestMeta } from './request-meta';
import { type CallOptions, type ClientOptions, DEFAULT_MAX_BODY_BYTES, pathSettings } from './client-options';
import { mergeSeries, spansOf, toTimeSeriesRequest, type TimeSeriesQuery } from './time-series';

export type { CallOptions, ClientOptions };
export { MAX_SPANS, mergeSeries, toTimeSeriesRequest, type TimeSeriesQuery } from './time-series';

/** Called with each change of the connection state. */
export type Listener = (s: ConnectionState) => void;

/** The content type of a steering body sent as bytes (what axios sets for an object). */
const JSON_BODY = Object.freeze({ 'Content-Type': 'application/json' });

export { hostPortOf };
export type { RawOptions, RawResponse };

/** Reads carry no per-request meta; request() copies it for each request. */
const READ_META: EmsRequestMeta = { kind: 'read' };

export class EmsClient {
  readonly transport: Transport;
  /** Aborts every request of the client when it closes. */
  private readonly closer = new Closer();
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
    let target;
    try {
      target = readTarget(req);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.request(
      'GET',
      target.path,
      READ_META,
      o,
      { url: target.url },
      target.shape as ResponseShape<ReadAnswers[S]>,
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
    const { property, resolutionHours, start, end, spans } = spansOf(q);
    const parts = await mapLimit(spans, this.concurrency, (s) =>
      this.getTimeSeries(ref, { property, start: s.start, end: s.end, resolutionHours }, o),
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
  sendSteering<E extends SteeringEndpoint>(req: SteeringRequest<E>, o?: CallOptions): Promise<SteeringAnswers[E]> {
    const { validUntil } = req;
    // Not an async function (request() is a promise chain already): a late validUntil still rejects.
    try {
      if (validUntil !== undefined) checkFuture(validUntil, Date.now());
    } catch (err) {
      return Promise.reject(err as Error);
    }
    // The body as JSON bytes: axios deep-copies a plain-object body in its config merge, then checks and stringifies it.
    const extra =
      req.body === undefined ? undefined : { data: Buffer.from(JSON.stringify(req.body)), headers: JSON_BODY };
    return this.request(
      req.method,
      req.path,
      { kind: 'steer', validUntil },
      o,
      extra,
      STEERING as ResponseShape<SteeringAnswers[E]>,
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
   * other call, no shape check: parsed JSON or text, selected headers (any-endpoint.ts). A non-2xx
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
  request<T>(
    method: string,
    path: string,
    meta: EmsRequestMeta,
    o?: CallOptions,
    extra?: AxiosRequestConfig,
    shape?: ResponseShape<T>,
  ): Promise<T> {
    if (this.closed)
      return Promise.reject(
        apiError({
          code: 'EMS_CLOSED',
          message: `${method} ${path} not sent: client closed`,
          request: { method, path },
        }),
      );
    const signal = this.signalFor(o?.signal);
    // A promise chain, not an async function: one reaction per request.
    const config: AxiosRequestConfig & { ems: EmsRequestMeta } = {
      method,
      url: path,
      signal,
      ems: new RequestMeta(meta.kind, meta.validUntil),
    };
    if (extra) Object.assign(config, extra);
    return this.transport.axios.request<T>(config).then(
      (res) => (shape ? readResponse(shape, res.status, res.data, method, path, this.redactor) : res.data),
      (err: unknown) => {
        throw toApiError(err, method, path, this.errorContext);
      },
    );
  }

  private signalFor(s: AbortSignal | undefined): AbortSignal {
    return this.closer.joined(s);
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
