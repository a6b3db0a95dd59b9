/**
 * Raw requests: the `ems-request` node sends msg.method, msg.path and msg.body through
 * the config node's client. Round trips on the simulator and on a counting server; every
 * refused form of msg.path (and a bad method, a GET body, a body over maxBodyMB) ends in one
 * Catch-able error naming the field and the accepted form, with NOTHING sent (counted at the
 * server, or in the simulator's request log); credentials the service echoes in headers and
 * body never reach msg.headers, the message or an error; an answer over maxBodyMB fails; text
 * stays text; a non-2xx answer is a Catch-able error whose message carries the answer.
 */
import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { formsOf } from '../../helpers/hostile-server';
import { startCounting, type CountingServer } from '../../helpers/counting-server';
import { callsOf, cfg, flow, loadFlow, useRuntime, useSimulator } from '../../helpers/red';
import { refused, req } from './refusal';

const BAT = DEFAULT_SITES[0].battery.deviceReference;
const SITE = DEFAULT_SITES[0].siteReference;
describe('ems-request: raw requests through the config node', () => {
  describe('on the simulator', () => {
    const sim = useSimulator({ frozen: false });
    useRuntime();

    it('GET round trip: payload (parsed JSON), statusCode, selected headers; the simulator logs the one request', async () => {
      const deployed = await loadFlow(flow(req(), cfg(sim.s.url)));
      const before = sim.s.sim.requestLog.length;
      const reply = await deployed.ask({
        method: 'get',
        path: `/devices/${BAT}/measurements/map?properties=soc,power`,
        topic: 't',
      });
      assert.equal(reply.statusCode, 200);
      assert.equal(reply.topic, 't', 'the message is passed on');
      assert.equal(typeof reply.payload.measurements.soc.value, 'number');
      assert.match(reply.headers['content-type'], /application\/json/);
      const log = sim.s.sim.requestLog.slice(before);
      assert.deepEqual(
        log.map((e) => `${e.method} ${e.path}`),
        [`GET /devices/${BAT}/measurements/map?properties=soc,power`],
      );
      assert.match(deployed.status.all.at(-1).text, /^GET 200 · \d\d:\d\d/);
    });

    it('POST round trip: a steering body as JSON reaches the simulator and its answer comes back', async () => {
      const deployed = await loadFlow(
        flow(req({ method: 'POST', path: `/sites/${SITE}/steering/ess` }), cfg(sim.s.url)),
      );
      const before = sim.s.sim.requestLog.length;
      const body = { setting: { value: -5, unit: 'kW' }, validUntil: Date.now() + 15 * 60_000 };
      const reply = await deployed.ask({ body });
      assert.ok(reply.statusCode >= 200 && reply.statusCode < 300, String(reply.statusCode));
      assert.equal(typeof reply.payload, 'object');
      const log = sim.s.sim.requestLog.slice(before);
      assert.equal(log.length, 1);
      assert.equal(log[0].method, 'POST');
      assert.deepEqual(log[0].body, body);
    });

    it("a 404 is a Catch-able error; the Catch message carries statusCode, headers and the service's answer; no output", async () => {
      const deployed = await loadFlow(flow(req(), cfg(sim.s.url)));
      const caught = await deployed.fails({ path: '/devices/dvc_NOPE/measurement?property=soc' });
      assert.equal(caught.statusCode, 404);
      assert.match(
        caught.error.message,
        /^NotFoundError: GET \/devices\/dvc_NOPE\/measurement\?property=soc failed: HTTP 404/,
      );
      assert.equal(typeof caught.payload, 'object');
      assert.match(caught.headers['content-type'], /json/);
      assert.equal(deployed.out.msgs.length, 0);
      assert.equal(deployed.status.all.at(-1).fill, 'red');
    });

    it("the node's method and path are the defaults; msg.method and msg.path override them", async () => {
      const deployed = await loadFlow(flow(req({ method: 'GET', path: '/devices' }), cfg(sim.s.url)));
      const before = sim.s.sim.requestLog.length;
      const devices = (await deployed.ask({})).payload;
      assert.ok(Array.isArray(devices.devices ?? devices));
      const reply = await deployed.ask({ path: '/sites' });
      assert.ok(Array.isArray(reply.payload.sites ?? reply.payload));
      await refused(
        deployed,
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
      const deployed = await loadFlow(flow(req({ method: 'TRACE', path: '//evil.example/x' }), cfg(sim.s.url)));
      const deploy = callsOf('error', 'n').map((a) => String(a[0]?.message ?? a[0]));
      assert.deepEqual(deploy, ['method must be one of GET, POST, PUT, PATCH, DELETE (any case); got "TRACE"']);
      await refused(deployed, { method: 'GET' }, 'path', '"//evil.example/x": a scheme-relative URL ("//host")');
      await refused(deployed, {}, 'method', /got "TRACE"$/);
      assert.equal(sim.s.sim.requestLog.length, before);
    });

    it('no path anywhere: refused, naming msg.path', async () => {
      const deployed = await loadFlow(flow(req(), cfg(sim.s.url)));
      const before = sim.s.sim.requestLog.length;
      await refused(deployed, { payload: 1 }, 'msg.path', 'got nothing: not set');
      assert.equal(sim.s.sim.requestLog.length, before);
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
        const deployed = await loadFlow(flow(req(), cfg(srv.url, auth)), { cfg: { apiKey: secret } });
        srv.requests.length = 0;
        const reply = await deployed.ask({ path: '/anything' });
        const sent = srv.requests[0].headers;
        assert.ok(
          Object.values(sent).some((v) => typeof v === 'string' && v.includes(secret)),
          'the credential went to the service',
        );
        assert.deepEqual(Object.keys(reply.headers).sort(), [
          'content-length',
          'content-type',
          'date',
          'ratelimit-remaining',
          'retry-after',
          'x-request-id',
        ]);
        assert.equal(reply.headers['x-request-id'], 'req-***');
        assert.equal(reply.payload.message, 'bad key ***');
        assert.equal(reply.payload['***'].length > 0, true, 'an echoed key as a JSON key is masked too');
        assertClean(reply, secret);

        srv.answer = echoAll(401);
        const caught = await deployed.fails({ path: '/anything' });
        assert.equal(caught.statusCode, 401);
        assert.match(
          caught.error.message,
          /^AuthenticationError: GET \/anything failed: HTTP 401 bad key \*\*\* \(requestId rid-\*\*\*\)$/,
        );
        assert.ok(
          !('set-cookie' in caught.headers) &&
            !('www-authenticate' in caught.headers) &&
            !('authorization' in caught.headers),
        );
        assertClean([caught, deployed.status.all, callsOf('error', 'n'), callsOf('warn', 'n')], secret);
        srv.answer = (r) => ({ body: { url: r.url } });
      });
    }

    it('an answer that is not JSON gives its text; JSON gives objects whatever its content-type; no body gives ""', async () => {
      const deployed = await loadFlow(flow(req(), cfg(srv.url)));
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
      assert.equal((await deployed.ask({ path: '/csv' })).payload, 'a;b\n1;2\n');
      assert.equal((await deployed.ask({ path: '/html' })).payload, '<html><body>hi</body></html>');
      assert.deepEqual((await deployed.ask({ path: '/jsontext' })).payload, { a: [1, 2] });
      assert.equal((await deployed.ask({ path: '/broken' })).payload, '{"a":');
      const empty = await deployed.ask({ method: 'DELETE', path: '/thing' });
      assert.deepEqual([empty.statusCode, empty.payload], [204, '']);
      srv.answer = (r) => ({ body: { url: r.url } });
    });

    it('a text, Buffer or JSON body goes with its content-type; PUT and PATCH are sent upper-case', async () => {
      const deployed = await loadFlow(flow(req(), cfg(srv.url)));
      srv.requests.length = 0;
      srv.answer = (r) => ({ body: { url: r.url } });
      await deployed.ask({ method: 'put', path: '/a', body: 'plain text' });
      await deployed.ask({ method: 'Patch', path: '/b', body: Buffer.from([1, 2, 3]) });
      await deployed.ask({ method: 'post', path: '/c', body: [1, { x: true }] });
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
      const deployed = await loadFlow(flow(req(), cfg(srv.url, { maxBodyMB: 1 })));
      srv.answer = (r) => (r.url === '/big' ? { body: 'x'.repeat(1024 * 1024 + 10) } : { body: { ok: true } });
      const caught = await deployed.fails({ path: '/big' });
      assert.equal(caught.error.message, 'BadResponseError: GET /big answer is over the limit of 1 MB (maxBodyMB)');
      assert.equal(caught.error.code, 'EMS_TOO_LARGE');
      assert.deepEqual((await deployed.ask({ path: '/small' })).payload, { ok: true });
      srv.answer = (r) => ({ body: { url: r.url } });
    });

    it('a redirect is not followed (credentials never go to its target): a Catch-able error with statusCode and location', async () => {
      const other = await startCounting();
      try {
        const deployed = await loadFlow(flow(req(), cfg(srv.url, { authType: 'header' })), {
          cfg: { apiKey: 'k-REDIRECT-1' },
        });
        srv.answer = () => ({ status: 302, headers: { location: `${other.url}/steal` }, body: '' });
        const caught = await deployed.fails({ path: '/moved' });
        assert.equal(caught.statusCode, 302);
        assert.equal(caught.headers.location, `${other.url}/steal`);
        assert.deepEqual(other.requests, [], 'nothing reached the redirect target');
      } finally {
        await other.close();
        srv.answer = (r) => ({ body: { url: r.url } });
      }
    });

    it('a GET is retried on 503 like any read; a POST on 503 too, never on 500', async () => {
      const deployed = await loadFlow(flow(req(), cfg(srv.url, { retries: 2 })));
      let count = 0;
      srv.answer = () =>
        ++count === 1
          ? { status: 503, headers: { 'retry-after': '0' }, body: { message: 'busy' } }
          : { body: { n: count } };
      srv.requests.length = 0;
      assert.deepEqual((await deployed.ask({ path: '/r' })).payload, { n: 2 });
      count = 0;
      assert.deepEqual((await deployed.ask({ method: 'POST', path: '/r', body: {} })).payload, { n: 2 });
      srv.answer = () => ({ status: 500, body: { message: 'broken' } });
      srv.requests.length = 0;
      const caught = await deployed.fails({ method: 'POST', path: '/r', body: {} });
      assert.equal(caught.statusCode, 500);
      assert.equal(srv.requests.length, 1, 'a POST is not retried on 500');
      srv.answer = (r) => ({ body: { url: r.url } });
    });
  });
});
