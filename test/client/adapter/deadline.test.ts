/**
 * The undici adapter keeps the attempt's wall-clock deadline itself (one timer in its exchange,
 * no wrapper around it): the pool's adapter, even under an axios instance of its own, ends an
 * attempt that gets no answer, or whose body drips, as ETIMEDOUT (wall-clock) at the client's
 * timeoutMs; the caller's signal still cancels it in flight; axios' own http adapter is wrapped
 * by the transport instead (limits.test.ts beside this file runs the deadline against both).
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import type { AxiosError } from 'axios';
import { EmsClient } from '../../../src/client';
import { httpLib } from '../../../src/client/http-lib';
import { startServer, type TestServer } from '../../helpers/adapter-server';

describe('client transport (undici adapter): the deadline inside the adapter', () => {
  let server: TestServer;
  let client: EmsClient;
  beforeEach(async () => {
    server = await startServer();
    client = new EmsClient({ baseUrl: server.url, retries: 0, timeoutMs: 200, adapter: 'undici' });
  });
  afterEach(async () => {
    client.close();
    await server.close();
  });
  const bareAxios = () =>
    httpLib().axios.create({ baseURL: server.url, adapter: client.transport.pool.adapter, maxRedirects: 0 });

  it('the undici pool bounds each attempt itself; the http pool leaves it to the transport', () => {
    assert.equal(client.transport.pool.deadlined, true);
    const reference = new EmsClient({ baseUrl: server.url, retries: 0, timeoutMs: 200, adapter: 'http' });
    try {
      assert.equal(reference.transport.pool.deadlined, false);
    } finally {
      reference.close();
    }
  });

  it('an attempt with no answer, and one whose body drips, end as ETIMEDOUT (wall-clock) at timeoutMs', async () => {
    server.handle = (hit, res) => {
      if (hit.url === '/drip') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[');
        const timer = setInterval(() => res.write('1,'), 50);
        res.on('close', () => clearInterval(timer));
      }
      // '/silent' gets no answer at all
    };
    for (const url of ['/silent', '/drip']) {
      const err = (await bareAxios()
        .get(url)
        .then(
          () => assert.fail(`${url} answered`),
          (e: unknown) => e,
        )) as AxiosError;
      assert.deepEqual(
        [err.code, err.message, err.response],
        ['ETIMEDOUT', 'timeout of 200ms exceeded (wall-clock)', undefined],
        url,
      );
    }
  });

  it("the caller's signal cancels an attempt in flight; the signal keeps no listener per attempt", async () => {
    server.handle = () => undefined; // never answers
    const caller = new AbortController();
    const pending = Promise.all(
      [1, 2, 3].map(() =>
        bareAxios()
          .get('/hang', { signal: caller.signal })
          .then(
            () => 'answered',
            (e: unknown) => (httpLib().axios.isCancel(e) ? 'cancelled' : String(e)),
          ),
      ),
    );
    await server.received(3);
    assert.equal(getEventListeners(caller.signal, 'abort').length, 1, 'one listener for the three attempts');
    caller.abort();
    assert.deepEqual(await pending, ['cancelled', 'cancelled', 'cancelled']);
  });

  it('an answer within the deadline comes back as it is, with the caller config', async () => {
    server.handle = (_hit, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    };
    const config = { headers: { 'x-test': '1' } };
    const res = await bareAxios().get('/fine', config);
    assert.deepEqual([res.status, res.data, res.config.headers['x-test']], [200, { ok: true }, '1']);
  });
});
