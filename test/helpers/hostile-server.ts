/**
 * A hostile partner service: a raw node:http server on 127.0.0.1 port 0 that answers in a
 * chosen mode (bad shapes, no body, HTML, broken JSON, "NaN" values, endless, huge or
 * dripping bodies, a 100,000-item list, secrets echoed back in every encoding). Big bodies
 * are streamed from one reused buffer, never allocated whole; every timer and socket it
 * opens is closed by close().
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type HostileMode =
  | 'ok' // well-formed answers for every endpoint
  | 'empty-object' // 200 {}
  | 'null' // 200 null
  | 'html' // 200 text/html maintenance page
  | 'broken-json' // 200 application/json, cut off
  | 'no-content' // 204
  | 'nan' // well-formed, but numbers as strings ("NaN", "65")
  | 'endless' // 200, a chunked body that never ends, one small chunk every few ms (never idle)
  | 'flood' // 200, a chunked body that never ends, as fast as the socket takes it
  | 'huge' // 200 with a 200 MB body (content-length set)
  | 'drip' // 200, then one byte per dripMs
  | 'silent' // never answers
  | 'huge-list' // list and map answers with listItems (100,000) items
  | 'html-error' // 502 with an HTML error page
  | 'echo'; // 401 echoing every credential it got, in every encoding; steering 200 echoing them deep

export interface HostileOptions {
  mode?: HostileMode;
  /** Milliseconds between bytes in 'drip' mode (default 1000). */
  dripMs?: number;
  /** Milliseconds between 1 KB chunks in 'endless' mode (default 5). */
  trickleMs?: number;
  /** Body size of 'huge' (default 200 MB). */
  hugeBytes?: number;
  /** Items of 'huge-list' (default 100,000). */
  listItems?: number;
  /** The OAuth2 client secret the token endpoint accepts, and the token it issues. */
  clientSecret?: string;
  token?: string;
}

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
}

export interface HostileServer {
  url: string;
  port: number;
  /** The mode for every path without an override. */
  mode: HostileMode;
  /** Answers paths matching `re` in `mode` instead (first match wins); clearOverrides() drops them. */
  override(re: RegExp, mode: HostileMode): void;
  clearOverrides(): void;
  readonly received: Received[];
  /** Bytes written into response bodies so far. */
  readonly bytesSent: number;
  /** Sockets open now. */
  openSockets(): number;
  /** Token requests answered with a token. */
  tokensIssued: number;
  close(): Promise<void>;
}

/** The forms of a secret a hostile service might send back: raw, URL-encoded, form-encoded, base64, base64url. */
export function formsOf(secret: string): string[] {
  const b64 = Buffer.from(secret).toString('base64');
  return [
    ...new Set([
      secret,
      encodeURIComponent(secret),
      new URLSearchParams({ s: secret }).toString().slice(2),
      b64,
      b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
    ]),
  ];
}

const HTML =
  '<!DOCTYPE html>\n<html><head><title>Service Unavailable - maintenance</title><style>body{font:14px sans-serif}</style></head>\n' +
  '<body><h1>We will be back soon</h1><p>Our API is down for maintenance.</p></body></html>\n';

const CHUNK = Buffer.alloc(64 * 1024, 0x20); // spaces: valid JSON whitespace, never a complete answer

function send(
  res: http.ServerResponse,
  status: number,
  body: string,
  type = 'application/json',
  headers: http.OutgoingHttpHeaders = {},
): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** The device reference and the property names of a measurement path. */
function parts(url: URL): { ref: string; props: string[] } {
  const ref = decodeURIComponent(url.pathname.split('/')[2] ?? 'dvc_a');
  const props = (url.searchParams.get('properties') ?? url.searchParams.get('property') ?? 'soc')
    .split(',')
    .filter(Boolean);
  return { ref, props };
}

/** A well-formed answer for the path (bad = numbers as strings). */
function good(method: string, url: URL, body: unknown, bad: boolean): unknown {
  const route = url.pathname;
  const value = (n: number) => (bad ? (n === 65 ? 'NaN' : String(n)) : n);
  if (route === '/devices') return [{ deviceReference: 'dvc_a', properties: { soc: '%', power: 'W' } }];
  if (route === '/sites')
    return { sites: [{ siteReference: 'ste_a', name: 'A', devices: [{ deviceReference: 'dvc_a', kind: 'battery' }] }] };
  if (/^\/devices\/[^/]+\/measurement$/.test(route)) {
    const { ref, props } = parts(url);
    return { timestamp: Date.now(), property: props[0], value: value(65), unit: '%', reference: ref };
  }
  if (/^\/devices\/[^/]+\/measurements\/map$/.test(route)) {
    const { ref, props } = parts(url);
    return { reference: ref, measurements: Object.fromEntries(props.map((k) => [k, { value: value(65), unit: '%' }])) };
  }
  if (/^\/devices\/[^/]+\/measurements$/.test(route)) {
    const { ref, props } = parts(url);
    return {
      reference: ref,
      measurements: props.map((k) => ({ timestamp: Date.now(), property: k, value: value(65), unit: '%' })),
    };
  }
  if (route.endsWith('/time-series')) {
    const start = Date.parse((body as { range?: { start?: string } })?.range?.start ?? '') || Date.now() - 3_600_000;
    return { time: [new Date(start).toISOString().replace(/\.\d{3}Z$/, 'Z')], data: [value(65)] };
  }
  if (method === 'DELETE') return { requestId: 'req_1', cancelled: true };
  if (route.startsWith('/sites/')) return { ...(body as object), requestId: 'req_1' };
  return { message: 'not found' };
}

let listCache: { n: number; list: string; map: string } | undefined;

function hugeList(n: number, ref: string): { list: string; map: string } {
  if (!listCache || listCache.n !== n) {
    const now = Date.now();
    const items: string[] = [];
    const entries: string[] = [];
    for (let i = 0; i < n; i++) {
      items.push(`{"timestamp":${now},"property":"p${i}","value":${i},"unit":"W"}`);
      entries.push(`"p${i}":{"value":${i},"unit":"W"}`);
    }
    listCache = { n, list: `,"measurements":[${items.join(',')}]}`, map: `,"measurements":{${entries.join(',')}}}` };
  }
  return {
    list: `{"reference":${JSON.stringify(ref)}${listCache.list}`,
    map: `{"reference":${JSON.stringify(ref)}${listCache.map}`,
  };
}

export async function startHostile(opts: HostileOptions = {}): Promise<HostileServer> {
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  const overrides: Array<[RegExp, HostileMode]> = [];
  let bytesSent = 0;

  const every = (res: http.ServerResponse, ms: number, fn: () => boolean) => {
    const timer = setInterval(() => {
      if (res.destroyed || !fn()) {
        clearInterval(timer);
        timers.delete(timer);
      }
    }, ms);
    timers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  };

  /** Writes `total` bytes (Infinity: until the client goes) as fast as the socket takes them. */
  const stream = (res: http.ServerResponse, total: number) => {
    let left = total;
    const pump = () => {
      while (left > 0 && !res.destroyed) {
        const size = Math.min(CHUNK.length, left);
        left -= size;
        bytesSent += size;
        if (!res.write(size === CHUNK.length ? CHUNK : CHUNK.subarray(0, size))) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  };

  const echoForms = (req: http.IncomingMessage, extra: string[] = []): string[] => {
    const creds = [...extra];
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v !== 'string') continue;
      if (k === 'authorization') creds.push(v, v.replace(/^Bearer /, ''));
      else if (
        !['host', 'accept', 'user-agent', 'content-type', 'content-length', 'connection', 'accept-encoding'].includes(k)
      )
        creds.push(v);
    }
    const out = creds.flatMap(formsOf);
    // The whole header block, base64-encoded: the secret sits in it at any byte alignment.
    out.push(Buffer.from(JSON.stringify(req.headers)).toString('base64'));
    return out;
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse, text: string) => {
    const url = new URL(req.url ?? '/', 'http://x');
    api.received.push({ method: req.method ?? '', path: url.pathname, headers: req.headers });
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }

    if (url.pathname === '/oauth/token') {
      const form = new URLSearchParams(text);
      const secret = form.get('client_secret') ?? '';
      if (opts.clientSecret !== undefined && secret === opts.clientSecret) {
        api.tokensIssued++;
        return send(
          res,
          200,
          JSON.stringify({ access_token: opts.token ?? 'tok/EN+abc==', token_type: 'Bearer', expires_in: 3600 }),
        );
      }
      const forms = formsOf(secret).join(' ');
      return send(
        res,
        401,
        JSON.stringify({ error: 'invalid_client', error_description: `wrong secret ${forms}`, requestId: forms }),
        'application/json',
        { 'x-request-id': formsOf(secret)[1] },
      );
    }

    const mode = overrides.find(([re]) => re.test(url.pathname))?.[1] ?? api.mode;
    const method = req.method ?? 'GET';
    switch (mode) {
      case 'ok':
        return send(res, 200, JSON.stringify(good(method, url, body, false)));
      case 'nan':
        return send(res, 200, JSON.stringify(good(method, url, body, true)));
      case 'empty-object':
        return send(res, 200, '{}');
      case 'null':
        return send(res, 200, 'null');
      case 'html':
        return send(res, 200, HTML, 'text/html');
      case 'html-error':
        return send(res, 502, HTML, 'text/html');
      case 'broken-json':
        return send(res, 200, '{"reference":"dvc_a","measurements":[{"timestamp":17194744', 'application/json');
      case 'no-content':
        res.writeHead(204);
        return void res.end();
      case 'silent':
        return;
      case 'huge': {
        const total = opts.hugeBytes ?? 200 * 1024 * 1024;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': total });
        return stream(res, total);
      }
      case 'flood':
        res.writeHead(200, { 'content-type': 'application/json' });
        return stream(res, Number.POSITIVE_INFINITY);
      case 'endless': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const kb = CHUNK.subarray(0, 1024);
        res.write('[');
        return every(res, opts.trickleMs ?? 5, () => {
          bytesSent += kb.length;
          res.write(kb);
          return true;
        });
      }
      case 'drip': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const text = JSON.stringify(good(method, url, body, false));
        let position = 0;
        return every(res, opts.dripMs ?? 1000, () => {
          bytesSent++;
          res.write(text[position++] ?? ' ');
          return true;
        });
      }
      case 'huge-list': {
        const { ref } = parts(url);
        const big = hugeList(opts.listItems ?? 100_000, ref);
        if (url.pathname.endsWith('/measurements')) return send(res, 200, big.list);
        if (url.pathname.endsWith('/map')) return send(res, 200, big.map);
        return send(res, 200, JSON.stringify(good(method, url, body, false)));
      }
      case 'echo': {
        const forms = echoForms(req);
        if (method === 'POST' && url.pathname.startsWith('/sites/')) {
          // A steering answer that echoes the request's credentials deep inside.
          return send(
            res,
            200,
            JSON.stringify({
              ...(body as object),
              requestId: forms.join(' '),
              echo: { headers: req.headers, nested: [[forms], { deeper: forms.join('|') }] },
            }),
          );
        }
        return send(
          res,
          401,
          JSON.stringify({ message: `unauthorized: ${forms.join(' ')}`, requestId: forms.join(' ') }),
          'application/json',
          { 'x-request-id': forms.filter((f) => /^[\x21-\x7e]+$/.test(f)).join(',') },
        );
      }
    }
  };

  const api: HostileServer = {
    url: '',
    port: 0,
    mode: opts.mode ?? 'ok',
    override: (re, mode) => {
      overrides.push([re, mode]);
    },
    clearOverrides: () => {
      overrides.length = 0;
    },
    received: [],
    get bytesSent() {
      return bytesSent;
    },
    openSockets: () => sockets.size,
    tokensIssued: 0,
    async close() {
      for (const t of timers) clearInterval(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 1024 * 1024) chunks.push(c);
    });
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => undefined);
    res.on('error', () => undefined);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.port = (server.address() as AddressInfo).port;
  api.url = `http://127.0.0.1:${api.port}`;
  return api;
}
