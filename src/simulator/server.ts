/**
 * The HTTP server of the simulator (node:http, keep-alive). Order of processing of an API
 * request: read the body (1 MB limit), decide faults (seeded; before anything is applied),
 * add latency, check credentials, route, validate, apply. Every response is JSON with an
 * `x-request-id` header; errors are `{message, requestId}`. A handler exception becomes a
 * 500; no input crashes the server.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { ValidationError } from '../protocol';
import { handleControl } from './control';
import type { FaultDecision } from './faults';
import { HttpError, parseJsonBody, readBody, sendJson } from './http-util';
import type { LogEntry } from './request-log';
import { PreSerialised } from './routes';
import type { Simulator } from './simulator';
import { TargetCache, type Target } from './request-targets';

export interface SimServer {
  server: Server;
  /** Stops listening, closes every connection (keep-alive ones too) and clears pending timers. */
  close(): Promise<void>;
}

function errorJson(message: string, requestId: string): string {
  return JSON.stringify({ message, requestId });
}

/** Status and message of a thrown value. */
function errorOf(e: unknown): {
  status: number;
  message: string;
  headers?: Record<string, string | number | string[]>;
} {
  if (e instanceof HttpError)
    return { status: e.status, message: e.message, headers: e.headers as Record<string, string> | undefined };
  if (e instanceof ValidationError) return { status: e.kind === 'unprocessable' ? 422 : 400, message: e.message };
  return { status: 500, message: `internal error: ${e instanceof Error ? e.message : String(e)}` };
}

function hasBody(req: IncomingMessage): boolean {
  const contentLength = req.headers['content-length'];
  return (contentLength !== undefined && contentLength !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** Whether the request carries the API key (x-api-key or Bearer) or a valid OAuth2 token. */
function authorised(req: IncomingMessage, sim: Simulator): boolean {
  if (sim.apiKey === undefined && !sim.oauth) return true;
  if (sim.apiKey !== undefined && req.headers['x-api-key'] === sim.apiKey) return true;
  const auth = req.headers.authorization;
  if (typeof auth !== 'string' || !/^bearer /i.test(auth)) return false;
  const token = auth.slice(7).trim();
  return token === sim.apiKey || (sim.oauth?.valid(token) ?? false);
}

/** Bodies larger than this are not kept in the log (it holds up to 10,000 entries). */
const LOG_BODY_LIMIT = 8 * 1024;

function bodyForLog(text: string): unknown {
  if (text === '') return undefined;
  if (text.length > LOG_BODY_LIMIT) return `[${Buffer.byteLength(text)} bytes, not kept]`;
  try {
    return JSON.parse(text);
  } catch {
    return text.length > 1000 ? text.slice(0, 1000) : text;
  }
}

type Headers = Record<string, string | number | string[]>;

/** An API request as read: its log entry (status set when answered), target and body text (null: over 1 MB). */
interface ApiRequest {
  entry: LogEntry;
  target: Target;
  text: string | null;
}

export function createSimServer(sim: Simulator): SimServer {
  const timers = new Set<NodeJS.Timeout>();
  const targets = new TargetCache(sim.routes);

  function control(
    req: IncomingMessage,
    res: ServerResponse,
    segments: readonly string[],
    query: string,
    requestId: string,
  ): void {
    const run = (text: string): void => {
      try {
        const out = handleControl(sim, req.method ?? 'GET', segments, parseJsonBody(text), query);
        sendJson(res, 200, JSON.stringify(out), requestId);
      } catch (e) {
        const err = errorOf(e);
        sendJson(res, err.status, errorJson(err.message, requestId), requestId, err.headers);
      }
    };
    if (!hasBody(req)) return run('');
    readBody(req)
      .then((b) =>
        b.ok
          ? run(b.text)
          : sendJson(res, 413, errorJson('request body exceeds 1 MB', requestId), requestId, { connection: 'close' }),
      )
      .catch((e) => sendJson(res, 500, errorJson(`internal error: ${(e as Error).message}`, requestId), requestId));
  }

  /**
   * Logs the answer and sends it. With added latency on a read (holdUntil > 0, a
   * performance.now() instant), the answer is held until then.
   */
  function respond(
    res: ServerResponse,
    entry: LogEntry,
    status: number,
    json: string,
    headers: Headers | undefined,
    holdUntil: number,
  ): void {
    entry.status = status;
    sim.log.add(entry);
    const wait = holdUntil === 0 ? 0 : holdUntil - performance.now();
    if (wait < 1) return sendJson(res, status, json, entry.requestId, headers);
    const timer = setTimeout(() => {
      timers.delete(timer);
      sendJson(res, status, json, entry.requestId, headers);
    }, wait);
    timers.add(timer);
  }

  function fail(
    res: ServerResponse,
    entry: LogEntry,
    holdUntil: number,
    status: number,
    message: string,
    headers?: Headers,
  ): void {
    respond(res, entry, status, errorJson(message, entry.requestId), headers, holdUntil);
  }

  /** Applies an API request once its fault is decided (null: faults off) and its latency, if any, has passed. */
  function apply(
    req: IncomingMessage,
    res: ServerResponse,
    request: ApiRequest,
    decision: FaultDecision | null,
    holdUntil: number,
  ): void {
    const { entry, text } = request;
    const { segments, match } = request.target;
    const { method, requestId } = entry;
    try {
      if (decision !== null && decision.kind !== 'none') {
        sim.log.countFault(decision.kind);
        const retry = { 'retry-after': String(sim.faults.config.retryAfterSeconds) };
        if (decision.kind === 'reset') {
          entry.status = 0;
          sim.log.add(entry);
          req.socket.destroy();
          return;
        }
        if (decision.kind === '500')
          return fail(res, entry, holdUntil, 500, 'simulated internal server error (fault injection)');
        if (decision.kind === '503')
          return fail(res, entry, holdUntil, 503, 'simulated service unavailable (fault injection)', retry);
        return fail(res, entry, holdUntil, 429, 'simulated rate limit: too many requests (fault injection)', retry);
      }
      if (
        sim.oauth &&
        method === 'POST' &&
        segments.length === 2 &&
        segments[0] === 'oauth' &&
        segments[1] === 'token'
      ) {
        const reply = sim.oauth.handle(req.headers['content-type'], text ?? '');
        return respond(res, entry, reply.status, JSON.stringify(reply.body), undefined, holdUntil);
      }
      if (!authorised(req, sim)) {
        return fail(
          res,
          entry,
          holdUntil,
          401,
          'missing or invalid credentials: send x-api-key: <key> or Authorization: Bearer <key>',
          { 'www-authenticate': 'Bearer' },
        );
      }
      if (text === null) return fail(res, entry, holdUntil, 413, 'request body exceeds 1 MB', { connection: 'close' });
      if (!match) return fail(res, entry, holdUntil, 404, `unknown route ${method} /${segments.join('/')}`);
      const handler = match.route.methods[method];
      if (!handler) {
        const allow = Object.keys(match.route.methods).join(', ');
        return fail(
          res,
          entry,
          holdUntil,
          405,
          `method ${method} not allowed on ${match.route.pattern}; allowed: ${allow}`,
          { allow },
        );
      }
      const out = handler({
        sim,
        params: match.params,
        query: request.target.query,
        body: parseJsonBody(text),
        requestId,
      });
      respond(res, entry, 200, out instanceof PreSerialised ? out.json : JSON.stringify(out), undefined, holdUntil);
    } catch (e) {
      const err = errorOf(e);
      fail(res, entry, holdUntil, err.status, err.message, err.headers);
    }
  }

  function api(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    requestId: string,
    text: string | null,
  ): void {
    const method = req.method ?? 'GET';
    const { segments, match } = target;
    const entry: LogEntry = {
      method,
      path: target.url,
      route: match ? (match.route.labels[method] ?? `${method} ${match.route.pattern}`) : 'unmatched',
      time: sim.clock.now(),
      status: 0,
      requestId,
    };
    // The token request carries the client secret: its body is never logged.
    if (text !== null && text !== '' && segments[0] !== 'oauth') entry.body = bodyForLog(text);
    const request: ApiRequest = { entry, target, text };
    if (!sim.faults.active) return apply(req, res, request, null, 0);
    const decision = sim.faults.decide();
    if (decision.delayMs <= 0) return apply(req, res, request, decision, 0);
    // Latency: the answer leaves delayMs after the request arrived. A read is answered at once
    // and held, like a service that works on parallel requests in parallel (this process has
    // one thread; answering after the delay would queue the answers of a burst one behind the
    // other). Steering and faults take effect only after the delay, as before.
    const isRead =
      decision.kind === 'none' &&
      (method === 'GET' || (method === 'POST' && match?.route.pattern.endsWith('/time-series')));
    if (isRead) return apply(req, res, request, decision, performance.now() + decision.delayMs);
    const timer = setTimeout(() => {
      timers.delete(timer);
      apply(req, res, request, decision, 0);
    }, decision.delayMs);
    timers.add(timer);
  }

  const server = createServer({ keepAlive: true }, (req, res) => {
    const requestId = sim.nextRequestId();
    try {
      const target = targets.get(req.url ?? '/');
      if (target.segments[0] === 'sim') return control(req, res, target.segments, target.query, requestId);
      if (!hasBody(req)) return api(req, res, target, requestId, '');
      readBody(req)
        .then((b) => api(req, res, target, requestId, b.ok ? b.text : null))
        .catch((e) => sendJson(res, 500, errorJson(`internal error: ${(e as Error).message}`, requestId), requestId));
    } catch (e) {
      const err = errorOf(e);
      sendJson(res, err.status, errorJson(err.message, requestId), requestId, err.headers);
    }
  });
  // Idle keep-alive sockets stay open longer than clients keep them (Node's agents: 4-5 s), as
  // production servers do, so a client never reuses a socket the server is just closing.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });

  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
