/**
 * The transport's bounds, run against axios' own http adapter (the reference) and the undici
 * adapter (the default): the wall-clock deadline of each attempt, aborts, body limits with
 * decompression (gzip, deflate, br; a decompression bomb stops at the limit), TLS, and the
 * pool still serving after attempts it had to destroy.
 */
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import type { AxiosError } from 'axios';
import { AbortedError, BadResponseError, EmsClient, NetworkError, TimeoutError } from '../../../src/client';
import { ADAPTERS, send, startServer, tlsFile, type TestServer } from '../../helpers/adapter-server';

const MB = 1024 * 1024;
const ENCODERS: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => zlib.gzipSync(b),
  deflate: (b) => zlib.deflateSync(b),
  'deflate (raw)': (b) => zlib.deflateRawSync(b),
  br: (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } }),
};
const encodingOf = (name: string) => name.split(' ')[0];

for (const adapter of ADAPTERS) {
  describe(`client transport (${adapter} adapter): deadlines, aborts, limits`, () => {
    let server: TestServer;
    let client: EmsClient;
    beforeEach(async () => {
      server = await startServer();
      client = new EmsClient({ baseUrl: server.url, retries: 0, timeoutMs: 300, maxBodyBytes: MB, adapter });
    });
    afterEach(async () => {
      client.close();
      await server.close();
    });

    it('the deadline ends an attempt that gets no headers, and one whose body drips', async () => {
      server.handle = () => undefined; // never answers
      await assert.rejects(
        client.raw('GET', '/silent'),
        (e: unknown) => e instanceof TimeoutError && e.code === 'ETIMEDOUT' && /timed out after 300 ms/.test(e.message),
      );
      const drips: NodeJS.Timeout[] = [];
      server.handle = (_h, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[');
        drips.push(setInterval(() => res.write('1,'), 20));
      };
      try {
        await assert.rejects(
          client.raw('GET', '/drip'),
          (e: unknown) => e instanceof TimeoutError && e.code === 'ETIMEDOUT',
        );
      } finally {
        drips.forEach(clearInterval);
      }
      assert.equal(client.transport.limiter.inFlight, 0, 'the slots were freed');
    });

    it('an abort ends a request in flight; an aborted signal sends nothing', async () => {
      server.handle = () => undefined;
      const ac = new AbortController();
      const pending = client.raw('GET', '/held', undefined, { signal: ac.signal });
      await server.received(1);
      ac.abort();
      await assert.rejects(pending, (e: unknown) => e instanceof AbortedError && e.code === 'EMS_ABORTED');
      const pre = new AbortController();
      pre.abort();
      await assert.rejects(
        client.raw('GET', '/never', undefined, { signal: pre.signal }),
        (e: unknown) => e instanceof AbortedError,
      );
      const bare = (await client.transport.axios
        .get('/never', { signal: pre.signal })
        .catch((e: AxiosError) => e)) as AxiosError;
      assert.equal(bare.code, 'ERR_CANCELED');
      assert.deepEqual(
        server.hits.map((h) => h.url),
        ['/held'],
        'the pre-aborted requests were never sent',
      );
    });

    it('an answer over maxBodyBytes fails, by content-length and while streaming; a request body over it is not sent', async () => {
      const big = Buffer.alloc(MB + 1, 'a');
      server.handle = (_h, res) => send(res, 200, big); // with content-length
      await assert.rejects(
        client.raw('GET', '/declared'),
        (e: unknown) => e instanceof BadResponseError && e.code === 'EMS_TOO_LARGE',
      );
      server.handle = (_h, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }); // chunked, no length
        const chunk = Buffer.alloc(64 * 1024, 'b');
        let sent = 0;
        const more = () => {
          while (sent <= 2 * MB && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        more();
      };
      await assert.rejects(
        client.raw('GET', '/streamed'),
        (e: unknown) => e instanceof BadResponseError && e.code === 'EMS_TOO_LARGE',
      );
      const tooBig = (await client.transport.axios
        .post('/up', Buffer.alloc(MB + 1))
        .catch((e: AxiosError) => e)) as AxiosError;
      assert.deepEqual(
        [tooBig.code, tooBig.message],
        ['ERR_BAD_REQUEST', 'Request body larger than maxBodyLength limit'],
      );
      assert.deepEqual(
        server.hits.map((h) => h.url),
        ['/declared', '/streamed'],
        'the body over the limit was not sent',
      );
    });

    for (const [name, encode] of Object.entries(ENCODERS)) {
      it(`decodes ${name}; a ${name} bomb stops at the limit`, async () => {
        const small = encode(Buffer.from(JSON.stringify({ value: 42, text: 'x'.repeat(2000) })));
        const bomb = encode(Buffer.alloc(64 * MB)); // 64 MB of zeros, a few KB sent
        assert.ok(bomb.length < 200 * 1024);
        server.handle = (h, res) => {
          const body = h.url === '/bomb' ? bomb : small;
          res.writeHead(200, {
            'content-type': 'application/json',
            'content-encoding': encodingOf(name),
            'content-length': body.length,
          });
          res.end(body);
        };
        // The body limit is what is tested here, not the deadline: decoding 1 MB of a bomb under
        // coverage on a busy machine can take longer than the other tests' 300 ms.
        client.close();
        client = new EmsClient({ baseUrl: server.url, retries: 0, timeoutMs: 30_000, maxBodyBytes: MB, adapter });
        const res = await client.transport.axios.get('/small');
        assert.equal((res.data as { value: number }).value, 42);
        assert.equal(res.headers['content-encoding'], undefined, 'decoded: the encoding is no longer named');
        const err = (await client.transport.axios.get('/bomb').catch((e: AxiosError) => e)) as AxiosError;
        assert.deepEqual([err.code, err.message], ['ERR_BAD_RESPONSE', `maxContentLength size of ${MB} exceeded`]);
        await assert.rejects(
          client.raw('GET', '/bomb'),
          (e: unknown) => e instanceof BadResponseError && e.code === 'EMS_TOO_LARGE',
        );
        assert.equal(
          ((await client.raw('GET', '/small')).payload as { value: number }).value,
          42,
          'the pool still serves',
        );
      });
    }

    it('a body that does not decode fails with the answer named', async () => {
      server.handle = (_h, res) => send(res, 200, 'not gzip at all', { 'content-encoding': 'gzip' });
      const err = (await client.transport.axios.get('/x').catch((e: AxiosError) => e)) as AxiosError;
      assert.deepEqual([err.code, err.response?.status], ['Z_DATA_ERROR', 200]);
      await assert.rejects(
        client.raw('GET', '/x'),
        (e: unknown) => e instanceof NetworkError && /failed \(Z_DATA_ERROR\)/.test(e.message),
      );
    });

    it('the pool still serves after destroyed attempts (timeouts, aborts, bodies over the limit, resets)', async () => {
      const emsClient = new EmsClient({
        baseUrl: server.url,
        retries: 0,
        timeoutMs: 200,
        maxBodyBytes: 1024,
        concurrency: 2,
        adapter,
      });
      const drips: NodeJS.Timeout[] = [];
      server.handle = (h, res, req) => {
        if (h.url === '/silent') return;
        if (h.url === '/drip') {
          res.writeHead(200);
          drips.push(setInterval(() => res.write('x'), 20));
        } else if (h.url === '/big') send(res, 200, Buffer.alloc(4096));
        else if (h.url === '/reset') req.socket.destroy();
        else send(res, 200, { ok: true });
      };
      try {
        for (let round = 0; round < 2; round++) {
          const ac = new AbortController();
          const aborted = emsClient.raw('GET', '/silent', undefined, { signal: ac.signal });
          const failures = await Promise.allSettled([
            emsClient.raw('GET', '/silent'),
            emsClient.raw('GET', '/drip'),
            emsClient.raw('GET', '/big'),
            emsClient.raw('GET', '/reset'),
            aborted,
            Promise.resolve().then(() => ac.abort()),
          ]);
          assert.deepEqual(
            failures.slice(0, 5).map((f) => f.status),
            ['rejected', 'rejected', 'rejected', 'rejected', 'rejected'],
          );
        }
      } finally {
        drips.forEach(clearInterval);
      }
      const answers = await Promise.all(Array.from({ length: 6 }, () => emsClient.raw('GET', '/ok')));
      assert.ok(answers.every((a) => (a.payload as { ok: boolean }).ok));
      assert.equal(emsClient.transport.limiter.inFlight, 0);
      emsClient.close();
    });
  });

  describe(`client transport (${adapter} adapter): TLS`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ tls: true });
      server.handle = (_h, res) => send(res, 200, { secure: true });
    });
    after(() => server.close());

    it('refuses a certificate it cannot verify, with the TLS code', async () => {
      const client = new EmsClient({ baseUrl: server.url, retries: 0, adapter });
      await assert.rejects(
        client.raw('GET', '/x'),
        (e: unknown) =>
          e instanceof NetworkError &&
          /connection to 127\.0\.0\.1:\d+ failed \((SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO)/.test(e.message),
      );
      client.close();
    });

    it('trusts a custom CA, and skips verification only when told to', async () => {
      const ca = new EmsClient({ baseUrl: server.url, ca: tlsFile('ca.pem'), adapter });
      assert.deepEqual((await ca.raw('GET', '/x')).payload, { secure: true });
      ca.close();
      const insecure = new EmsClient({ baseUrl: server.url, rejectUnauthorized: false, adapter });
      assert.deepEqual((await insecure.raw('GET', '/x')).payload, { secure: true });
      insecure.close();
    });
  });
}
