/**
 * A loopback node:http stub for the client's coverage tests (test/client/):
 * each test sets `handle` to answer as it needs (write an answer, hold it, or destroy the
 * socket), for faults neither the simulator nor the hostile server makes. Every request it
 * got is in `hits`; `received(n)` waits for the n-th one (no sleeping).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const DEV = 'dvc_a';
export const SITE = 'ste_a';
export const MEASUREMENT = (property = 'soc') => ({
  timestamp: Date.now(),
  property,
  value: 42,
  unit: '%',
  reference: DEV,
});

export interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Stub {
  url: string;
  readonly hits: Hit[];
  /** Answers each request: write to `res` (or hold it, or destroy its socket). */
  handle: (hit: Hit, res: http.ServerResponse) => void;
  /** Resolves when the stub has received `n` requests in all. */
  received(n: number): Promise<void>;
  close(): Promise<void>;
}

/** Writes an answer: a string as text/plain, anything else as JSON, undefined as an empty body. */
export function json(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  const raw = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain' : 'application/json',
    'content-length': Buffer.byteLength(raw),
    ...headers,
  });
  res.end(raw);
}

export async function startStub(handle: Stub['handle'] = (_h, res) => json(res, 200, MEASUREMENT())): Promise<Stub> {
  const sockets = new Set<Socket>();
  const waits: Array<{ n: number; resolve: () => void }> = [];
  const stub = { hits: [] as Hit[], handle } as Stub;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      stub.hits.push(hit);
      for (const w of waits.filter((x) => stub.hits.length >= x.n)) {
        waits.splice(waits.indexOf(w), 1);
        w.resolve();
      }
      stub.handle(hit, res);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stub.received = (n) =>
    stub.hits.length >= n ? Promise.resolve() : new Promise((resolve) => waits.push({ n, resolve }));
  stub.close = () =>
    new Promise((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return stub;
}

/** Settles a promise into a value or an error (for asserting on both without unhandled rejections). */
export async function outcome<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/** Waits a few turns of the event loop (for "is it still pending?" checks of in-process promises only). */
export async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}
