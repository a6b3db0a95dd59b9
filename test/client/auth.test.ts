/**
 * What a client refuses as it is made, before anything is sent (src/client/auth.ts checkAuth,
 * src/client/request-path.ts): an API-key header that is not an HTTP token or that the transport
 * sets, and a line break or control character in a key, token, secret or URL (refused, not
 * stripped: a URL parser and the HTTP library drop them, so what was sent was not what was set).
 * The refusal names the field and never the secret.
 */
import assert from 'node:assert/strict';
import {
  EmsClient,
  ValidationError,
  type AuthConfig,
  ApiError,
  OAuth2TokenSource,
  AbortedError,
  AuthenticationError,
} from '../../src/client';
import axios from 'axios';
import { DEFAULT_SITES } from '../../src/simulator';
import { clientFor, useClients, useSimulator } from '../helpers/sim';
import http from 'node:http';
import { DEV, MEASUREMENT, json, outcome } from '../helpers/stub-server';
import { useStubClients } from '../helpers/stub-clients';

const SECRET = 'k-SECRET-rules-77';

function refusal(baseUrl: string, auth: AuthConfig): ValidationError {
  try {
    new EmsClient({ baseUrl, auth }).close();
  } catch (e) {
    assert.ok(e instanceof ValidationError, String(e));
    assert.ok(!e.message.includes(SECRET), e.message);
    return e;
  }
  assert.fail(`accepted ${JSON.stringify({ baseUrl, auth })}`);
}

const [COM] = DEFAULT_SITES;
const BAT = COM.battery.deviceReference;

describe('client: authentication and base URL checked as a client is made', () => {
  const base = 'https://api.example.com/v1';

  it('refuses a line break or control character in the base URL, a bearer token and every OAuth2 setting, naming the field', () => {
    assert.equal(refusal('https://api.example.com\n.evil.test/v1', { type: 'none' }).field, 'baseUrl');
    assert.equal(refusal('https://api.example.com/v1\t', { type: 'none' }).field, 'baseUrl');
    const bearer = refusal(base, { type: 'bearer', token: `${SECRET}\r\nx-evil: 1` });
    assert.equal(bearer.field, 'apiKey');
    assert.match(bearer.message, /^apiKey holds a line break \(character 18 of 28\); it is refused, not removed/);
    assert.match(
      refusal(base, { type: 'header', apiKey: `${SECRET}\u0000` }).message,
      /^apiKey holds a control character/,
    );
    const oauth = {
      type: 'oauth2',
      tokenUrl: 'https://auth.example.com/token',
      clientId: 'id',
      clientSecret: SECRET,
      scope: 'read',
    } as const;
    for (const k of ['tokenUrl', 'clientId', 'clientSecret', 'scope'] as const) {
      assert.equal(refusal(base, { ...oauth, [k]: `${oauth[k]}\n` }).field, k);
    }
  });

  it('refuses a key header that is not an HTTP token or that the transport sets; accepts a token, and the default when none is set', () => {
    for (const header of [
      'X-Evil: injected\r\nx-api-key',
      'x api key',
      'host',
      'Content-Length',
      'transfer-encoding',
      'proxy-authorization',
      'TE',
    ]) {
      const refused = refusal(base, { type: 'header', apiKey: SECRET, header });
      assert.equal(refused.field, 'apiKeyHeader');
      assert.ok(refused.message.startsWith(`apiKeyHeader ${JSON.stringify(header)} `), refused.message);
    }
    for (const header of ['x-api-key', 'Ocp-Apim-Subscription-Key', 'authorization', '', undefined])
      new EmsClient({ baseUrl: base, auth: { type: 'header', apiKey: SECRET, header } }).close();
  });
});

describe('client: authentication strategies', () => {
  const KEY = 'k-SECRET-api-key-123';
  const SECRET = 'cs-SECRET-client-456';
  const sim = useSimulator({
    apiKey: KEY,
    oauth: { clientId: 'partner', clientSecret: SECRET, tokenTtlSeconds: 3600 },
  });
  const client = useClients(sim);

  it('sends the API key in a header, or as a bearer token', async () => {
    const headerClient = client({ auth: { type: 'header', apiKey: KEY } });
    const bearerClient = client({ auth: { type: 'bearer', token: KEY } });
    assert.equal((await headerClient.getMeasurement(BAT, 'soc')).property, 'soc');
    assert.equal((await bearerClient.getMeasurement(BAT, 'soc')).property, 'soc');
    headerClient.close();
    bearerClient.close();
  });

  it('answers 401 without credentials', async () => {
    const anonymous = client();
    await assert.rejects(anonymous.listDevices(), (e: unknown) => e instanceof ApiError && e.status === 401);
    anonymous.close();
  });

  it('OAuth2: one token fetch for concurrent requests, refreshed once on a 401', async () => {
    const emsClient = client({
      auth: { type: 'oauth2', tokenUrl: `${sim.url}/oauth/token`, clientId: 'partner', clientSecret: SECRET },
    });
    const issued = sim.sim.oauth!.issued;
    await Promise.all(Array.from({ length: 10 }, () => emsClient.getMeasurement(BAT, 'soc')));
    assert.equal(sim.sim.oauth!.issued - issued, 1);
    assert.equal(emsClient.transport.tokens!.fetchCount, 1);
    sim.sim.oauth!.revokeAll();
    await emsClient.getMeasurement(BAT, 'soc');
    assert.equal(emsClient.transport.tokens!.fetchCount, 2);
    emsClient.close();
  });

  it('OAuth2: refreshes before expiry', async () => {
    let now = 1_000_000;
    const src = new OAuth2TokenSource(
      { type: 'oauth2', tokenUrl: `${sim.url}/oauth/token`, clientId: 'partner', clientSecret: SECRET },
      axios.create(),
      () => [SECRET],
      () => now,
    );
    const t1 = await src.token();
    now += 3_500_000; // 58 min 20 s of 60 min: inside the last minute's refresh window? not yet (refresh 60 s before)
    assert.equal(await src.token(), t1);
    now += 50_000; // 59 min 10 s: within 60 s of expiry
    const t2 = await src.token();
    assert.notEqual(t2, t1);
    assert.equal(src.fetchCount, 2);
  });

  it('OAuth2: a wrong secret is reported clearly, once, without a retry storm', async () => {
    const emsClient = client({
      auth: {
        type: 'oauth2',
        tokenUrl: `${sim.url}/oauth/token`,
        clientId: 'partner',
        clientSecret: 'wrong-secret-789',
      },
    });
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => emsClient.getMeasurement(BAT, 'soc')));
    assert.ok(
      results.every(
        (r) =>
          r.status === 'rejected' &&
          /OAuth2 token request to .* failed: 401 invalid_client: unknown client or wrong secret/.test(
            (r.reason as Error).message,
          ),
      ),
    );
    assert.equal(emsClient.transport.tokens!.fetchCount, 1);
    await assert.rejects(emsClient.getMeasurement(BAT, 'soc'), /OAuth2 token request/);
    assert.equal(emsClient.transport.tokens!.fetchCount, 1, 'cooled down: no new token request');
    emsClient.close();
  });

  it('never puts a key, token or secret into an error', async () => {
    sim.sim.setFaults({ rate500: 0.5, rate429: 0.2, retryAfterSeconds: 0 });
    const clients = [
      client({ retries: 1, retryBaseMs: 1, auth: { type: 'header', apiKey: 'wrong-' + KEY } }),
      client({ retries: 1, retryBaseMs: 1, auth: { type: 'bearer', token: 'wrong-' + KEY } }),
      client({
        retries: 1,
        retryBaseMs: 1,
        auth: {
          type: 'oauth2',
          tokenUrl: `${sim.url}/oauth/token`,
          clientId: 'partner',
          clientSecret: 'wrong-' + SECRET,
        },
      }),
      clientFor('http://127.0.0.1:1', { retries: 0, auth: { type: 'header', apiKey: KEY } }),
    ];
    let errors = 0;
    for (const c of clients) {
      for (const call of [
        () => c.listDevices(),
        () => c.getMeasurement(BAT, 'soc'),
        () => c.steerEss(COM.siteReference, { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() + 60_000 }),
      ]) {
        try {
          await call();
        } catch (e) {
          errors++;
          const text = [
            String(e),
            (e as Error).stack,
            JSON.stringify(e),
            JSON.stringify(Object.entries(e as object)),
          ].join('\n');
          for (const secret of [KEY, SECRET])
            assert.equal(text.includes(secret), false, `secret in ${text.slice(0, 200)}`);
        }
      }
      c.close();
    }
    sim.sim.setFaults({});
    assert.equal(errors, 12);
  });
});

/**
 * The client room's edges (src/client), part 2: what error messages name (requestId from the
 * header, host:port, unparseable base URLs), the client's own checks before sending, the retry
 * policy, and OAuth2 token fetches that fail, are cut off, point nowhere or are aborted. A
 * loopback stub (test/helpers/stub-server.ts) answers each test as it needs.
 */
describe('client coverage: OAuth2 token fetches that fail, are cut off or aborted', function () {
  this.timeout(20_000);
  const env = useStubClients();
  const make = env.client;
  const tokenHits = () => env.stub.hits.filter((h) => h.url === '/token');
  const apiHits = () => env.stub.hits.filter((h) => h.url !== '/token');
  const client = (
    auth: Partial<{ tokenUrl: string; scope: string }> = {},
    o: Partial<ConstructorParameters<typeof EmsClient>[0]> = {},
  ) =>
    make({
      auth: {
        type: 'oauth2',
        tokenUrl: `${env.stub.url}/token`,
        clientId: 'cid',
        clientSecret: 'cl1ent-s3cret',
        ...auth,
      },
      ...o,
    });

  it('sends the scope; a token without expires_in is kept (one fetch for several requests) and used as Bearer', async () => {
    env.stub.handle = (h, res) =>
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
    env.stub.handle = (h, res) => (h.url === '/token' ? json(res, 500, undefined) : json(res, 200, MEASUREMENT()));
    const emsClient = client();
    const first = await outcome(emsClient.getMeasurement(DEV, 'soc'));
    assert.ok(!first.ok && first.error instanceof AuthenticationError, String(!first.ok && first.error));
    const error = first.error as AuthenticationError;
    assert.equal(error.code, 'EMS_AUTH');
    assert.equal(error.status, 500);
    assert.equal(
      error.message,
      `OAuth2 token request to 127.0.0.1:${new URL(env.stub.url).port}/token failed: HTTP 500`,
    );
    const second = await outcome(emsClient.getMeasurement(DEV, 'soc'));
    assert.ok(!second.ok && second.error instanceof AuthenticationError, 'the same failure, from the cool-down');
    const again = second.error as AuthenticationError;
    assert.deepEqual([again.code, again.status], [error.code, error.status]);
    assert.ok(again.message.startsWith(`${error.message}; repeated from the last token request (`), again.message);
    assert.equal(tokenHits().length, 1);
    assert.equal(apiHits().length, 0);
  });

  it('a token answer over maxBodyBytes: EMS_AUTH "answer too large"', async () => {
    env.stub.handle = (h, res) =>
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
    assert.equal(env.stub.hits.length, 0);
  });

  it('a request aborted while its token is fetched is EMS_ABORTED, not an auth failure: no cool-down, the next request fetches again', async () => {
    let held: http.ServerResponse | undefined;
    env.stub.handle = (h, res) => {
      if (h.url === '/token' && !held)
        held = res; // the first token request never answers
      else if (h.url === '/token') json(res, 200, { access_token: 'tok-2', expires_in: 600 });
      else json(res, 200, MEASUREMENT());
    };
    const emsClient = client();
    const ctl = new AbortController();
    const pending = outcome(emsClient.getMeasurement(DEV, 'soc', { signal: ctl.signal }));
    await env.stub.received(1);
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
