/**
 * HTTP plumbing shared by the server: typed HTTP errors, JSON responses, bounded body reading.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** An error with an HTTP status; the message goes to the client as `{message, requestId}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers?: OutgoingHttpHeaders,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Maximum request body (413 beyond). */
const BODY_LIMIT = 1024 * 1024;
/** Beyond this, the connection is dropped instead of draining the body. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

export function sendJson(
  res: ServerResponse,
  status: number,
  json: string,
  requestId: string,
  extra?: OutgoingHttpHeaders,
): void {
  if (res.headersSent || res.destroyed) return;
  const headers: OutgoingHttpHeaders = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
    'x-request-id': requestId,
  };
  if (extra) Object.assign(headers, extra);
  res.writeHead(status, headers);
  res.end(json);
}

export type BodyResult = { ok: true; text: string } | { ok: false; tooLarge: true };

/**
 * Reads the request body as UTF-8 text, at most BODY_LIMIT bytes. A larger body is drained
 * and reported as too large; a huge one makes the connection drop.
 */
export function readBody(req: IncomingMessage): Promise<BodyResult> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (declared > DRAIN_LIMIT) {
      resolve({ ok: false, tooLarge: true });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > DRAIN_LIMIT) {
        req.destroy();
        return;
      }
      if (size > BODY_LIMIT) over = true;
      else chunks.push(c);
    });
    req.on('end', () =>
      resolve(over ? { ok: false, tooLarge: true } : { ok: true, text: Buffer.concat(chunks).toString('utf8') }),
    );
    req.on('error', () => resolve({ ok: false, tooLarge: true }));
    req.on('close', () =>
      resolve(over ? { ok: false, tooLarge: true } : { ok: true, text: Buffer.concat(chunks).toString('utf8') }),
    );
  });
}

/** Parses a JSON body. Empty text gives undefined; invalid JSON is a 400. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HttpError(400, `body is not valid JSON: ${(e as Error).message}`);
  }
}

/** Splits "/a/b?x=1" into decoded path segments (empty ones dropped) and the raw query string. */
export function splitUrl(url: string): { segments: string[]; query: string } {
  const queryAt = url.indexOf('?');
  const end = queryAt === -1 ? url.length : queryAt;
  const segments: string[] = [];
  let pos = 0;
  while (pos < end) {
    let slash = url.indexOf('/', pos);
    if (slash === -1 || slash > end) slash = end;
    if (slash > pos) segments.push(segment(url.slice(pos, slash)));
    pos = slash + 1;
  }
  return { segments, query: queryAt === -1 ? '' : url.slice(queryAt + 1) };
}

function segment(part: string): string {
  if (!part.includes('%')) return part;
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, `malformed path segment ${JSON.stringify(part.slice(0, 40))}`);
  }
}
