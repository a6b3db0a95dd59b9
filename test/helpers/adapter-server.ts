/**
 * A loopback server (http, or https with the test certificates) for the transport's adapter
 * tests (test/client/adapter/): each test sets `handle`; every request it got is in
 * `hits` (with its body), every TCP connection it accepted is counted in `connections`, and
 * `received(n)` waits for the n-th request (no sleeping). The adapters each test runs against
 * are in ADAPTERS.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import type { HttpAdapterName } from '../../src/client/http-pool';

/** Every behaviour test runs against axios' own http adapter (the reference) and ours. */
export const ADAPTERS: readonly HttpAdapterName[] = ['http', 'undici'];

export interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

export interface TestServer {
  url: string;
  readonly hits: Hit[];
  /** TCP (or TLS) connections accepted so far. */
  connections: number;
  handle: (hit: Hit, res: http.ServerResponse, req: http.IncomingMessage) => void;
  received(n: number): Promise<void>;
  close(): Promise<void>;
}

const tlsDir = path.join(__dirname, '..', 'fixtures', 'tls');
export const tlsFile = (f: string): string => fs.readFileSync(path.join(tlsDir, f), 'utf8');

export async function startServer(o: { tls?: boolean } = {}): Promise<TestServer> {
  const sockets = new Set<Socket>();
  const waits: Array<{ n: number; resolve: () => void }> = [];
  const testServer = {
    hits: [] as Hit[],
    connections: 0,
    handle: (_h: Hit, res: http.ServerResponse) => void res.end('{}'),
  } as unknown as TestServer;
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      };
      testServer.hits.push(hit);
      for (const w of waits.filter((x) => testServer.hits.length >= x.n)) {
        waits.splice(waits.indexOf(w), 1);
        w.resolve();
      }
      testServer.handle(hit, res, req);
    });
  };
  const server = o.tls
    ? https.createServer({ key: tlsFile('server-key.pem'), cert: tlsFile('server.pem') }, onRequest)
    : http.createServer(onRequest);
  server.on(o.tls ? 'secureConnection' : 'connection', (sock: Socket) => {
    testServer.connections++;
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  testServer.url = `${o.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  testServer.received = (n) =>
    testServer.hits.length >= n ? Promise.resolve() : new Promise((resolve) => waits.push({ n, resolve }));
  testServer.close = () =>
    new Promise((r) => {
      for (const sock of sockets) sock.destroy();
      server.close(() => r());
    });
  return testServer;
}

/** Writes a JSON answer (or text for a string, bytes for a Buffer). */
export function send(
  res: http.ServerResponse,
  status: number,
  body?: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  const raw =
    body === undefined ? '' : Buffer.isBuffer(body) ? body : typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': typeof body === 'string' || Buffer.isBuffer(body) ? 'text/plain' : 'application/json',
    'content-length': Buffer.byteLength(raw),
    ...headers,
  });
  res.end(raw);
}

/** A port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}
