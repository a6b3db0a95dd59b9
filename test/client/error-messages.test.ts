/**
 * Errors that say what happened (src/client/error-map.ts, auth.ts, responses.ts): a 3xx says it
 * was a redirect, that it was not followed and where it pointed (masked, without its query); a
 * token request in the OAuth2 cool-down says it repeats the last failure and when the next try
 * is; a token answer without a token says so; a body longer than its Content-Length is a
 * malformed answer, not a connection failure; a device list of lists is refused, not read as
 * empty. Codes stay as they were, except the malformed answer, now EMS_BAD_RESPONSE. A loopback
 * stub (test/helpers/stub-server.ts) or a raw TCP server answers; Date is faked where a time is named.
 */
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import FakeTimers from '@sinonjs/fake-timers';
import {
  ApiError,
  AuthenticationError,
  BadResponseError,
  EmsClient,
  NetworkError,
  ServerError,
  ValidationError,
} from '../../src/client';
import { DEV, MEASUREMENT, json, outcome, startStub, type Stub } from '../helpers/stub-server';
import { hostPortOf } from '../../src/client/client';

const KEY = 'k3y-s3cret-redirect';
const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const result = await outcome(p);
  assert.ok(!result.ok, 'expected a failure');
  assert.ok(result.error instanceof ApiError, String(result.error));
  return result.error;
}

describe('client: errors that say what happened', function () {
  this.timeout(20_000);
  let stub: Stub;
  const clients: EmsClient[] = [];
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  const client = (o: Partial<ConstructorParameters<typeof EmsClient>[0]> = {}) => {
    const emsClient = new EmsClient({
      baseUrl: stub.url,
      retries: 3,
      retryBaseMs: 1,
      retryMaxMs: 2,
      timeoutMs: 5_000,
      auth: { type: 'header', apiKey: KEY },
      ...o,
    });
    clients.push(emsClient);
    return emsClient;
  };
  beforeEach(async () => {
    stub = await startStub();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    clock?.uninstall();
    clock = undefined;
    await stub.close();
  });

  it('a 3xx says it was a redirect, not followed, and where it pointed: without its query, secrets masked; same code', async () => {
    stub.handle = (_h, res) =>
      json(res, 302, 'Found', { location: `https://elsewhere.example/${KEY}/login?token=${KEY}&next=/x#top` });
    const error = await failure(client().getMeasurement(DEV, 'soc'));
    assert.equal(error.code, 'HTTP_302');
    assert.equal(error.status, 302);
    assert.equal(
      error.message,
      `GET /devices/${DEV}/measurement failed: HTTP 302, a redirect to https://elsewhere.example/***/login?…, not followed (redirects are never followed: set the URL to where the service answers)`,
    );
    assert.equal(stub.hits.length, 1, 'not retried, not followed');
    stub.handle = (_h, res) => json(res, 301, undefined);
    assert.match(
      (await failure(client().listDevices())).message,
      /^GET \/devices failed: HTTP 301, a redirect without a Location, not followed/,
    );
  });

  it('OAuth2: a 3xx from the token endpoint and a 200 without a token say so (EMS_AUTH), not "failed: 200 HTTP 200"', async () => {
    const oauth = (c: Partial<ConstructorParameters<typeof EmsClient>[0]> = {}) =>
      client({
        auth: { type: 'oauth2', tokenUrl: `${stub.url}/token`, clientId: 'id', clientSecret: 'cl1ent-s3cret' },
        ...c,
      });
    const host = new URL(stub.url).host;
    stub.handle = (h, res) =>
      h.url === '/token' ? json(res, 200, { token_type: 'bearer', expires_in: 3600 }) : json(res, 200, MEASUREMENT());
    const none = await failure(oauth().getMeasurement(DEV, 'soc'));
    assert.ok(none instanceof AuthenticationError);
    assert.equal(none.code, 'EMS_AUTH');
    assert.equal(
      none.message,
      `OAuth2 token request to ${host}/token failed: no access_token in the answer (HTTP 200)`,
    );
    stub.handle = (h, res) =>
      h.url === '/token'
        ? json(res, 307, undefined, { location: '/sso/token?client_secret=cl1ent-s3cret' })
        : json(res, 200, MEASUREMENT());
    const moved = await failure(oauth().getMeasurement(DEV, 'soc'));
    assert.equal(
      moved.message,
      `OAuth2 token request to ${host}/token failed: HTTP 307, a redirect to /sso/token?…, not followed (redirects are never followed: set the URL to where the service answers)`,
    );
    assert.equal(stub.hits.filter((h) => h.url !== '/token').length, 0, 'nothing sent without a token');
  });

  it('OAuth2: during the cool-down the error says it repeats the last failure, when that was, and when the next try is', async () => {
    clock = FakeTimers.install({ now: T0, toFake: ['Date'] });
    stub.handle = (h, res) =>
      h.url === '/token' ? json(res, 401, { error: 'invalid_client' }) : json(res, 200, MEASUREMENT());
    const emsClient = client({
      auth: { type: 'oauth2', tokenUrl: `${stub.url}/token`, clientId: 'id', clientSecret: 'cl1ent-s3cret' },
    });
    const host = new URL(stub.url).host;
    const first = await failure(emsClient.getMeasurement(DEV, 'soc'));
    assert.equal(first.message, `OAuth2 token request to ${host}/token failed: 401 invalid_client`);
    clock.setSystemTime(T0 + 400);
    const again = await failure(emsClient.getMeasurement(DEV, 'soc'));
    assert.ok(again instanceof AuthenticationError && again.code === 'EMS_AUTH' && again.status === 401);
    assert.equal(
      again.message,
      `${first.message}; repeated from the last token request (2026-11-23T12:00:00.000Z, 1 failed in a row): none is made before 2026-11-23T12:00:01.000Z (in 1 s)`,
    );
    assert.equal(stub.hits.filter((h) => h.url === '/token').length, 1, 'no token request in the cool-down');
    clock.setSystemTime(T0 + 1000);
    const second = await failure(emsClient.getMeasurement(DEV, 'soc'));
    assert.equal(second.message, first.message, 'a new try after the cool-down, failing afresh');
    assert.equal(stub.hits.filter((h) => h.url === '/token').length, 2);
    assert.match(
      (await failure(emsClient.getMeasurement(DEV, 'soc'))).message,
      /\(2026-11-23T12:00:01\.000Z, 2 failed in a row\): none is made before 2026-11-23T12:00:03\.000Z \(in 2 s\)$/,
    );
  });

  // What each adapter sees of it: axios' http adapter (Node's parser) stops at the bytes past the
  // length; the undici adapter takes the length's bytes, a cut-off JSON. Both are a malformed answer.
  const MALFORMED: Array<['http' | 'undici', RegExp]> = [
    [
      'http',
      /^GET \/devices\/dvc_a\/measurement answered with a malformed HTTP message \(HPE_INVALID_CONSTANT: .*, e\.g\. a body longer than its Content-Length\), not a connection failure$/,
    ],
    [
      'undici',
      /^GET \/devices\/dvc_a\/measurement answered 200 with broken or cut-off JSON, expected a JSON measurement/,
    ],
  ];
  for (const [adapter, expected] of MALFORMED)
    it(`a body longer than its Content-Length is a malformed answer (EMS_BAD_RESPONSE, not retried), not a connection failure (${adapter} adapter)`, async () => {
      let hits = 0;
      const raw = net.createServer((s) => {
        s.on('data', () => {
          hits++;
          const body = JSON.stringify(MEASUREMENT());
          s.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n${body}`);
        });
        s.on('error', () => undefined);
      });
      await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
      try {
        const emsClient = client({ baseUrl: `http://127.0.0.1:${(raw.address() as AddressInfo).port}`, adapter });
        const error = await failure(emsClient.getMeasurement(DEV, 'soc'));
        assert.ok(error instanceof BadResponseError, String(error));
        assert.equal(error.code, 'EMS_BAD_RESPONSE');
        assert.match(error.message, expected);
        assert.equal(hits, 1, 'not retried');
      } finally {
        await new Promise<void>((r) => raw.close(() => r()));
      }
    });

  it('a device list of lists (or of bare values) is refused like a site list, not read as an empty list', async () => {
    const emsClient = client();
    const answers: Array<[unknown, RegExp]> = [
      [
        [[{ deviceReference: 'dvc_a', properties: ['soc'] }]],
        /^GET \/devices answered 200 with devices\[0\] an array \(not an object\), expected a JSON device list/,
      ],
      [{ devices: [[{ deviceReference: 'dvc_a' }]] }, /with devices\[0\] an array \(not an object\)/],
      [{ items: [{ deviceReference: 'dvc_a' }, ['dvc_b']] }, /with items\[1\] an array \(not an object\)/],
      [['dvc_a'], /with devices\[0\] "dvc_a" \(a string, not an object\)/],
    ];
    for (const [body, expected] of answers) {
      stub.handle = (_h, res) => json(res, 200, body);
      const error = await failure(emsClient.listDevices());
      assert.equal(error.code, 'EMS_BAD_RESPONSE');
      assert.match(error.message, expected);
    }
    stub.handle = (_h, res) => json(res, 200, { devices: [] });
    assert.deepEqual(await emsClient.listDevices(), [], 'an empty list is still a list');
  });
});

/**
 * The client room's edges (src/client), part 2: what error messages name (requestId from the
 * header, host:port, unparseable base URLs), the client's own checks before sending, the retry
 * policy, and OAuth2 token fetches that fail, are cut off, point nowhere or are aborted. A
 * loopback stub (test/helpers/stub-server.ts) answers each test as it needs.
 */
describe('client coverage: what errors name', function () {
  this.timeout(20_000);
  let stub: Stub;
  let client: EmsClient;
  beforeEach(async () => {
    stub = await startStub();
    client = new EmsClient({
      baseUrl: stub.url,
      retries: 0,
      timeoutMs: 5_000,
      auth: { type: 'header', apiKey: 'k3y-s3cret-value' },
    });
  });
  afterEach(async () => {
    client.close();
    await stub.close();
  });

  it('the requestId of an error answer comes from the x-request-id header when the body has none (masked, on one line)', async () => {
    stub.handle = (_h, res) => json(res, 503, 'down for maintenance', { 'x-request-id': 'hdr-77 k3y-s3cret-value' });
    await assert.rejects(client.getMeasurement(DEV, 'soc'), (e) => {
      assert.ok(e instanceof ServerError, String(e));
      assert.equal(e.requestId, 'hdr-77 ***');
      assert.equal(e.serviceMessage, 'down for maintenance');
      assert.equal(
        e.message,
        `GET /devices/${DEV}/measurement failed: HTTP 503 down for maintenance (requestId hdr-77 ***)`,
      );
      return true;
    });
  });

  it('an empty x-request-id and an empty body give no requestId and no service message', async () => {
    stub.handle = (_h, res) => json(res, 500, undefined, { 'x-request-id': '' });
    await assert.rejects(client.getMeasurement(DEV, 'soc'), (e) => {
      assert.ok(e instanceof ServerError);
      assert.equal(e.requestId, undefined);
      assert.equal(e.serviceMessage, undefined);
      assert.equal(e.message, `GET /devices/${DEV}/measurement failed: HTTP 500`);
      return true;
    });
  });

  it("host:port of a base URL: the scheme's default port when it names none; an unparseable one is named as such", () => {
    assert.equal(hostPortOf('https://api.example.com/v1'), 'api.example.com:443');
    assert.equal(hostPortOf('http://api.example.com'), 'api.example.com:80');
    assert.equal(hostPortOf('http://[::1]:8080/x'), '[::1]:8080');
    assert.equal(hostPortOf('http://[::1'), '(invalid base URL)');
  });

  it("a connection that fails names host:port (the scheme's default port), never the path or its query", async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const boundPort = (srv.address() as AddressInfo).port;
        srv.close(() => resolve(boundPort));
      });
    });
    const dead = new EmsClient({ baseUrl: `http://127.0.0.1:${port}/v1`, retries: 0 });
    try {
      await assert.rejects(dead.getMeasurement(DEV, 'soc'), (e) => {
        assert.ok(e instanceof NetworkError, String(e));
        assert.equal(
          e.message,
          `GET /devices/${DEV}/measurement connection to 127.0.0.1:${port} failed (ECONNREFUSED)`,
        );
        return true;
      });
    } finally {
      dead.close();
    }
  });

  it('a base URL that cannot be parsed is refused at once naming baseUrl (it used to fail every request with a bare "failed")', () => {
    for (const bad of ['http://[::1', 'http://a b/v1', 'https://host:99999']) {
      assert.throws(
        () => new EmsClient({ baseUrl: bad }),
        (e) => e instanceof ValidationError && e.field === 'baseUrl',
        bad,
      );
    }
  });
});
