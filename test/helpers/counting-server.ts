/**
 * A loopback node:http server on 127.0.0.1 port 0 that records (counts) every request it gets
 * and answers with `answer` (default: 200 JSON echoing the method, URL, headers and body). For
 * tests that prove what was sent, and that nothing was: its `requests` list is every request
 * that reached it, whatever the path.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Seen {
  method: string;
  /** Path and query as received. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status?: number;
  headers?: http.OutgoingHttpHeaders;
  /** A string or Buffer as is; anything else as JSON. */
  body?: unknown;
}

export interface CountingServer {
  url: string;
  readonly requests: Seen[];
  /** Replaces the answer for the requests to come. */
  answer: (req: Seen) => Answer;
  close(): Promise<void>;
}

export const echo = (req: Seen): Answer => ({
  body: { method: req.method, url: req.url, headers: req.headers, body: req.body },
});

export function startCounting(answer: (req: Seen) => Answer = echo): Promise<CountingServer> {
  const sockets = new Set<Socket>();
  const api = { requests: [] as Seen[], answer } as CountingServer;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size < 100_000) chunks.push(c);
    });
    req.on('end', () => {
      const seen: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      api.requests.push(seen);
      let answer: Answer;
      try {
        answer = api.answer(seen);
      } catch (e) {
        answer = { status: 500, body: { message: String(e) } };
      }
      const raw =
        answer.body === undefined
          ? ''
          : typeof answer.body === 'string' || Buffer.isBuffer(answer.body)
            ? answer.body
            : JSON.stringify(answer.body);
      const type =
        typeof answer.body === 'string' || Buffer.isBuffer(answer.body) || answer.body === undefined
          ? 'text/plain'
          : 'application/json';
      res.writeHead(answer.status ?? 200, {
        'content-type': type,
        'content-length': Buffer.byteLength(raw),
        ...answer.headers,
      });
      res.end(raw);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      api.close = () =>
        new Promise((r) => {
          for (const s of sockets) s.destroy();
          server.close(() => r());
        });
      resolve(api);
    });
  });
}
