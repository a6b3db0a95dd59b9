/**
 * An axios adapter on undici (Node's own HTTP client project): axios stays the client (its
 * config, interceptors, transforms and axios-retry); only the transport under it changes.
 * It behaves as axios' own http adapter does for everything this package uses, at about half
 * its CPU per read (BENCHMARKS.md, benchmark 1). Redirects are never followed (a 3xx is an
 * answer like any other) and no proxy is ever used (undici's Agent reads no HTTP_PROXY).
 * The answer side (status, headers, decoding, maxContentLength, errors): undici-exchange.ts.
 */
import type { Readable } from 'node:stream';
import type { AxiosAdapter, AxiosResponse } from 'axios';
import type { Dispatcher } from 'undici';
import { httpLib, methodName } from './http-lib';
import { isAborted } from './abort-hub';
import { type AdapterRequest, type Config, Exchange } from './undici-exchange';
import { fullPathOf, relativeTargetOf, targetOf } from './undici-target';

export { fullPathOf, targetOf };

/** What axios' http adapter accepts by default. */
const ACCEPT_ENCODING = 'gzip, compress, deflate, br';

/**
 * What a request header name is to the adapter (compared without case): 1 user-agent, 2
 * accept-encoding, 3 content-length, 0 any other. Only a name of one of their lengths is lower-cased.
 */
function headerKind(name: string): number {
  const length = name.length;
  if (length !== 10 && length !== 14 && length !== 15) return 0;
  const lower = name.toLowerCase();
  if (lower === 'user-agent') return 1;
  if (lower === 'accept-encoding') return 2;
  return lower === 'content-length' ? 3 : 0;
}

/**
 * The request body as bytes or a stream (string, Buffer, ArrayBuffer, typed array or stream),
 * or undefined for a form undici cannot send.
 */
function bodyOf(data: unknown): string | Buffer | Readable | undefined {
  if (data === undefined || data === null) return undefined;
  if (typeof data === 'string' || Buffer.isBuffer(data)) return data;
  // axios' transformRequest has made a typed array its ArrayBuffer.
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (typeof (data as Readable).pipe === 'function') return data as Readable;
  return undefined;
}

/** Options of the adapter that are not per request. */
export interface UndiciAdapterOptions {
  /** axios' VERSION, for the user-agent axios sends when none is set. */
  version: string;
  /**
   * The wall-clock deadline of each attempt, ms (0 or none: no deadline). One timer in the
   * exchange, cleared as it settles; when it passes the attempt fails as a timeout (ETIMEDOUT).
   */
  deadlineMs?: number;
}

/** The axios adapter sending through `dispatcher` (an undici Agent: one pool of connections per origin). */
export function undiciAdapter(dispatcher: Dispatcher, o: UndiciAdapterOptions): AxiosAdapter {
  const userAgent = `axios/${o.version}`;
  const deadlineMs = o.deadlineMs !== undefined && o.deadlineMs > 0 ? o.deadlineMs : 0;
  return (cfg) =>
    new Promise<AxiosResponse>((resolve, reject) => {
      const config = cfg as Config;
      const { AxiosError, CanceledError } = httpLib().axios;
      // URL: baseURL + url (allowAbsoluteUrls), params through axios' own serializer. The package's own
      // requests (a plain absolute path, no params) skip joining and re-splitting the URL.
      let url = config.params ? undefined : relativeTargetOf(config.baseURL, config.url);
      if (!url) {
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
        url = targetOf(full, config.params ? undefined : config.baseURL);
      }
      const method = methodName(config.method ?? 'get');
      const request: AdapterRequest = { method, path: url.path, host: url.host, protocol: url.protocol };
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        return reject(new AxiosError(`Unsupported protocol ${url.protocol}`, AxiosError.ERR_BAD_REQUEST, config));
      }
      // Rejected as ERR_NOT_SUPPORT: none is used by this package.
      const unsupported = config as Config & {
        onUploadProgress?: unknown;
        onDownloadProgress?: unknown;
        maxRate?: unknown;
        socketPath?: unknown;
      };
      if (
        unsupported.responseType === 'stream' ||
        unsupported.onUploadProgress ||
        unsupported.onDownloadProgress ||
        unsupported.maxRate ||
        unsupported.socketPath
      ) {
        return reject(
          new AxiosError(
            'responseType stream, progress callbacks, maxRate and socketPath are not supported by the undici adapter',
            AxiosError.ERR_NOT_SUPPORT,
            config,
          ),
        );
      }
      // Already aborted: nothing is sent (an abort in flight is the exchange's).
      if (isAborted(config.signal as AbortSignal | undefined))
        return reject(new CanceledError(undefined, config, request));
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
      // Name, value, name, value...: undici takes them as they are, where an object would cost a
      // store under a new name per header here and an Object.keys there.
      const headers: Array<string | string[]> = [];
      let hasAgent = false;
      let hasEncoding = false;
      const givenHeaders = config.headers as unknown as Record<string, unknown>;
      // Own enumerable names, as for-in with an own-property check gives them, without walking the prototype.
      const names = Object.keys(givenHeaders);
      for (let i = 0; i < names.length; i++) {
        const name = names[i];
        const value = givenHeaders[name];
        if (value === undefined || value === null || value === false) continue;
        const kind = headerKind(name);
        if (kind === 1) hasAgent = true;
        else if (kind === 2) hasEncoding = true;
        else if (kind === 3) continue; // from the body, as axios sets it
        headers.push(name, Array.isArray(value) ? value.map(String) : String(value));
      }
      if (!hasAgent) headers.push('User-Agent', userAgent);
      if (!hasEncoding) headers.push('Accept-Encoding', ACCEPT_ENCODING);
      if (typeof body === 'string' || Buffer.isBuffer(body)) {
        const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
        const maxBody = config.maxBodyLength;
        if (typeof maxBody === 'number' && maxBody > -1 && length > maxBody) {
          return reject(
            new AxiosError('Request body larger than maxBodyLength limit', AxiosError.ERR_BAD_REQUEST, config),
          );
        }
        headers.push('Content-Length', String(length));
      }
      const auth =
        config.auth ??
        (url.username || url.password
          ? { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) }
          : undefined);
      if (auth) {
        for (let i = headers.length - 2; i >= 0; i -= 2) {
          if ((headers[i] as string).toLowerCase() === 'authorization') headers.splice(i, 2);
        }
        headers.push(
          'Authorization',
          `Basic ${Buffer.from(`${auth.username ?? ''}:${auth.password ?? ''}`).toString('base64')}`,
        );
      }
      const exchange = new Exchange(config, request, resolve, reject, deadlineMs);
      dispatcher.dispatch(
        {
          origin: url.origin,
          path: request.path,
          method: method as Dispatcher.HttpMethod,
          headers: headers as string[],
          body,
        },
        exchange as unknown as Dispatcher.DispatchHandler,
      );
    });
}
