/**
 * The transport under axios, against axios' own http adapter (the reference) and the undici
 * adapter: the less common forms of a request and an answer (bytes and streams as bodies, basic
 * authentication, URL forms, encodings, HEAD, 1xx answers, repeated headers, a request waiting
 * for a connection when it is aborted); what the undici adapter refuses; its error mapping.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { AxiosError, AxiosInstance } from 'axios';
import { EmsClient } from '../../../src/client';
import { httpLib } from '../../../src/client/http-lib';
import { undiciParts } from '../../../src/client/http-pool';
import { undiciError } from '../../../src/client/undici-errors';
import { ADAPTERS, send, startServer, type TestServer } from '../../helpers/adapter-server';

const failure = (p: Promise<unknown>) =>
  p.then(
    () => assert.fail('resolved'),
    (e: AxiosError) => e,
  );

for (const adapter of ADAPTERS) {
  describe(`client transport (${adapter} adapter): less common forms`, () => {
    let server: TestServer;
    let client: EmsClient;
    let ax: AxiosInstance;
    beforeEach(async () => {
      server = await startServer();
      server.handle = (_h, res) => send(res, 200, { ok: true });
      client = new EmsClient({ baseUrl: `${server.url}/v1//`, retries: 0, concurrency: 1, adapter });
      ax = client.transport.axios;
    });
    afterEach(async () => {
      client.close();
      await server.close();
    });

    it('sends ArrayBuffer, typed array and stream bodies', async () => {
      await ax.post('/a', new Uint8Array([1, 2, 3]).buffer, {
        headers: { 'content-type': 'application/octet-stream' },
      });
      await ax.post('/t', new Uint8Array([4, 5]), { headers: { 'content-type': 'application/octet-stream' } });
      await ax.post('/s', Readable.from([Buffer.from('str'), Buffer.from('eam')]), {
        headers: { 'content-type': 'text/plain' },
      });
      assert.deepEqual(
        server.hits.map((h) => [h.url, [...h.body]]),
        [
          ['/v1/a', [1, 2, 3]],
          ['/v1/t', [4, 5]],
          ['/v1/s', [...Buffer.from('stream')]],
        ],
      );
      assert.equal(server.hits[0].headers['content-length'], '3');
    });

    it('refuses data that cannot be sent, an unsupported protocol and a URL that does not parse; nothing is sent', async () => {
      const bad = await failure(ax.post('/x', { a: 1 }, { transformRequest: [(d: unknown) => d] }));
      assert.deepEqual(
        [bad.code, bad.message],
        ['ERR_BAD_REQUEST', 'Data after transformation must be a string, an ArrayBuffer, a Buffer, or a Stream'],
      );
      const ftp = await failure(ax.get('ftp://127.0.0.1/x'));
      assert.equal(ftp.code, 'ERR_BAD_REQUEST');
      const url = (await failure(ax.get('http://[::1/x'))) as unknown as Error & { code?: string };
      assert.deepEqual([url.name, url.code], ['TypeError', 'ERR_INVALID_URL']);
      const params = await failure(
        ax.get('/p', {
          params: { a: 1 },
          paramsSerializer: {
            serialize: () => {
              throw new Error('no');
            },
          },
        }),
      );
      assert.equal(params.code, 'ERR_BAD_REQUEST');
      assert.equal(server.hits.length, 0);
    });

    it('URL forms: empty url, trailing slashes, absolute urls kept below baseURL when not allowed, credentials and auth as basic authentication', async () => {
      await ax.request({});
      await ax.get(`${server.url}/elsewhere`, { allowAbsoluteUrls: false });
      await ax.get('/b', {
        auth: { username: 'user', password: 'pä ss' },
        headers: { authorization: 'Bearer dropped' },
      });
      const port = new URL(server.url).port;
      await ax.get(`http://u%40x:p%3Aw@127.0.0.1:${port}/cred`);
      assert.deepEqual(
        server.hits.slice(0, 2).map((h) => h.url),
        ['/v1', `/v1/${server.url}/elsewhere`],
      );
      assert.equal(server.hits[2].headers.authorization, `Basic ${Buffer.from('user:pä ss').toString('base64')}`);
      assert.equal(server.hits[3].headers.authorization, `Basic ${Buffer.from('u@x:p:w').toString('base64')}`);
    });

    it('headers set by the caller: accept-encoding and user-agent kept, a list sent as separate lines, one set false not sent', async () => {
      await ax.post('/h', 'abc', {
        headers: { 'accept-encoding': 'identity', 'user-agent': 'me', 'x-list': ['1', '2'], 'x-gone': false as never },
      });
      const headers = server.hits[0].headers;
      assert.deepEqual(
        [
          headers['accept-encoding'],
          headers['user-agent'],
          headers['x-list'],
          headers['content-length'],
          headers['x-gone'],
        ],
        ['identity', 'me', '1, 2', '3', undefined],
      );
    });

    it('answers: latin1, HEAD of an encoded answer, identity, 103 before the answer, repeated headers', async () => {
      server.handle = (h, res) => {
        if (h.url.endsWith('/latin1')) return send(res, 200, Buffer.from([0x68, 0xe9]));
        if (h.url.endsWith('/head')) {
          res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
          return res.end();
        }
        if (h.url.endsWith('/identity')) return send(res, 200, { plain: true }, { 'content-encoding': 'identity' });
        if (h.url.endsWith('/hints')) res.writeEarlyHints({ link: '</x.css>; rel=preload' });
        res.setHeader('x-many', ['a', 'b']);
        res.setHeader('etag', ['"1"', '"2"']);
        send(res, 200, { ok: 1 });
      };
      assert.equal((await ax.get('/latin1', { responseType: 'text', responseEncoding: 'latin1' })).data, 'hé');
      const head = await ax.head('/head');
      assert.deepEqual([head.status, head.data, head.headers['content-encoding']], [200, '', undefined]);
      const identity = await ax.get('/identity');
      assert.deepEqual(
        [identity.data, identity.headers['content-encoding']],
        [{ plain: true }, 'identity'],
        'an encoding it does not decode is left as it is',
      );
      const hinted = await ax.get('/hints');
      assert.deepEqual(
        [hinted.status, hinted.data, hinted.headers['x-many'], hinted.headers.etag],
        [200, { ok: 1 }, 'a, b', '"1"'],
      );
    });

    it('a gzip answer read with decompress off stays as it came', async () => {
      const gz = zlib.gzipSync('{"a":1}');
      server.handle = (_h, res) => send(res, 200, gz, { 'content-encoding': 'gzip' });
      const res = await ax.get('/gz', { decompress: false, responseType: 'arraybuffer' });
      assert.deepEqual(res.data, gz);
      assert.equal(res.headers['content-encoding'], 'gzip');
    });

    it('a request aborted while it waits for a connection is never sent', async () => {
      const bare = httpLib().axios.create({ baseURL: server.url, adapter: client.transport.pool.adapter });
      let release = () => undefined as void;
      server.handle = (_h, res) => {
        release = () => send(res, 200, { ok: true });
      };
      const first = bare.get('/first');
      await server.received(1);
      const ac = new AbortController();
      const second = failure(bare.get('/second', { signal: ac.signal }));
      ac.abort();
      assert.equal((await second).code, 'ERR_CANCELED');
      release();
      await first;
      server.handle = (_h, res) => send(res, 200, { ok: true });
      await bare.get('/third');
      assert.deepEqual(
        server.hits.map((h) => h.url),
        ['/first', '/third'],
      );
    });
  });
}

describe('client transport (undici adapter): what it refuses, its errors, its parts', () => {
  it('refuses response streams and progress callbacks (ERR_NOT_SUPPORT), sending nothing', async () => {
    const server = await startServer();
    const client = new EmsClient({ baseUrl: server.url, retries: 0 });
    for (const extra of [{ responseType: 'stream' as const }, { onDownloadProgress: () => undefined }]) {
      const error = await failure(client.transport.axios.get('/x', extra));
      assert.equal(error.code, 'ERR_NOT_SUPPORT');
    }
    assert.equal(server.hits.length, 0);
    client.close();
    await server.close();
  });

  it("maps undici's codes to the codes Node's http gives the same failures", () => {
    const config = {} as never;
    const err = (code: string, cause?: unknown) => Object.assign(new Error(`undici ${code}`), { code, cause });
    const seen = (e: unknown, response?: unknown) => {
      const translated = undiciError(e, config, {}, response as never);
      return [translated.code, translated.message];
    };
    assert.deepEqual(seen(err('UND_ERR_SOCKET', { code: 'EPIPE' })), ['EPIPE', 'undici UND_ERR_SOCKET']);
    assert.deepEqual(seen(err('UND_ERR_SOCKET', { code: 'weird code' })), ['ECONNRESET', 'socket hang up']);
    assert.deepEqual(seen(err('UND_ERR_CLOSED'), { status: 200 }), ['ERR_BAD_RESPONSE', 'stream has been aborted']);
    assert.deepEqual(seen(err('UND_ERR_HEADERS_TIMEOUT')), ['ETIMEDOUT', 'timeout: undici UND_ERR_HEADERS_TIMEOUT']);
    assert.deepEqual(seen(err('UND_ERR_HEADERS_OVERFLOW')), ['HPE_HEADER_OVERFLOW', 'undici UND_ERR_HEADERS_OVERFLOW']);
    assert.deepEqual(seen(err('UND_ERR_SOMETHING_NEW')), ['ERR_NETWORK', 'undici UND_ERR_SOMETHING_NEW']);
    assert.deepEqual(seen(err('ECONNREFUSED')), ['ECONNREFUSED', 'undici ECONNREFUSED']);
    assert.deepEqual(seen('not an error'), [undefined, 'not an error']);
  });

  it("loads undici's Agent and connector alone, or from its main entry if those files moved", () => {
    const direct = undiciParts();
    assert.equal(typeof direct.Agent, 'function');
    const moved = undiciParts((id) => {
      throw new Error(`no ${id}`);
    });
    assert.equal(moved.Agent, direct.Agent);
    assert.equal(moved.buildConnector, direct.buildConnector);
  });
});
