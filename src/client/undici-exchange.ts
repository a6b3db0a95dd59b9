/**
 * One request's exchange with undici (its dispatch handler interface) for the undici adapter:
 * the answer's status and headers as Node's http parses them, the body collected, decoded
 * (gzip, deflate, br) and bounded by maxContentLength on the decoded bytes, abort through the
 * request's signal, the attempt's wall-clock deadline, and the errors axios' http adapter raises.
 */
import zlib from 'node:zlib';
import type { Transform } from 'node:stream';
import type { AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { httpLib } from './http-lib';
import { type Hub, joinAbort, leaveAbort, type SlotWaiter } from './abort-hub';
import { undiciError } from './undici-errors';

const ZLIB_OPTIONS = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const BROTLI_OPTIONS = {
  flush: zlib.constants.BROTLI_OPERATION_FLUSH,
  finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
};
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

/** The request as errors and answers carry it (axios' http adapter gives its ClientRequest). */
export interface AdapterRequest {
  method: string;
  path: string;
  host: string;
  protocol: string;
}

export type Config = InternalAxiosRequestConfig & {
  allowAbsoluteUrls?: boolean;
  responseEncoding?: BufferEncoding;
  decompress?: boolean;
};

/**
 * An answer header name seen before: its bytes, its lower-case string, and the last value it
 * had (bytes and string). Names repeat on every answer of a service, and so do most values
 * (content type, connection, date within a second): comparing a few bytes here costs less
 * than decoding them to a new string each time.
 */
interface KnownHeader {
  raw: Uint8Array;
  name: string;
  lastRaw?: Uint8Array;
  lastValue: string;
  /** Answers in a row whose value differed from the last: past VARYING, its values are no longer kept. */
  misses: number;
}

/** At most this many names are remembered (a service sends a handful); others are decoded each time. */
const KNOWN_NAMES = 32;
/** Values longer than this are decoded each time (ids, tokens: they rarely repeat). */
const KNOWN_VALUE_BYTES = 64;
/** A name whose value changed on this many answers in a row (a request id) is decoded each time. */
const VARYING = 8;
const known: KnownHeader[] = [];
/** Names whose values may carry a credential (a session cookie): never kept beyond their answer. */
const NEVER_KEPT = new Set([
  'set-cookie',
  'authorization',
  'proxy-authorization',
  'www-authenticate',
  'proxy-authenticate',
]);

/**
 * The known header at each position of the last answer: a service sends its headers in the same
 * order, so the name at a position is compared with that one first.
 */
const lastOrder: Array<KnownHeader | undefined> = [];

/** Compared from the end: values that change (a date, a length, an id) differ there first. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  let at = a.length;
  if (b.length !== at) return false;
  while (at-- > 0) if (a[at] !== b[at]) return false;
  return true;
}

/** The known header of a raw name (remembered on first sight while there is room), undefined beyond. */
function knownHeader(raw: Buffer): KnownHeader | undefined {
  for (let i = 0; i < known.length; i++) if (sameBytes(known[i].raw, raw)) return known[i];
  if (known.length >= KNOWN_NAMES) return undefined;
  // A copy: undici's raw header is a view of the socket's buffer.
  const name = raw.toString('latin1').toLowerCase();
  const misses = NEVER_KEPT.has(name) ? VARYING : 0;
  const header: KnownHeader = { raw: new Uint8Array(raw), name, lastValue: '', misses };
  known.push(header);
  return header;
}

/** A header's value as Node's http gives it (latin1), the last one of its name reused when the bytes are the same. */
function valueOf(header: KnownHeader | undefined, raw: Buffer): string {
  if (header === undefined || header.misses >= VARYING || raw.length > KNOWN_VALUE_BYTES) return raw.toString('latin1');
  if (header.lastRaw !== undefined && sameBytes(header.lastRaw, raw)) {
    header.misses = 0;
    return header.lastValue;
  }
  header.misses++;
  header.lastRaw = new Uint8Array(raw);
  header.lastValue = raw.toString('latin1');
  return header.lastValue;
}

/** Answer headers from undici's raw list, as Node's http parses them. */
function headersOf(raw: Buffer[]): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const position = i >> 1;
    let header = lastOrder[position];
    if (header === undefined || !sameBytes(header.raw, raw[i])) {
      header = knownHeader(raw[i]);
      if (position < KNOWN_NAMES) lastOrder[position] = header;
    }
    const name = header === undefined ? raw[i].toString('latin1').toLowerCase() : header.name;
    const value = valueOf(header, raw[i + 1]);
    const had = headers[name];
    if (had === undefined) headers[name] = name === 'set-cookie' ? [value] : value;
    else if (name === 'set-cookie') (had as string[]).push(value);
    else if (!SINGLE.has(name)) headers[name] = `${had as string}, ${value}`;
  }
  return headers;
}

/** One request's handler (undici's dispatch handler interface): collects, decodes and bounds the answer. */
export class Exchange implements SlotWaiter {
  private abortFn?: (err?: Error) => void;
  private settled = false;
  private response?: AxiosResponse;
  /** The body's first chunk (most answers come in one), and all of them once there are more. */
  private first?: Buffer;
  private chunks?: Buffer[];
  private size = 0;
  private decoder?: Transform;
  private firstDeflate = false;
  private readonly limit: number;
  /** The caller's signal's watch (abort-hub.ts: one listener per signal, not one per request). */
  private hub?: Hub;
  /** Its place among the waiters of that hub. */
  abortSlot = -1;
  private timer?: NodeJS.Timeout;

  /**
   * @param deadlineMs the attempt's wall-clock deadline (0: none): when it passes, the exchange
   * ends as a timeout (ETIMEDOUT), a body that drips or never ends included
   */
  constructor(
    private readonly config: Config,
    private readonly request: AdapterRequest,
    private readonly resolve: (response: AxiosResponse) => void,
    private readonly reject: (error: unknown) => void,
    private readonly deadlineMs = 0,
  ) {
    const max = config.maxContentLength;
    this.limit = typeof max === 'number' && max > -1 ? max : Infinity;
    const signal = config.signal as AbortSignal | undefined;
    if (signal) this.hub = joinAbort(signal, this);
    if (deadlineMs > 0) this.timer = setTimeout(onDeadline, deadlineMs, this);
  }

  /** The caller's signal aborted (abort-hub.ts calls this). */
  notifyAbort(): void {
    this.cancel();
  }

  /** The attempt's deadline passed. */
  timedOut(): void {
    const { AxiosError } = httpLib().axios;
    this.fail(
      new AxiosError(`timeout of ${this.deadlineMs}ms exceeded (wall-clock)`, 'ETIMEDOUT', this.config, this.request),
    );
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
    const decoder = this.decoder!;
    decoder.on('data', (chunk: Buffer) => this.collect(chunk));
    decoder.on('error', (err: Error) =>
      this.fail(httpLib().axios.AxiosError.from(err, undefined, this.config, this.request, this.response)),
    );
    decoder.on('end', () => this.finish());
    decoder.on('drain', resume);
  }

  // After fail() has aborted the exchange undici calls nothing but onError: no guards below.
  onData(chunk: Buffer): boolean {
    const decoder = this.decoder;
    if (!decoder) {
      this.collect(chunk);
      return true;
    }
    if (this.firstDeflate && chunk.length > 0) {
      this.firstDeflate = false;
      // Deflate without a zlib header (some servers send raw deflate): add one, as axios does.
      if (chunk[0] !== 120) decoder.write(Buffer.from([120, 156]));
    }
    // Backpressure: undici pauses reading until the decoder drains.
    return decoder.write(chunk);
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
    // Counted on the decoded bytes, so a decompression bomb stops at maxContentLength.
    this.size += chunk.length;
    if (this.size > this.limit) return this.tooLarge();
    if (this.first === undefined) this.first = chunk;
    else if (this.chunks === undefined) this.chunks = [this.first, chunk];
    else this.chunks.push(chunk);
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
    const buf = this.chunks !== undefined ? Buffer.concat(this.chunks) : (this.first ?? Buffer.alloc(0));
    const config = this.config;
    if (config.responseType === 'arraybuffer') res.data = buf;
    else {
      const enc = config.responseEncoding;
      // Text in responseEncoding, a UTF-8 BOM stripped, as axios' http adapter gives it.
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
    this.first = undefined;
    this.chunks = undefined;
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.hub) leaveAbort(this.hub, this);
  }
}

function onDeadline(exchange: Exchange): void {
  exchange.timedOut();
}
