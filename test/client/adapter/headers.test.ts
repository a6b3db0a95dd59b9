/**
 * Headers through the transport, against axios' own http adapter (the reference) and the undici
 * adapter: answer headers as Node's http parses them while their names and values repeat, change
 * and change case from one answer to the next on a kept-alive connection (the undici adapter
 * reuses the strings of bytes it saw before), and request headers given in any case.
 */
import assert from 'node:assert/strict';
import { EmsClient } from '../../../src/client';
import { ADAPTERS, startServer, type TestServer } from '../../helpers/adapter-server';

/** The raw headers of answer n: names in changing case, values that repeat, change, and come twice. */
function answerHeaders(n: number): string[] {
  const upper = n % 3 === 0;
  return [
    upper ? 'Content-Type' : 'content-type',
    n % 4 === 0 ? 'application/json; charset=utf-8' : 'application/json; charset=UTF-8',
    'Content-Length',
    '2',
    upper ? 'X-TAG' : 'x-tag',
    // The same length each time, other bytes: a value is reused only when all its bytes are the same.
    `tag-${n % 5}`,
    'x-joined',
    `a${n}`,
    'X-Joined',
    'b',
    'Retry-After',
    String(n),
    'retry-after',
    'ignored',
    'Set-Cookie',
    `s=${n % 2}`,
    'set-cookie',
    't=1',
    'x-latin1',
    n % 2 ? 'caf\u00e9' : 'cafe',
    'x-long',
    'v'.repeat(60 + (n % 10)),
  ];
}

for (const adapter of ADAPTERS) {
  describe(`client transport (${adapter} adapter): headers`, () => {
    let server: TestServer;
    let client: EmsClient;
    beforeEach(async () => {
      server = await startServer();
      client = new EmsClient({ baseUrl: server.url, retries: 0, adapter, concurrency: 1 });
    });
    afterEach(async () => {
      client.close();
      await server.close();
    });

    it('answer headers as Node parses them, answer after answer, whatever repeats or changes', async () => {
      server.handle = (hit, res) => {
        const answer = Number(hit.url.slice(1));
        res.writeHead(200, answerHeaders(answer));
        res.end('{}');
      };
      for (let n = 0; n < 24; n++) {
        const answer = await client.transport.axios.get(`/${n}`);
        const headers = { ...(answer.headers as Record<string, unknown>) };
        assert.deepEqual(
          {
            type: headers['content-type'],
            tag: headers['x-tag'],
            joined: headers['x-joined'],
            retryAfter: headers['retry-after'],
            cookies: headers['set-cookie'],
            latin1: headers['x-latin1'],
            long: headers['x-long'],
          },
          {
            type: n % 4 === 0 ? 'application/json; charset=utf-8' : 'application/json; charset=UTF-8',
            tag: `tag-${n % 5}`,
            joined: `a${n}, b`,
            retryAfter: String(n),
            cookies: [`s=${n % 2}`, 't=1'],
            // Node's server writes the value's UTF-8 bytes; Node's client reads each byte as one character (latin1).
            latin1: n % 2 ? Buffer.from('caf\u00e9').toString('latin1') : 'cafe',
            long: 'v'.repeat(60 + (n % 10)),
          },
          `answer ${n}`,
        );
        assert.ok(!('X-TAG' in headers) && !('Content-Type' in headers), `answer ${n}: names in lower case`);
      }
      assert.equal(server.connections, 1, 'one kept-alive connection');
    });

    it('request headers given in any case: user-agent and accept-encoding kept, one authorization', async () => {
      server.handle = (_hit, res) => res.end('{}');
      await client.transport.axios.post('/x', 'body', {
        headers: {
          'USER-AGENT': 'mine/1',
          'accept-ENCODING': 'identity',
          AUTHORIZATION: 'Bearer old',
          'X-Custom': 'c',
        },
        auth: { username: 'u', password: 'p' },
      });
      await client.transport.axios.get('/y', { headers: { 'X-Other': 'o' } });
      const [posted, got] = server.hits;
      assert.deepEqual(
        [
          posted.headers['user-agent'],
          posted.headers['accept-encoding'],
          posted.headers['content-length'],
          posted.headers.authorization,
          posted.headers['x-custom'],
          posted.body.toString(),
        ],
        ['mine/1', 'identity', '4', `Basic ${Buffer.from('u:p').toString('base64')}`, 'c', 'body'],
      );
      assert.equal(got.headers['x-other'], 'o');
      assert.equal(got.headers['content-length'], undefined);
      assert.ok(got.headers['user-agent'], 'a user-agent is always sent');
    });
  });
}
