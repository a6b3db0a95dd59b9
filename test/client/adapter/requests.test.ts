/**
 * The transport under axios, run against axios' own http adapter (the reference) and the
 * undici adapter (the default): the same requests sent, the same answers and errors seen.
 * URLs and bodies, answers of every kind, redirects, proxies, keep-alive, error classes,
 * retries and OAuth2. Limits, deadlines, aborts and TLS: limits.test.ts.
 */
import assert from 'node:assert/strict';
import type { AxiosError, AxiosResponse } from 'axios';
import { ApiError, EmsClient, NetworkError, NotFoundError, ServerError } from '../../../src/client';
import { httpLib } from '../../../src/client/http-lib';
import { turns } from '../../helpers/stub-server';
import { ADAPTERS, closedPort, send, startServer, type TestServer } from '../../helpers/adapter-server';

for (const adapter of ADAPTERS) {
  describe(`client transport (${adapter} adapter): requests and answers`, () => {
    let server: TestServer;
    let client: EmsClient;
    beforeEach(async () => {
      server = await startServer();
      client = new EmsClient({ baseUrl: `${server.url}/v1/`, retries: 0, adapter });
    });
    afterEach(async () => {
      client.close();
      await server.close();
    });
    const ax = () => client.transport.axios;

    it('uses the adapter it was given', () => {
      assert.equal(client.transport.pool.name, adapter);
    });

    it('joins baseURL and url and serialises params as axios does', async () => {
      server.handle = (_h, res) => send(res, 200, {});
      await ax().get('/x', { params: { a: 'b c:$,', list: [1, 2], d: new Date(0), o: { x: 1 }, skip: undefined } });
      await ax().get('y?z=1', { params: { q: 2 } });
      assert.equal(
        server.hits[0].url,
        '/v1/x?a=b+c:$,&list%5B%5D=1&list%5B%5D=2&d=1970-01-01T00:00:00.000Z&o%5Bx%5D=1',
      );
      assert.equal(server.hits[1].url, '/v1/y?z=1&q=2');
    });

    it('sends JSON, string and Buffer bodies with their content-type and content-length', async () => {
      server.handle = (_h, res) => send(res, 200, {});
      await ax().post('/j', { a: 'ü' });
      await ax().put('/s', 'plain text', { headers: { 'content-type': 'text/plain' } });
      await ax().patch('/b', Buffer.from([0, 1, 2, 255]), { headers: { 'content-type': 'application/octet-stream' } });
      const [j, s, b] = server.hits;
      assert.deepEqual(
        [j.method, j.headers['content-type'], j.headers['content-length'], j.body.toString()],
        ['POST', 'application/json', '10', '{"a":"ü"}'],
      );
      assert.deepEqual(
        [s.method, s.headers['content-type'], s.headers['content-length'], s.body.toString()],
        ['PUT', 'text/plain', '10', 'plain text'],
      );
      assert.deepEqual(
        [b.method, b.headers['content-type'], b.headers['content-length'], [...b.body]],
        ['PATCH', 'application/octet-stream', '4', [0, 1, 2, 255]],
      );
      for (const h of server.hits) {
        assert.equal(h.headers['user-agent'], '@ems-partner/node-red');
        assert.equal(h.headers['accept-encoding'], 'gzip, compress, deflate, br');
      }
    });

    it('answers: parsed JSON, text, broken JSON as text, arraybuffer, 204, headers, set-cookie', async () => {
      server.handle = (h, res) => {
        if (h.url.endsWith('/json')) send(res, 200, { a: 1 }, { 'x-request-id': 'r1', 'set-cookie': ['a=1', 'b=2'] });
        else if (h.url.endsWith('/broken')) send(res, 200, '{"a":', { 'content-type': 'application/json' });
        else if (h.url.endsWith('/empty')) send(res, 204);
        else send(res, 200, '\ufeffhällo');
      };
      const json = await ax().get('/json');
      assert.deepEqual(
        [json.status, json.statusText, json.data, json.headers['x-request-id'], json.headers['set-cookie']],
        [200, 'OK', { a: 1 }, 'r1', ['a=1', 'b=2']],
      );
      assert.equal(json.headers['content-type'], 'application/json');
      assert.equal((await ax().get('/broken')).data, '{"a":', 'silentJSONParsing: the text as it came');
      assert.equal((await ax().get('/text', { responseType: 'text' })).data, 'hällo', 'utf8, BOM stripped');
      const bytes = (await ax().get('/text', { responseType: 'arraybuffer' })).data as Buffer;
      assert.ok(Buffer.isBuffer(bytes));
      assert.deepEqual(bytes, Buffer.from('\ufeffhällo'));
      const empty = await ax().get('/empty');
      assert.deepEqual([empty.status, empty.data], [204, '']);
    });

    it('a 4xx rejects carrying the answer; validateStatus decides', async () => {
      server.handle = (_h, res) => send(res, 404, { message: 'no such device', requestId: 'rq' });
      const err = await ax()
        .get('/missing')
        .catch((e: AxiosError) => e);
      assert.equal((err as AxiosError).code, 'ERR_BAD_REQUEST');
      assert.equal((err as AxiosError).message, 'Request failed with status code 404');
      assert.deepEqual((err as AxiosError).response?.data, { message: 'no such device', requestId: 'rq' });
      const ok = await ax().get('/missing', { validateStatus: () => true });
      assert.equal(ok.status, 404);
      await assert.rejects(
        client.raw('GET', '/missing'),
        (e: unknown) => e instanceof NotFoundError && e.serviceMessage === 'no such device' && e.requestId === 'rq',
      );
      server.handle = (_h, res) => send(res, 502, 'bad gateway');
      const e5 = await ax()
        .get('/x')
        .catch((e: AxiosError) => e);
      assert.equal((e5 as AxiosError).code, 'ERR_BAD_RESPONSE');
      await assert.rejects(client.raw('GET', '/x'), (e: unknown) => e instanceof ServerError && e.code === 'HTTP_502');
    });

    it('never follows a redirect: the 3xx comes back as it is', async () => {
      server.handle = (h, res) =>
        h.url.includes('/moved')
          ? send(res, 302, 'moved', { location: `${server.url}/v1/target` })
          : send(res, 200, {});
      const res: AxiosResponse = await ax().get('/moved', { validateStatus: () => true });
      assert.deepEqual([res.status, res.headers.location, res.data], [302, `${server.url}/v1/target`, 'moved']);
      await assert.rejects(client.raw('GET', '/moved'), (e: unknown) => e instanceof ApiError && e.status === 302);
      assert.ok(
        server.hits.every((h) => h.url === '/v1/moved'),
        'the target was never asked',
      );
    });

    it('never uses a proxy, whatever HTTP_PROXY says', async () => {
      const dead = await closedPort();
      const saved = { HTTP_PROXY: process.env.HTTP_PROXY, http_proxy: process.env.http_proxy };
      process.env.HTTP_PROXY = process.env.http_proxy = `http://127.0.0.1:${dead}`;
      try {
        const emsClient = new EmsClient({ baseUrl: server.url, retries: 0, adapter });
        server.handle = (_h, res) => send(res, 200, { via: 'direct' });
        assert.deepEqual((await emsClient.transport.axios.get('/x')).data, { via: 'direct' });
        assert.equal(server.hits[0].url, '/x', 'the origin form, not a proxy request');
        emsClient.close();
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
    });

    it('keeps connections alive: at most `concurrency` per origin', async () => {
      const emsClient = new EmsClient({ baseUrl: server.url, retries: 0, concurrency: 3, adapter });
      const held: Array<() => void> = [];
      server.handle = (_h, res) => held.push(() => send(res, 200, {}));
      const all = Promise.all(Array.from({ length: 12 }, () => emsClient.raw('GET', '/x')));
      await server.received(3);
      while (server.hits.length < 12) {
        held.splice(0).forEach((f) => f());
        await server.received(Math.min(12, server.hits.length + 1));
      }
      held.splice(0).forEach((f) => f());
      await all;
      assert.ok(server.connections >= 1 && server.connections <= 3, `${server.connections} connections`);
      const before = server.connections;
      server.handle = (_h, res) => send(res, 200, {});
      for (let i = 0; i < 5; i++) await emsClient.raw('GET', '/y');
      assert.equal(server.connections, before, 'sequential requests reuse the kept connections');
      // The pool alone (without the transport's concurrency slots) opens no more either.
      const bare = httpLib().axios.create({ baseURL: server.url, adapter: emsClient.transport.pool.adapter });
      const count = server.hits.length;
      server.handle = (_h, res) => held.push(() => send(res, 200, {}));
      const burst = Promise.all(Array.from({ length: 9 }, () => bare.get('/z')));
      await server.received(count + 3);
      await turns(20);
      assert.equal(server.hits.length, count + 3, 'three in flight, the others wait for a connection');
      server.handle = (_h, res) => send(res, 200, {});
      held.splice(0).forEach((f) => f());
      await burst;
      assert.equal(server.connections, before);
      emsClient.close();
    });

    it('a refused connection and a dropped one fail as NetworkErrors with the codes users see', async () => {
      const port = await closedPort();
      const emsClient = new EmsClient({ baseUrl: `http://127.0.0.1:${port}`, retries: 0, adapter });
      await assert.rejects(
        emsClient.raw('GET', '/x'),
        (e: unknown) =>
          e instanceof NetworkError &&
          e.code === 'ECONNREFUSED' &&
          e.message === `GET /x connection to 127.0.0.1:${port} failed (ECONNREFUSED)`,
      );
      emsClient.close();
      server.handle = (_h, _res, req) => req.socket.destroy();
      await assert.rejects(
        client.raw('GET', '/x'),
        (e: unknown) => e instanceof NetworkError && e.code === 'ECONNRESET',
      );
      const err = (await ax()
        .get('/x')
        .catch((e: AxiosError) => e)) as AxiosError;
      assert.deepEqual([err.code, err.message], ['ECONNRESET', 'socket hang up']);
      server.handle = (_h, res, req) => {
        res.writeHead(200, { 'content-length': '100' });
        res.write('{"a":');
        setImmediate(() => req.socket.destroy());
      };
      const cut = (await ax()
        .get('/x')
        .catch((e: AxiosError) => e)) as AxiosError;
      assert.deepEqual(
        [cut.code, cut.response?.status],
        ['ERR_BAD_RESPONSE', 200],
        'cut off mid-body: the answer so far is named',
      );
    });
  });

  describe(`client transport (${adapter} adapter): retries and OAuth2`, () => {
    let server: TestServer;
    beforeEach(async () => {
      server = await startServer();
    });
    afterEach(() => server.close());

    it('retries a read after a dropped connection and a 503, waiting out Retry-After', async () => {
      const client = new EmsClient({ baseUrl: server.url, retries: 3, retryBaseMs: 1, retryMaxMs: 2, adapter });
      server.handle = (h, res, req) => {
        const hitsBefore = server.hits.length;
        if (hitsBefore === 1) req.socket.destroy();
        else if (hitsBefore === 2) send(res, 503, { message: 'busy' }, { 'retry-after': '1' });
        else send(res, 200, { ok: h.url });
      };
      const res = await client.raw('GET', '/x');
      assert.deepEqual(res.payload, { ok: '/x' });
      assert.equal(server.hits.length, 3);
      assert.ok(server.hits[2].at - server.hits[1].at >= 900, 'the retry waited for Retry-After (1 s)');
      client.close();
    });

    it('never retries a steering POST on a 500, nor any request on a 4xx', async () => {
      const client = new EmsClient({ baseUrl: server.url, retries: 3, retryBaseMs: 1, retryMaxMs: 2, adapter });
      server.handle = (_h, res) => send(res, 500, { message: 'boom' });
      await assert.rejects(client.raw('POST', '/steer', { a: 1 }), (e: unknown) => e instanceof ServerError);
      assert.equal(server.hits.length, 1, 'POST sent once');
      server.handle = (_h, res) => send(res, 400, { message: 'bad' });
      await assert.rejects(client.raw('GET', '/x'), (e: unknown) => e instanceof ApiError && e.status === 400);
      assert.equal(server.hits.length, 2, 'the 400 was not retried');
      server.handle = (_h, res) => send(res, 500, { message: 'boom' });
      await assert.rejects(client.raw('GET', '/x'));
      assert.equal(server.hits.length, 6, 'a read is retried on a 500 (1 + 3 retries)');
      client.close();
    });

    it('fetches an OAuth2 token through the same transport and sends it as bearer', async () => {
      server.handle = (h, res) => {
        if (h.url === '/token') send(res, 200, { access_token: 'tok-1', expires_in: 3600 });
        else send(res, 200, { auth: h.headers.authorization });
      };
      const client = new EmsClient({
        baseUrl: server.url,
        adapter,
        auth: { type: 'oauth2', tokenUrl: `${server.url}/token`, clientId: 'id', clientSecret: 'sec' },
      });
      assert.deepEqual(
        (await client.raw('GET', '/x')).payload,
        { auth: 'Bearer ***' },
        'the token is masked in answers',
      );
      const token = server.hits[0];
      assert.deepEqual(
        [token.method, token.headers['content-type'], token.body.toString()],
        ['POST', 'application/x-www-form-urlencoded', 'grant_type=client_credentials&client_id=id&client_secret=sec'],
      );
      assert.equal(server.hits[1].headers.authorization, 'Bearer tok-1');
      client.close();
    });
  });
}
