/**
 * Issue 12, raw requests: the `ems-request` node sends msg.method, msg.path and msg.body through
 * the config node's client. Round trips on the simulator and on a counting server; every
 * refused form of msg.path (and a bad method, a GET body, a body over maxBodyMB) ends in one
 * Catch-able error naming the field and the accepted form, with NOTHING sent (counted at the
 * server, or in the simulator's request log); credentials the service echoes in headers and
 * body never reach msg.headers, the message or an error; an answer over maxBodyMB fails; text
 * stays text; a non-2xx answer is a Catch-able error whose message carries the answer.
 */
import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../src/simulator/index';
import { Redactor } from '../src/client/errors';
import { answerPayload, selectHeaders } from '../src/client/any-endpoint';
import { checkRequestPath, requestPathProblem, requestUrl } from '../src/client/request-path';
import { EmsClient } from '../src/client/client';
import { formsOf } from './helpers/hostile-server';
import { startCounting, type CountingServer } from './helpers/counting-server';
import { NODES, callsOf, cfg, flow, loadFlow, useRuntime, useSimulator, type Loaded } from './helpers/red';

// The node module under test (test/helpers/red.ts lists the package's other nodes).
// eslint-disable-next-line @typescript-eslint/no-require-imports

/* eslint-disable @typescript-eslint/no-explicit-any */
const BAT = DEFAULT_SITES[0].battery.deviceReference;
const SITE = DEFAULT_SITES[0].siteReference;
const req = (extra: Record<string, unknown> = {}) => ({ type: 'ems-request', ...extra });
const FORM =
  'must be a path relative to the base URL starting with one "/", e.g. "/devices/dvc_1/measurement?property=soc"';

/** Sends msg and expects one Catch-able error naming `field`, the accepted form and `reason`; returns the Catch message. */
async function refused(f: Loaded, msg: Record<string, unknown>, field: string, reason: string | RegExp): Promise<any> {
  const c = await f.fails(msg);
  const text: string = c.error.message;
  assert.ok(text.startsWith(`ValidationError: ${field} `), text);
  if (field.endsWith('path')) assert.ok(text.includes(FORM), text);
  if (typeof reason === 'string') assert.ok(text.endsWith(reason), `${text}\n  should end with: ${reason}`);
  else assert.match(text, reason);
  assert.equal(c.statusCode, undefined, 'no answer: nothing was sent');
  return c;
}

describe('ems-request: raw requests through the config node', () => {
  describe('on the simulator', () => {
    const sim = useSimulator({ frozen: false });
    useRuntime();

    it('GET round trip: payload (parsed JSON), statusCode, selected headers; the simulator logs the one request', async () => {
      const f = await loadFlow(flow(req(), cfg(sim.s.url)));
      const before = sim.s.sim.requestLog.length;
      const m = await f.ask({
        method: 'get',
        path: `/devices/${BAT}/measurements/map?properties=soc,power`,
        topic: 't',
      });
      assert.equal(m.statusCode, 200);
      assert.equal(m.topic, 't', 'the message is passed on');
      assert.equal(typeof m.payload.measurements.soc.value, 'number');
      assert.match(m.headers['content-type'], /application\/json/);
      const log = sim.s.sim.requestLog.slice(before);
      assert.deepEqual(
        log.map((e) => `${e.method} ${e.path}`),
        [`GET /devices/${BAT}/measurements/map?properties=soc,power`],
      );
      assert.match(f.status.all.at(-1).text, /^GET 200 · \d\d:\d\d/);
    });

    it('POST round trip: a steering body as JSON reaches the simulator and its answer comes back', async () => {
      const f = await loadFlow(flow(req({ method: 'POST', path: `/sites/${SITE}/steering/ess` }), cfg(sim.s.url)));
      const before = sim.s.sim.requestLog.length;
      const body = { setting: { value: -5, unit: 'kW' }, validUntil: Date.now() + 15 * 60_000 };
      const m = await f.ask({ body });
      assert.ok(m.statusCode >= 200 && m.statusCode < 300, String(m.statusCode));
      assert.equal(typeof m.payload, 'object');
      const log = sim.s.sim.requestLog.slice(before);
      assert.equal(log.length, 1);
      assert.equal(log[0].method, 'POST');
      assert.deepEqual(log[0].body, body);
    });

    it("a 404 is a Catch-able error; the Catch message carries statusCode, headers and the service's answer; no output", async () => {
      const f = await loadFlow(flow(req(), cfg(sim.s.url)));
      const c = await f.fails({ path: '/devices/dvc_NOPE/measurement?property=soc' });
      assert.equal(c.statusCode, 404);
      assert.match(
        c.error.message,
        /^NotFoundError: GET \/devices\/dvc_NOPE\/measurement\?property=soc failed: HTTP 404/,
      );
      assert.equal(typeof c.payload, 'object');
      assert.match(c.headers['content-type'], /json/);
      assert.equal(f.out.msgs.length, 0);
      assert.equal(f.status.all.at(-1).fill, 'red');
    });

    it("the node's method and path are the defaults; msg.method and msg.path override them", async () => {
      const f = await loadFlow(flow(req({ method: 'GET', path: '/devices' }), cfg(sim.s.url)));
      const before = sim.s.sim.requestLog.length;
      const devices = (await f.ask({})).payload;
      assert.ok(Array.isArray(devices.devices ?? devices));
      const m = await f.ask({ path: '/sites' });
      assert.ok(Array.isArray(m.payload.sites ?? m.payload));
      await refused(
        f,
        { method: 'TRACE' },
        'msg.method',
        'must be one of GET, POST, PUT, PATCH, DELETE (any case); got "TRACE"',
      );
      assert.deepEqual(
        sim.s.sim.requestLog.slice(before).map((e) => e.path),
        ['/devices', '/sites'],
      );
    });

    it('a bad node path or method is reported at deploy, and each message using it is refused (nothing sent)', async () => {
      const before = sim.s.sim.requestLog.length;
      const f = await loadFlow(flow(req({ method: 'TRACE', path: '//evil.example/x' }), cfg(sim.s.url)));
      const deploy = callsOf('error', 'n').map((a) => String(a[0]?.message ?? a[0]));
      assert.deepEqual(deploy, ['method must be one of GET, POST, PUT, PATCH, DELETE (any case); got "TRACE"']);
      await refused(f, { method: 'GET' }, 'path', '"//evil.example/x": a scheme-relative URL ("//host")');
      await refused(f, {}, 'method', /got "TRACE"$/);
      assert.equal(sim.s.sim.requestLog.length, before);
    });

    it('no path anywhere: refused, naming msg.path', async () => {
      const f = await loadFlow(flow(req(), cfg(sim.s.url)));
      const before = sim.s.sim.requestLog.length;
      await refused(f, { payload: 1 }, 'msg.path', 'got nothing: not set');
      assert.equal(sim.s.sim.requestLog.length, before);
    });
  });

  describe('refused forms of msg.path: each sends nothing (counted at the server)', () => {
    let srv: CountingServer;
    before(async () => {
      srv = await startCounting();
    });
    after(async () => {
      await srv.close();
    });
    useRuntime();
    /** The node on the counting server below /v1; `check` runs the refusals, then nothing may have reached the server. */
    async function nothingSent(check: (f: Loaded) => Promise<void>): Promise<void> {
      const f = await loadFlow(flow(req(), cfg(`${srv.url}/v1`)));
      srv.requests.length = 0;
      await check(f);
      assert.deepEqual(
        srv.requests.map((r) => r.url),
        [],
        'nothing reached the server',
      );
      // The same node still sends a good path (to the counting server, below /v1).
      assert.equal((await f.ask({ path: '/devices' })).payload.url, '/v1/devices');
    }
    const host = () => srv.url.replace(/^http:\/\//, '');

    it("absolute URLs, even to the base URL's own host: http://, https://", () =>
      nothingSent(async (f) => {
        await refused(f, { path: `${srv.url}/v1/devices` }, 'msg.path', /: an absolute URL \(scheme "http:"\)$/);
        await refused(f, { path: 'https://evil.example/steal' }, 'msg.path', /: an absolute URL \(scheme "https:"\)$/);
        await refused(f, { path: 'HTTP://evil.example/' }, 'msg.path', /\(scheme "http:"\)$/);
      }));

    it('any other scheme: mailto:, javascript:, file:, data:', () =>
      nothingSent(async (f) => {
        for (const [p, s] of [
          ['mailto:a@evil.example', 'mailto:'],
          ['javascript:alert(1)', 'javascript:'],
          ['file:///etc/passwd', 'file:'],
          ['data:text/plain,x', 'data:'],
        ]) {
          await refused(f, { path: p }, 'msg.path', `: an absolute URL (scheme "${s}")`);
        }
      }));

    it('scheme-relative //host (also to the own host)', () =>
      nothingSent(async (f) => {
        await refused(
          f,
          { path: '//evil.example/steal' },
          'msg.path',
          '"//evil.example/steal": a scheme-relative URL ("//host")',
        );
        await refused(f, { path: `//${host()}/v1/devices` }, 'msg.path', /a scheme-relative URL/);
      }));

    it('.. segments (and . segments, and "..;")', () =>
      nothingSent(async (f) => {
        for (const p of ['/../devices', '/devices/..', '/a/../../x', '/./devices', '/..;/admin']) {
          await refused(f, { path: p }, 'msg.path', ': a "." or ".." segment');
        }
      }));

    it('encoded dots %2e%2e, %2E%2e, .%2e, %2e, and encoded slashes', () =>
      nothingSent(async (f) => {
        for (const p of [
          '/%2e%2e/devices',
          '/%2E%2e/devices',
          '/.%2e/devices',
          '/%2e/devices',
          '/x/%2E%2E',
          '/..%2fadmin',
          '/a%2F..%2Fb',
        ]) {
          await refused(f, { path: p }, 'msg.path', ': an encoded dot, slash or backslash (%2e, %2f, %5c) in the path');
        }
      }));

    it('backslashes: \\\\host, /\\host, \\.., encoded %5c and %5C', () =>
      nothingSent(async (f) => {
        for (const p of ['\\\\evil.example\\x', '/\\evil.example', '/devices\\..\\admin', '\\devices']) {
          await refused(f, { path: p }, 'msg.path', ': a backslash');
        }
        for (const p of ['/%5cevil.example', '/%5Cevil.example/x']) {
          await refused(f, { path: p }, 'msg.path', ': an encoded dot, slash or backslash (%2e, %2f, %5c) in the path');
        }
      }));

    it('spaces, control characters, a fragment, a bad % escape, characters a path does not hold, no leading "/"', () =>
      nothingSent(async (f) => {
        await refused(f, { path: '/devices x' }, 'msg.path', ': a space or control character');
        await refused(f, { path: '/devices\r\nX-Injected: 1' }, 'msg.path', ': a space or control character');
        await refused(f, { path: '/devices\u0000' }, 'msg.path', ': a space or control character');
        await refused(f, { path: '/devices#frag' }, 'msg.path', ': a fragment ("#")');
        await refused(f, { path: '/devices%zz' }, 'msg.path', ': a "%" not followed by two hex digits');
        await refused(
          f,
          { path: '/dev<ices>' },
          'msg.path',
          ': the character "<" (encode it, e.g. with encodeURIComponent)',
        );
        await refused(
          f,
          { path: '/gerät' },
          'msg.path',
          ': the character "ä" (encode it, e.g. with encodeURIComponent)',
        );
        await refused(f, { path: 'devices' }, 'msg.path', ': not starting with "/"');
        await refused(f, { path: '' }, 'msg.path', 'got "": empty');
        await refused(f, { path: 42 }, 'msg.path', 'got 42: not a string');
        await refused(f, { path: `/${'x'.repeat(2100)}` }, 'msg.path', ': longer than 2048 characters');
      }));

    it('a bad method: TRACE, CONNECT, HEAD, OPTIONS, a number', () =>
      nothingSent(async (f) => {
        for (const m of ['TRACE', 'connect', 'HEAD', 'OPTIONS']) {
          await refused(
            f,
            { method: m, path: '/devices' },
            'msg.method',
            `must be one of GET, POST, PUT, PATCH, DELETE (any case); got ${JSON.stringify(m)}`,
          );
        }
        await refused(f, { method: 7, path: '/devices' }, 'msg.method', /got 7$/);
      }));

    it('a body with GET, a body that is not JSON, a body over maxBodyMB', async () => {
      const f = await loadFlow(flow(req(), cfg(srv.url, { maxBodyMB: 1 })));
      srv.requests.length = 0;
      await refused(f, { path: '/x', body: { a: 1 } }, 'msg.body', /must not be set for GET/);
      const circular: any = { a: 1 };
      circular.self = circular;
      await refused(
        f,
        { method: 'POST', path: '/x', body: circular },
        'msg.body',
        /must be JSON .*cannot be sent as JSON/,
      );
      const c = await f.fails({ method: 'POST', path: '/x', body: { blob: 'x'.repeat(1024 * 1024) } });
      assert.equal(
        c.error.message,
        'BadResponseError: POST /x request body is over the limit of 1 MB (maxBodyMB); not sent',
      );
      assert.equal(c.error.code, 'EMS_TOO_LARGE');
      assert.deepEqual(srv.requests, []);
    });

    it("paths that only look like another host stay on the base URL's origin and below its path", async () => {
      const f = await loadFlow(flow(req(), cfg(`${srv.url}/v1`)));
      srv.requests.length = 0;
      for (const p of [
        '/@evil.example/x',
        '/evil.example:80/x',
        '/%40evil.example',
        '/x?next=//evil.example/&u=http://evil.example',
      ]) {
        assert.equal((await f.ask({ path: p })).payload.url, `/v1${p}`, p);
      }
      assert.equal(srv.requests.length, 4);
      // Joined as the client joins it; the URL a parser reads stays on the origin, below /v1.
      for (const p of ['/@evil.example/x', '/x?u=http://evil.example'])
        assert.equal(requestUrl(`${srv.url}/v1/`, p, 'msg.path'), `${srv.url}/v1${p}`);
      assert.throws(() => requestUrl('http://127.0.0.1:1/v1', '/..', 'msg.path'), /"\.\." segment/);
    });
  });

  describe('answers and secrets (counting server)', () => {
    let srv: CountingServer;
    before(async () => {
      srv = await startCounting();
    });
    after(async () => {
      await srv.close();
    });
    useRuntime();

    /** Every form of `secret` that the message or anything the node said may not hold. */
    function assertClean(what: unknown, secret: string): void {
      const text = JSON.stringify(what);
      for (const form of formsOf(secret)) assert.ok(!text.includes(form), `${form} leaked: ${text.slice(0, 300)}`);
    }
    /** The server echoes every request header in its answer headers and in its body, in several encodings. */
    const echoAll = (status: number) => (r: { headers: Record<string, unknown>; url: string }) => {
      const creds = Object.values(r.headers).filter((v): v is string => typeof v === 'string');
      const key = String(
        r.headers['x-api-key'] ??
          r.headers['x-partner-key'] ??
          String(r.headers.authorization ?? '').replace(/^Bearer /, ''),
      );
      return {
        status,
        headers: {
          'x-api-key': key,
          'x-partner-key': key,
          authorization: `Bearer ${key}`,
          'set-cookie': [`session=${key}`],
          'www-authenticate': `Bearer realm="${key}"`,
          'x-request-id': `req-${key}`,
          'x-debug-echo': key,
          'ratelimit-remaining': '99',
          'retry-after': '0',
        },
        body: {
          message: `bad key ${key}`,
          headers: r.headers,
          b64: Buffer.from(key).toString('base64'),
          enc: encodeURIComponent(key),
          [key]: creds,
          requestId: `rid-${key}`,
        },
      };
    };
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['x-api-key', { authType: 'header' }, 'k-RAW+secret/9x=='],
      ['a custom header name', { authType: 'header', apiKeyHeader: 'X-Partner-Key' }, 'k-CUSTOM+secret/7y=='],
      ['bearer', { authType: 'bearer' }, 't-BEARER+secret/5z=='],
    ];
    for (const [name, auth, secret] of cases) {
      it(`auth by ${name}: sent to the service, never echoed in msg.headers, the message, the status or an error`, async () => {
        srv.answer = echoAll(200);
        const f = await loadFlow(flow(req(), cfg(srv.url, auth)), { cfg: { apiKey: secret } });
        srv.requests.length = 0;
        const m = await f.ask({ path: '/anything' });
        const sent = srv.requests[0].headers;
        assert.ok(
          Object.values(sent).some((v) => typeof v === 'string' && v.includes(secret)),
          'the credential went to the service',
        );
        assert.deepEqual(Object.keys(m.headers).sort(), [
          'content-length',
          'content-type',
          'date',
          'ratelimit-remaining',
          'retry-after',
          'x-request-id',
        ]);
        assert.equal(m.headers['x-request-id'], 'req-***');
        assert.equal(m.payload.message, 'bad key ***');
        assert.equal(m.payload['***'].length > 0, true, 'an echoed key as a JSON key is masked too');
        assertClean(m, secret);

        srv.answer = echoAll(401);
        const c = await f.fails({ path: '/anything' });
        assert.equal(c.statusCode, 401);
        assert.match(
          c.error.message,
          /^AuthenticationError: GET \/anything failed: HTTP 401 bad key \*\*\* \(requestId rid-\*\*\*\)$/,
        );
        assert.ok(
          !('set-cookie' in c.headers) && !('www-authenticate' in c.headers) && !('authorization' in c.headers),
        );
        assertClean([c, f.status.all, callsOf('error', 'n'), callsOf('warn', 'n')], secret);
        srv.answer = (r) => ({ body: { url: r.url } });
      });
    }

    it('an answer that is not JSON gives its text; JSON gives objects whatever its content-type; no body gives ""', async () => {
      const f = await loadFlow(flow(req(), cfg(srv.url)));
      srv.answer = (r) =>
        r.url === '/csv'
          ? { body: 'a;b\n1;2\n', headers: { 'content-type': 'text/csv' } }
          : r.url === '/html'
            ? { body: '<html><body>hi</body></html>', headers: { 'content-type': 'text/html' } }
            : r.url === '/jsontext'
              ? { body: '{"a":[1,2]}', headers: { 'content-type': 'text/plain' } }
              : r.url === '/broken'
                ? { body: '{"a":', headers: { 'content-type': 'application/json' } }
                : { status: 204 };
      assert.equal((await f.ask({ path: '/csv' })).payload, 'a;b\n1;2\n');
      assert.equal((await f.ask({ path: '/html' })).payload, '<html><body>hi</body></html>');
      assert.deepEqual((await f.ask({ path: '/jsontext' })).payload, { a: [1, 2] });
      assert.equal((await f.ask({ path: '/broken' })).payload, '{"a":');
      const empty = await f.ask({ method: 'DELETE', path: '/thing' });
      assert.deepEqual([empty.statusCode, empty.payload], [204, '']);
      srv.answer = (r) => ({ body: { url: r.url } });
    });

    it('a text, Buffer or JSON body goes with its content-type; PUT and PATCH are sent upper-case', async () => {
      const f = await loadFlow(flow(req(), cfg(srv.url)));
      srv.requests.length = 0;
      srv.answer = (r) => ({ body: { url: r.url } });
      await f.ask({ method: 'put', path: '/a', body: 'plain text' });
      await f.ask({ method: 'Patch', path: '/b', body: Buffer.from([1, 2, 3]) });
      await f.ask({ method: 'post', path: '/c', body: [1, { x: true }] });
      assert.deepEqual(
        srv.requests.map((r) => [r.method, r.url, String(r.headers['content-type']).split(';')[0], r.body]),
        [
          ['PUT', '/a', 'text/plain', 'plain text'],
          ['PATCH', '/b', 'application/octet-stream', '\u0001\u0002\u0003'],
          ['POST', '/c', 'application/json', '[1,{"x":true}]'],
        ],
      );
    });

    it("an answer over maxBodyMB fails with EMS_TOO_LARGE (the client's limit); the node stays usable", async () => {
      const f = await loadFlow(flow(req(), cfg(srv.url, { maxBodyMB: 1 })));
      srv.answer = (r) => (r.url === '/big' ? { body: 'x'.repeat(1024 * 1024 + 10) } : { body: { ok: true } });
      const c = await f.fails({ path: '/big' });
      assert.equal(c.error.message, 'BadResponseError: GET /big answer is over the limit of 1 MB (maxBodyMB)');
      assert.equal(c.error.code, 'EMS_TOO_LARGE');
      assert.deepEqual((await f.ask({ path: '/small' })).payload, { ok: true });
      srv.answer = (r) => ({ body: { url: r.url } });
    });

    it('a redirect is not followed (credentials never go to its target): a Catch-able error with statusCode and location', async () => {
      const other = await startCounting();
      try {
        const f = await loadFlow(flow(req(), cfg(srv.url, { authType: 'header' })), {
          cfg: { apiKey: 'k-REDIRECT-1' },
        });
        srv.answer = () => ({ status: 302, headers: { location: `${other.url}/steal` }, body: '' });
        const c = await f.fails({ path: '/moved' });
        assert.equal(c.statusCode, 302);
        assert.equal(c.headers.location, `${other.url}/steal`);
        assert.deepEqual(other.requests, [], 'nothing reached the redirect target');
      } finally {
        await other.close();
        srv.answer = (r) => ({ body: { url: r.url } });
      }
    });

    it('a GET is retried on 503 like any read; a POST on 503 too, never on 500', async () => {
      const f = await loadFlow(flow(req(), cfg(srv.url, { retries: 2 })));
      let n = 0;
      srv.answer = () =>
        ++n === 1 ? { status: 503, headers: { 'retry-after': '0' }, body: { message: 'busy' } } : { body: { n } };
      srv.requests.length = 0;
      assert.deepEqual((await f.ask({ path: '/r' })).payload, { n: 2 });
      n = 0;
      assert.deepEqual((await f.ask({ method: 'POST', path: '/r', body: {} })).payload, { n: 2 });
      srv.answer = () => ({ status: 500, body: { message: 'broken' } });
      srv.requests.length = 0;
      const c = await f.fails({ method: 'POST', path: '/r', body: {} });
      assert.equal(c.statusCode, 500);
      assert.equal(srv.requests.length, 1, 'a POST is not retried on 500');
      srv.answer = (r) => ({ body: { url: r.url } });
    });
  });

  describe('the client and its parts', () => {
    it('raw() on a closed client sends nothing; requestPathProblem accepts good paths', async () => {
      const srv = await startCounting();
      try {
        const client = new EmsClient({ baseUrl: srv.url, retries: 0 });
        assert.equal((await client.raw('GET', '/ok?x=1&y=a,b')).statusCode, 200);
        client.close();
        await assert.rejects(client.raw('GET', '/x'), /not sent: client closed/);
        assert.equal(srv.requests.length, 1);
      } finally {
        await srv.close();
      }
      for (const p of [
        '/devices',
        '/devices/dvc_1/measurement?property=soc',
        '/sites/ste%201/x',
        '/a:b/@c',
        "/x!$&'()*+,;=",
        '/x?a=b/c?d',
      ]) {
        assert.equal(requestPathProblem(p), undefined, p);
        assert.equal(checkRequestPath(p, 'msg.path'), p);
      }
    });

    it('answers: keys and values masked, every encoding; JSON nested deeper than 64 levels stays text; headers selected', () => {
      const r = new Redactor(['s3cr3t-KEY/+=']);
      const deep = `${'['.repeat(70)}1${']'.repeat(70)}`;
      assert.equal(answerPayload(deep, r), deep);
      // (JSON may escape "/" as "\/": the text does not hold the secret, the parsed value does.)
      const json = `{"s3cr3t-KEY/+=":1,"a":["x s3cr3t-KEY/+= y","${Buffer.from('s3cr3t-KEY/+=').toString('base64')}"],"u":"s3cr3t-KEY\\/+="}`;
      const p = answerPayload(json, r) as any;
      assert.deepEqual(p, { '***': 1, a: ['x *** y', '***'], u: '***' });
      const h = selectHeaders(
        {
          'Content-Type': 'application/json',
          'X-Api-Key': 's',
          Authorization: 'Bearer s',
          'Set-Cookie': ['a=1'],
          'X-My-Key': 'v',
          'x-request-id': 'id s3cr3t-KEY/+=',
        },
        r,
        'x-request-id',
      );
      assert.deepEqual(
        h,
        { 'content-type': 'application/json' },
        'the configured key header is never relayed, even one named like a listed header',
      );
    });
  });
});
