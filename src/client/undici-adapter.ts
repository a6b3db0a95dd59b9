/**
 * An axios adapter on undici (Node's own HTTP client project): axios stays the client (its
 * config, interceptors, transforms and axios-retry); only the transport under it changes.
 * It behaves as axios' own http adapter does for everything this package uses, at about half
 * its CPU per read (BENCHMARKS.md, benchmark 1):
 *
 * - URL: baseURL + url (allowAbsoluteUrls), params through axios' own serializer;
 * - request body: string, Buffer, ArrayBuffer, typed array or stream; maxBodyLength;
 * - answer: status, statusText, headers (lower-case names, duplicates as Node joins them),
 *   data as text (responseEncoding, BOM stripped) or bytes (responseType arraybuffer);
 *   validateStatus; gzip, deflate (with or without zlib header) and br decoded on the way,
 *   maxContentLength counted on the decoded bytes, so a decompression bomb stops at the limit;
 * - abort through config.signal (in flight, or already aborted: then nothing is sent);
 * - errors as axios' http adapter raises them: connection errors keep Node's code
 *   (ECONNREFUSED, ENOTFOUND, TLS codes), a dropped connection is ECONNRESET, timeouts ETIMEDOUT.
 *
 * Redirects are never followed (a 3xx is an answer like any other) and no proxy is ever used
 * (undici's Agent reads no HTTP_PROXY). Not supported (rejected as ERR_NOT_SUPPORT): response
 * streams, progress callbacks, rate limits, socketPath; none is used by this package.
 */
import zlib from 'node:zlib';
import type { Readable, Transform } from 'node:stream';
import type { AxiosAdapter, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import type { Dispatcher } from 'undici';
import { httpLib } from './http-lib';
import { undiciError } from './undici-errors';

const ZLIB_OPTIONS = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const BROTLI_OPTIONS = {
  flush: zlib.constants.BROTLI_OPERATION_FLUSH,
  finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
};
/** What axios' http adapter accepts by default. */
const ACCEPT_ENCODING = 'gzip, compress, deflate, br';
/** Answer headers Node's http keeps once (the first), as axios' http adapter sees them. */
const SINGLE = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);
const ABSOLUTE = /^([a-z][a-z\d+\-.]*:)?\/\//i;

/** The request as errors and answers carry it (axios' http adapter gives its ClientRequest). */
export interface AdapterRequest {
  method: string;
  path: string;
  host: string;
  protocol: string;
}

type Config = InternalAxiosRequestConfig & {
  allowAbsoluteUrls?: boolean;
  responseEncoding?: BufferEncoding;
  decompress?: boolean;
};

/** axios' buildFullPath: baseURL joined with a relative url (or any url when absolute ones are not allowed). */
export function fullPathOf(baseURL: string | undefined, url: string, allowAbsolute: boolean | undefined): string {
  if (baseURL && (!ABSOLUTE.test(url) || allowAbsolute === false)) {
    if (!url) return baseURL;
    let end = baseURL.length;
    while (end > 0 && baseURL.charCodeAt(end - 1) === 47) end--;
    return `${baseURL.slice(0, end)}/${url.replace(/^\/+/, '')}`;
  }
  return url;
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
  let u: URL;
  try {
    u = new URL(baseURL);
  } catch {
    return null;
  }
  const trimmed = baseURL.replace(/\/+$/, '');
  const path = u.pathname.replace(/\/+$/, '');
  if (u.username || u.password || u.search || u.hash || `${u.origin}${path}` !== trimmed) return null;
  return { prefix: `${trimmed}/`, origin: u.origin, host: u.host, protocol: u.protocol, path };
}

/**
 * The target of a full URL. A URL made of the base URL and a plain path (the package's own
 * requests: every reference and property is checked) is taken apart without the URL parser,
 * which would give the same parts at several µs a request; any other goes through the parser.
 */
export function targetOf(full: string, baseURL: string | undefined): Target {
  if (baseURL) {
    let b = bases.get(baseURL);
    if (b === undefined) {
      b = baseOf(baseURL);
      if (bases.size < 64) bases.set(baseURL, b);
    }
    if (b && full.startsWith(b.prefix)) {
      const rest = full.slice(b.prefix.length - 1);
      const q = rest.indexOf('?');
      if (PLAIN.test(rest) && !DOT_SEGMENT.test(q < 0 ? rest : rest.slice(0, q))) {
        return {
          origin: b.origin,
          host: b.host,
          protocol: b.protocol,
          path: b.path + rest,
          username: '',
          password: '',
        };
      }
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

/** The request body as bytes or a stream, or an error text for a form undici cannot send. */
function bodyOf(data: unknown): string | Buffer | Readable | undefined {
  if (data === undefined || data === null) return undefined;
  if (typeof data === 'string' || Buffer.isBuffer(data)) return data;
  // axios' transformRequest has made a typed array its ArrayBuffer.
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (typeof (data as Readable).pipe === 'function') return data as Readable;
  return undefined;
}

/** Answer headers from undici's raw list, as Node's http parses them. */
function headersOf(raw: Buffer[]): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toString('latin1').toLowerCase();
    const value = raw[i + 1].toString('latin1');
    const had = h[name];
    if (had === undefined) h[name] = name === 'set-cookie' ? [value] : value;
    else if (name === 'set-cookie') (had as string[]).push(value);
    else if (!SINGLE.has(name)) h[name] = `${had as string}, ${value}`;
  }
  return h;
}

/** One request's handler (undici's dispatch handler interface): collects, decodes and bounds the answer. */
class Exchange {
  private abortFn?: (err?: Error) => void;
  private settled = false;
  private response?: AxiosResponse;
  private chunks: Buffer[] = [];
  private size = 0;
  private decoder?: Transform;
  private firstDeflate = false;
  private readonly limit: number;
  private readonly signal: InternalAxiosRequestConfig['signal'];
  private readonly onAbort = (): void => this.cancel();

  constructor(
    private readonly config: Config,
    private readonly request: AdapterRequest,
    private readonly resolve: (r: AxiosResponse) => void,
    private readonly reject: (e: unknown) => void,
  ) {
    const max = config.maxContentLength;
    this.limit = typeof max === 'number' && max > -1 ? max : Infinity;
    this.signal = config.signal;
    // Subscribed at once: the attempt's deadline signal is on the config only while the adapter starts.
    this.signal?.addEventListener?.('abort', this.onAbort);
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.settled) abort();
    else this.abortFn = abort;
  }

  onHeaders(status: number, raw: Buffer[], resume: () => void, statusText: string): boolean {
    if (status < 200) return true; // 1xx (103 Early Hints): the answer is still to come
    const headers = headersOf(raw);
    const config = this.config;
    this.response = {
      status,
      statusText,
      headers,
      config,
      request: this.request,
      data: undefined,
    } as unknown as AxiosResponse;
    const encoding = headers['content-encoding'];
    if (encoding !== undefined && config.decompress !== false) {
      if (config.method === 'head' || status === 204) delete headers['content-encoding'];
      else this.decodeWith(String(encoding).toLowerCase(), headers, resume);
    }
    if (!this.decoder) {
      const length = Number(headers['content-length']);
      if (length > this.limit) this.tooLarge();
    }
    return true;
  }

  private decodeWith(encoding: string, headers: Record<string, unknown>, resume: () => void): void {
    if (encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'compress' || encoding === 'x-compress')
      this.decoder = zlib.createUnzip(ZLIB_OPTIONS);
    else if (encoding === 'deflate') this.firstDeflate = true;
    else if (encoding === 'br') this.decoder = zlib.createBrotliDecompress(BROTLI_OPTIONS);
    else return;
    delete headers['content-encoding'];
    if (this.firstDeflate) this.decoder = zlib.createUnzip(ZLIB_OPTIONS);
    const d = this.decoder!;
    d.on('data', (chunk: Buffer) => this.collect(chunk));
    d.on('error', (err: Error) =>
      this.fail(httpLib().axios.AxiosError.from(err, undefined, this.config, this.request, this.response)),
    );
    d.on('end', () => this.finish());
    d.on('drain', resume);
  }

  // After fail() has aborted the exchange undici calls nothing but onError: no guards below.
  onData(chunk: Buffer): boolean {
    const d = this.decoder;
    if (!d) {
      this.collect(chunk);
      return true;
    }
    if (this.firstDeflate && chunk.length > 0) {
      this.firstDeflate = false;
      // Deflate without a zlib header (some servers send raw deflate): add one, as axios does.
      if (chunk[0] !== 120) d.write(Buffer.from([120, 156]));
    }
    // Backpressure: undici pauses reading until the decoder drains.
    return d.write(chunk);
  }

  onComplete(): void {
    if (this.decoder) this.decoder.end();
    else this.finish();
  }

  onError(err: Error): void {
    this.fail(undiciError(err, this.config, this.request, this.response));
  }

  private collect(chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > this.limit) return this.tooLarge();
    this.chunks.push(chunk);
  }

  private tooLarge(): void {
    const { AxiosError } = httpLib().axios;
    this.fail(
      new AxiosError(
        `maxContentLength size of ${this.config.maxContentLength} exceeded`,
        AxiosError.ERR_BAD_RESPONSE,
        this.config,
        this.request,
      ),
    );
  }

  private finish(): void {
    const res = this.response!;
    const buf = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const config = this.config;
    if (config.responseType === 'arraybuffer') res.data = buf;
    else {
      const enc = config.responseEncoding;
      let text = buf.toString(enc);
      if ((!enc || enc === 'utf8') && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      res.data = text;
    }
    this.done();
    const valid = config.validateStatus;
    if (!res.status || !valid || valid(res.status)) return this.resolve(res);
    const { AxiosError } = httpLib().axios;
    const code = res.status >= 400 && res.status < 500 ? AxiosError.ERR_BAD_REQUEST : AxiosError.ERR_BAD_RESPONSE;
    this.reject(new AxiosError(`Request failed with status code ${res.status}`, code, config, this.request, res));
  }

  /** Aborted by the caller or the attempt's deadline. */
  private cancel(): void {
    this.fail(new (httpLib().axios.CanceledError)(undefined, this.config, this.request));
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.done();
    // Ends the exchange (undici destroys the connection of an unfinished one); its error is ours already.
    this.abortFn?.();
    this.decoder?.destroy();
    this.reject(err);
  }

  private done(): void {
    this.settled = true;
    this.chunks = [];
    this.signal?.removeEventListener?.('abort', this.onAbort);
  }
}

/** Options of the adapter that are not per request. */
export interface UndiciAdapterOptions {
  /** axios' VERSION, for the user-agent axios sends when none is set. */
  version: string;
}

/** The axios adapter sending through `dispatcher` (an undici Agent: one pool of connections per origin). */
export function undiciAdapter(dispatcher: Dispatcher, o: UndiciAdapterOptions): AxiosAdapter {
  const userAgent = `axios/${o.version}`;
  return (cfg) =>
    new Promise<AxiosResponse>((resolve, reject) => {
      const config = cfg as Config;
      const { AxiosError, CanceledError } = httpLib().axios;
      let full = fullPathOf(config.baseURL, config.url ?? '', config.allowAbsoluteUrls);
      if (config.params) {
        try {
          full = httpLib().axios.getUri({
            url: full,
            params: config.params,
            paramsSerializer: config.paramsSerializer,
          });
        } catch (err) {
          return reject(AxiosError.from(err as Error, AxiosError.ERR_BAD_REQUEST, config));
        }
      }
      // A URL that does not parse rejects with Node's TypeError (ERR_INVALID_URL), as in axios' http adapter.
      const url = targetOf(full, config.params ? undefined : config.baseURL);
      const method = (config.method ?? 'get').toUpperCase();
      const request: AdapterRequest = { method, path: url.path, host: url.host, protocol: url.protocol };
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        return reject(new AxiosError(`Unsupported protocol ${url.protocol}`, AxiosError.ERR_BAD_REQUEST, config));
      }
      const c = config as Config & {
        onUploadProgress?: unknown;
        onDownloadProgress?: unknown;
        maxRate?: unknown;
        socketPath?: unknown;
      };
      if (c.responseType === 'stream' || c.onUploadProgress || c.onDownloadProgress || c.maxRate || c.socketPath) {
        return reject(
          new AxiosError(
            'responseType stream, progress callbacks, maxRate and socketPath are not supported by the undici adapter',
            AxiosError.ERR_NOT_SUPPORT,
            config,
          ),
        );
      }
      if (config.signal?.aborted) return reject(new CanceledError(undefined, config, request));
      const body = bodyOf(config.data);
      if (body === undefined && config.data !== undefined && config.data !== null) {
        return reject(
          new AxiosError(
            'Data after transformation must be a string, an ArrayBuffer, a Buffer, or a Stream',
            AxiosError.ERR_BAD_REQUEST,
            config,
          ),
        );
      }
      const headers: Record<string, string | string[]> = {};
      let hasAgent = false;
      let hasEncoding = false;
      const h = config.headers as unknown as Record<string, unknown>;
      for (const name in h) {
        if (!Object.prototype.hasOwnProperty.call(h, name)) continue;
        const v = h[name];
        if (v === undefined || v === null || v === false) continue;
        const lower = name.toLowerCase();
        if (lower === 'user-agent') hasAgent = true;
        else if (lower === 'accept-encoding') hasEncoding = true;
        else if (lower === 'content-length') continue; // from the body, as axios sets it
        headers[name] = Array.isArray(v) ? v.map(String) : String(v);
      }
      if (!hasAgent) headers['User-Agent'] = userAgent;
      if (!hasEncoding) headers['Accept-Encoding'] = ACCEPT_ENCODING;
      if (typeof body === 'string' || Buffer.isBuffer(body)) {
        const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
        const maxBody = config.maxBodyLength;
        if (typeof maxBody === 'number' && maxBody > -1 && length > maxBody) {
          return reject(
            new AxiosError('Request body larger than maxBodyLength limit', AxiosError.ERR_BAD_REQUEST, config),
          );
        }
        headers['Content-Length'] = String(length);
      }
      const auth =
        config.auth ??
        (url.username || url.password
          ? { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) }
          : undefined);
      if (auth) {
        for (const name of Object.keys(headers)) if (name.toLowerCase() === 'authorization') delete headers[name];
        headers.Authorization = `Basic ${Buffer.from(`${auth.username ?? ''}:${auth.password ?? ''}`).toString('base64')}`;
      }
      const exchange = new Exchange(config, request, resolve, reject);
      dispatcher.dispatch(
        { origin: url.origin, path: request.path, method: method as Dispatcher.HttpMethod, headers, body },
        exchange as unknown as Dispatcher.DispatchHandler,
      );
    });
}
