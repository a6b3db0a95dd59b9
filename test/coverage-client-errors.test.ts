/**
 * The client room's edges (src/client), part 2: what error messages name (requestId from the
 * header, host:port, unparseable base URLs), the client's own checks before sending, the retry
 * policy, and OAuth2 token fetches that fail, are cut off, point nowhere or are aborted. A
 * loopback stub (test/helpers/stub-server.ts) answers each test as it needs.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  AbortedError,
  AuthenticationError,
  EmsClient,
  NetworkError,
  ServerError,
  ValidationError,
  isRetryable,
  mergeSeries,
} from '../src/client';
import { hostPortOf } from '../src/client/client';
import { isTransientNetworkError } from '../src/client/transport';
import { OAuth2TokenSource } from '../src/client/auth';
import { useCrashWatch } from './helpers/faults';
import { useClients } from './helpers/sim';
import { DEV, MEASUREMENT, SITE, json, outcome, startStub, type Stub } from './helpers/stub-server';

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

describe("client coverage: the client's own checks", function () {
  this.timeout(20_000);
  let stub: Stub;
  let client: EmsClient;
  beforeEach(async () => {
    stub = await startStub();
    client = new EmsClient({ baseUrl: stub.url, retries: 0, timeoutMs: 5_000 });
  });
  afterEach(async () => {
    client.close();
    await stub.close();
  });

  it('a base URL that is not http(s) is refused naming baseUrl', () => {
    for (const bad of ['ftp://x', 'localhost:1880', '', 42 as unknown as string, 'http:// spaced']) {
      assert.throws(
        () => new EmsClient({ baseUrl: bad }),
        (e) => e instanceof ValidationError && e.field === 'baseUrl' && /http:\/\/ or https:\/\//.test(e.message),
      );
    }
  });

  it('getTimeSeries sends a ready TimeSeriesRequest as it is', async () => {
    stub.handle = (_h, res) => json(res, 200, { time: ['2026-01-01T00:00:00Z'], data: [1.5] });
    const req = {
      property: 'power',
      range: { type: 'absolute' as const, start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z' },
      resolution: { value: 1, unit: 'h' as const },
    };
    assert.deepEqual(await client.getTimeSeries(DEV, req), { time: ['2026-01-01T00:00:00Z'], data: [1.5] });
    assert.deepEqual(JSON.parse(stub.hits[0].body), req);
  });

  it('getTimeSeriesRange refuses an end not after the start and a resolution out of range, naming the field; nothing sent', async () => {
    const time = Date.UTC(2026, 0, 1);
    await assert.rejects(
      client.getTimeSeriesRange(DEV, { property: 'soc', start: time, end: time }),
      (e) =>
        e instanceof ValidationError &&
        e.field === 'end' &&
        /must be after start \(2026-01-01T00:00:00Z\)/.test(e.message),
    );
    for (const r of [0, 'x', Number.NaN]) {
      await assert.rejects(
        client.getTimeSeriesRange(DEV, {
          property: 'soc',
          start: time,
          end: time + 86_400_000,
          resolutionHours: r as number,
        }),
        (e) => e instanceof ValidationError && e.field === 'resolution',
      );
    }
    assert.equal(stub.hits.length, 0);
  });

  it('the trusted steering path refuses a validUntil that passed or is not a number, naming it; nothing sent', async () => {
    const req = (validUntil: number) =>
      ({
        endpoint: 'ess',
        method: 'POST',
        path: `/sites/${SITE}/steering/ess`,
        body: { setting: { value: 1, unit: 'kW' }, validUntil },
        validUntil,
      }) as never;
    const past = Date.now() - 1000;
    await assert.rejects(
      client.sendSteering(req(past)),
      (e) =>
        e instanceof ValidationError && e.field === 'validUntil' && e.message.includes(new Date(past).toISOString()),
    );
    await assert.rejects(
      client.sendSteering(req(Number.NaN)),
      (e) => e instanceof ValidationError && e.field === 'validUntil' && /got NaN/.test(e.message),
    );
    await assert.rejects(
      client.sendSteering(req(-9e15)),
      (e) => e instanceof ValidationError && /got -9000000000000000/.test(e.message),
    );
    assert.equal(stub.hits.length, 0);
  });

  it('listSites: a 405 gives [] (the service has no such path); a 500 is an error', async () => {
    stub.handle = (_h, res) => json(res, 405, { message: 'method not allowed' });
    assert.deepEqual(await client.listSites(), []);
    stub.handle = (_h, res) => json(res, 500, { message: 'boom' });
    await assert.rejects(client.listSites(), (e) => e instanceof ServerError && e.serviceMessage === 'boom');
  });

  it('request() without a shape returns the answer unchecked', async () => {
    stub.handle = (_h, res) => json(res, 200, { anything: [1, 2] });
    assert.deepEqual(await client.request('GET', '/whatever', { kind: 'read' }), { anything: [1, 2] });
  });

  it('mergeSeries keeps points in [start, end) once, in order, and skips parts without arrays', () => {
    const start = Date.UTC(2026, 0, 1);
    const iso = (h: number) => new Date(start + h * 3_600_000).toISOString().replace('.000', '');
    const merged = mergeSeries(
      [
        { time: [iso(-1), iso(0), iso(1)], data: [9, 0, 1] },
        {} as never,
        { time: [iso(1), iso(2), iso(3)], data: [1, 2] }, // one repeat at the seam; one time without a value
        { time: [iso(4)], data: [4] }, // at the end: left out
      ],
      start,
      start + 4 * 3_600_000,
    );
    assert.deepEqual(merged, { time: [iso(0), iso(1), iso(2)], data: [0, 1, 2] });
  });

  it('the retry policy never retries a cancel, a request without policy, or a steering 4xx other than 429', () => {
    const err = (o: Record<string, unknown>) => ({ isAxiosError: true, message: 'x', ...o }) as never;
    assert.equal(isRetryable(err({ __CANCEL__: true, config: { ems: { kind: 'read' } } })), false);
    assert.equal(isRetryable(err({ code: 'ECONNRESET', config: {} })), false, 'no policy: not one of ours');
    assert.equal(isRetryable(err({ response: { status: 409 }, config: { ems: { kind: 'steer' } } })), false);
    assert.equal(isRetryable(err({ response: { status: 503 }, config: { ems: { kind: 'steer' } } })), true);
    assert.equal(isRetryable(err({ code: 'ERR_BAD_REQUEST', config: { ems: { kind: 'steer' } } })), false);
    assert.equal(
      isRetryable(err({ message: 'socket hang up', config: { ems: { kind: 'steer' } } })),
      true,
      'no code, but a hang-up',
    );
    assert.equal(isTransientNetworkError(err({ __CANCEL__: true, code: 'ECONNRESET' })), false);
    assert.equal(isTransientNetworkError(err({ code: 'ECONNRESET', response: { status: 502 } })), false);
  });
});

describe('client coverage: OAuth2 token fetches that fail, are cut off or aborted', function () {
  this.timeout(20_000);
  const crashes = useCrashWatch();
  let stub: Stub;
  const tokenHits = () => stub.hits.filter((h) => h.url === '/token');
  const apiHits = () => stub.hits.filter((h) => h.url !== '/token');
  const make = useClients(
    {
      get url() {
        return stub.url;
      },
    },
    { retries: 0, timeoutMs: 5_000 },
  );
  const client = (
    auth: Partial<{ tokenUrl: string; scope: string }> = {},
    o: Partial<ConstructorParameters<typeof EmsClient>[0]> = {},
  ) =>
    make({
      auth: { type: 'oauth2', tokenUrl: `${stub.url}/token`, clientId: 'cid', clientSecret: 'cl1ent-s3cret', ...auth },
      ...o,
    });
  beforeEach(async () => {
    stub = await startStub();
  });
  afterEach(async () => {
    await stub.close();
    assert.deepEqual(crashes.events, []);
  });

  it('sends the scope; a token without expires_in is kept (one fetch for several requests) and used as Bearer', async () => {
    stub.handle = (h, res) =>
      h.url === '/token' ? json(res, 200, { access_token: 'tok-1' }) : json(res, 200, MEASUREMENT());
    const emsClient = client({ scope: 'read steer' });
    await emsClient.getMeasurement(DEV, 'soc');
    await emsClient.getMeasurement(DEV, 'soc');
    assert.equal(tokenHits().length, 1);
    const form = new URLSearchParams(tokenHits()[0].body);
    assert.deepEqual(Object.fromEntries(form), {
      grant_type: 'client_credentials',
      client_id: 'cid',
      client_secret: 'cl1ent-s3cret',
      scope: 'read steer',
    });
    assert.deepEqual(
      apiHits().map((h) => h.headers.authorization),
      ['Bearer tok-1', 'Bearer tok-1'],
    );
  });

  it('a token endpoint that fails with an empty body: EMS_AUTH naming its status; callers in the cool-down get the same failure, said to be repeated, nothing sent', async () => {
    stub.handle = (h, res) => (h.url === '/token' ? json(res, 500, undefined) : json(res, 200, MEASUREMENT()));
    const emsClient = client();
    const first = await outcome(emsClient.getMeasurement(DEV, 'soc'));
    assert.ok(!first.ok && first.error instanceof AuthenticationError, String(!first.ok && first.error));
    const error = first.error as AuthenticationError;
    assert.equal(error.code, 'EMS_AUTH');
    assert.equal(error.status, 500);
    assert.equal(error.message, `OAuth2 token request to 127.0.0.1:${new URL(stub.url).port}/token failed: HTTP 500`);
    const second = await outcome(emsClient.getMeasurement(DEV, 'soc'));
    assert.ok(!second.ok && second.error instanceof AuthenticationError, 'the same failure, from the cool-down');
    const again = second.error as AuthenticationError;
    assert.deepEqual([again.code, again.status], [error.code, error.status]);
    assert.ok(again.message.startsWith(`${error.message}; repeated from the last token request (`), again.message);
    assert.equal(tokenHits().length, 1);
    assert.equal(apiHits().length, 0);
  });

  it('a token answer over maxBodyBytes: EMS_AUTH "answer too large"', async () => {
    stub.handle = (h, res) =>
      h.url === '/token' ? json(res, 200, { access_token: 't', pad: 'x'.repeat(8192) }) : json(res, 200, MEASUREMENT());
    const emsClient = client({}, { maxBodyBytes: 1024 });
    await assert.rejects(
      emsClient.getMeasurement(DEV, 'soc'),
      (e) => e instanceof AuthenticationError && /failed: answer too large$/.test(e.message),
    );
    assert.equal(apiHits().length, 0);
  });

  it('a token URL that cannot be parsed is named "(invalid URL)"; the secret never shows', async () => {
    const emsClient = client({ tokenUrl: 'not a url cl1ent-s3cret' });
    await assert.rejects(emsClient.getMeasurement(DEV, 'soc'), (e) => {
      assert.ok(e instanceof AuthenticationError, String(e));
      assert.match(e.message, /^OAuth2 token request to \(invalid URL\) failed: /);
      assert.doesNotMatch(e.message, /s3cret/);
      return true;
    });
    assert.equal(stub.hits.length, 0);
  });

  it('a request aborted while its token is fetched is EMS_ABORTED, not an auth failure: no cool-down, the next request fetches again', async () => {
    let held: http.ServerResponse | undefined;
    stub.handle = (h, res) => {
      if (h.url === '/token' && !held)
        held = res; // the first token request never answers
      else if (h.url === '/token') json(res, 200, { access_token: 'tok-2', expires_in: 600 });
      else json(res, 200, MEASUREMENT());
    };
    const emsClient = client();
    const ctl = new AbortController();
    const pending = outcome(emsClient.getMeasurement(DEV, 'soc', { signal: ctl.signal }));
    await stub.received(1);
    ctl.abort();
    const result = await pending;
    assert.ok(
      !result.ok && result.error instanceof AbortedError && result.error.code === 'EMS_ABORTED',
      String(!result.ok && result.error),
    );
    assert.equal((await emsClient.getMeasurement(DEV, 'soc')).value, 42, 'no cool-down after an abort');
    assert.equal(tokenHits().length, 2);
    assert.deepEqual(
      apiHits().map((h) => h.headers.authorization),
      ['Bearer tok-2'],
    );
  });

  it('a token source refreshes a token without expires_in after 1 h less 60 s; a transport error without a code is "ERROR"', async () => {
    let now = Date.UTC(2026, 0, 1);
    let answer: () => Promise<unknown> = async () => ({ status: 200, data: { access_token: 'a1', expires_in: -5 } });
    const http1 = { post: () => answer() } as never;
    const src = new OAuth2TokenSource(
      { type: 'oauth2', tokenUrl: 'https://auth.example/token?x=1', clientId: 'c', clientSecret: 's' },
      http1,
      () => ['s'],
      () => now,
    );
    assert.equal(await src.token(), 'a1');
    now += 3_600_000 - 60_001;
    assert.equal(await src.token(), 'a1');
    assert.equal(src.fetchCount, 1);
    now += 2;
    answer = async () => {
      throw new Error('stream broke');
    };
    await assert.rejects(
      src.token(),
      (e) =>
        e instanceof AuthenticationError && e.message === 'OAuth2 token request to auth.example/token failed: ERROR',
    );
    assert.equal(src.fetchCount, 2);
  });
});
