import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { callsOf, cfg, flow, helper, loadFlow, StatusLog, useRuntime, useSimulator } from '../../helpers/red';
import { read, series, steer } from '../../helpers/battery-nodes';

const KEY = 'k-SECRET-123';

/** Everything the runtime let out of the nodes: messages, statuses, errors, warnings, log lines. */
function everything(ids: string[], extra: unknown[]): string {
  const calls = ids.flatMap((id) => ['status', 'error', 'warn', 'log', 'send'].flatMap((m) => callsOf(m, id)));
  const log = ((helper as any)._logSpy?.getCalls() ?? []).map((c: { args: unknown[] }) => c.args);
  return JSON.stringify([calls, log, extra], (_k, v) =>
    v instanceof Error ? `${v.name}: ${v.message} ${v.stack}` : v,
  );
}

describe('nodes: ems-partner-config', () => {
  describe('with a simulator that needs a key', () => {
    const sim = useSimulator({ frozen: false, apiKey: KEY });
    useRuntime();
    const secure = () => cfg(sim.s.url, { authType: 'header', apiKeyHeader: 'x-api-key' });
    const creds = { cfg: { apiKey: KEY } };

    it('the key reaches the client and never a message, status, error or log', async () => {
      const deployed = await loadFlow(
        flow(
          read(),
          secure(),
          { id: 'ts', ...series(), server: 'cfg', wires: [['out']] },
          { id: 'st', ...steer(), server: 'cfg', wires: [['out']] },
        ),
        creds,
      );
      const reply = await deployed.ask();
      assert.equal(typeof reply.payload.soc, 'number');
      const via = (id: string, msg: object) => {
        const [o, c] = [deployed.out.msgs.length, deployed.caught.msgs.length];
        helper.getNode(id).receive(msg);
        return { o, c };
      };
      via('ts', {});
      await deployed.out.count(2);
      via('st', { payload: 5 });
      const [, , s] = await deployed.out.count(3);
      assert.match(s.payload.requestId, /^req_/);
      // Failures: an unknown device (404 from the service) and a refused input.
      await deployed.fails({ deviceReference: 'dvc_nosuchdevice' });
      via('st', { payload: 'lots' });
      await deployed.caught.count(2);
      const res = await helper.request().post('/ems-partner/devices').send({ server: 'cfg' });
      assert.equal(res.status, 200);
      const all = everything(['n', 'ts', 'st', 'cfg'], [deployed.out.msgs, deployed.caught.msgs, res.body, res.text]);
      assert.ok(all.includes('dvc_nosuchdevice'), 'the check looks at the errors');
      assert.ok(!all.includes(KEY), 'the key leaked');
      assert.ok(!all.includes('SECRET'));
    });

    it('a wrong key gives a 401 error without the key, and the nodes show it', async () => {
      const deployed = await loadFlow(
        flow(read(), secure(), { id: 'ts', ...series(), server: 'cfg', wires: [['out']] }),
        {
          cfg: { apiKey: 'k-WRONG-456' },
        },
      );
      const ts = new StatusLog(helper.getNode('ts'));
      const shown = ts.wait((s) => s.fill === 'red', 5_000, 'connection state on the other node');
      const caught = await deployed.fails();
      assert.match(caught.error.message, /HTTP 401/);
      assert.match((await shown).text, /HTTP 401: check credentials/);
      const all = everything(['n', 'ts', 'cfg'], [deployed.caught.msgs]);
      assert.ok(!all.includes('k-WRONG-456') && !all.includes(KEY));
      const test = await helper.request().post('/ems-partner/test').send({ server: 'cfg' });
      assert.equal(test.body.ok, false);
      assert.match(test.body.message, /401/);
      assert.ok(!test.text.includes('WRONG'));
    });

    it('a missing key is a configuration error naming apiKey, on every message', async () => {
      const deployed = await loadFlow(flow(read(), secure()));
      const received = sim.s.sim.requestsReceived;
      for (let i = 0; i < 2; i++) assert.match((await deployed.fails()).error.message, /apiKey is required/);
      assert.equal(sim.s.sim.requestsReceived, received);
    });

    it('a key header that is not an HTTP token or that the transport owns, or a line break in the key, is refused by the runtime and Test connection, naming it; nothing is sent', async () => {
      const received = sim.s.sim.requestsReceived;
      const body = { baseUrl: sim.s.url, simulator: false, authType: 'header' };
      const cases: Array<[Record<string, unknown>, string, RegExp]> = [
        [
          { apiKeyHeader: 'X-Evil: injected\r\nx-api-key' },
          KEY,
          /apiKeyHeader "X-Evil: injected\\r\\nx-api-key" is not an HTTP header name \(RFC 9110 token\): it has a line break$/,
        ],
        [
          { apiKeyHeader: 'host' },
          KEY,
          /apiKeyHeader "host" names a header the transport sets \(host\); the key goes in another, e\.g\. "x-api-key"$/,
        ],
        [
          { apiKeyHeader: 'Proxy-Authorization' },
          KEY,
          /apiKeyHeader "Proxy-Authorization" names a header the transport sets \(proxy-\*\);/,
        ],
        [
          { apiKeyHeader: 'Content-Length' },
          KEY,
          /apiKeyHeader "Content-Length" names a header the transport sets \(content-length\);/,
        ],
        [
          { apiKeyHeader: 'x-api-key' },
          `${KEY}\r\nx-evil: injected`,
          /apiKey holds a line break \(character 13 of 30\); it is refused, not removed/,
        ],
      ];
      for (const [props, key, expected] of cases) {
        const headerFlow = await loadFlow(flow(read(), cfg(sim.s.url, { authType: 'header', ...props })), {
          cfg: { apiKey: key },
        });
        const failed = (await headerFlow.fails()).error;
        assert.match(failed.message, expected);
        const test = await helper
          .request()
          .post('/ems-partner/test')
          .send({ config: { ...body, ...props, apiKey: key } })
          .expect(200);
        assert.equal(test.body.ok, false, JSON.stringify(props));
        assert.match(test.body.message, expected);
        const deployed = await helper.request().post('/ems-partner/test').send({ server: 'cfg' }).expect(200);
        assert.equal(deployed.body.ok, false);
        for (const text of [failed.message, test.text, deployed.text]) assert.ok(!text.includes(KEY), text);
      }
      assert.equal(sim.s.sim.requestsReceived, received, 'nothing reached the service');
    });

    it('a line break before or after the base URL is refused by the runtime and Test connection, not trimmed away; nothing is sent', async () => {
      const received = sim.s.sim.requestsReceived;
      for (const [baseUrl, at] of [
        [`${sim.s.url}\r\n`, `${sim.s.url.length + 1} of ${sim.s.url.length + 2}`],
        [`\n${sim.s.url}`, `1 of ${sim.s.url.length + 1}`],
      ]) {
        const deployed = await loadFlow(flow(read(), cfg(baseUrl)));
        const expected = new RegExp(`baseUrl holds a line break \\(character ${at}\\); it is refused, not removed`);
        assert.match((await deployed.fails()).error.message, expected);
        const test = await helper
          .request()
          .post('/ems-partner/test')
          .send({ config: { baseUrl, simulator: false, authType: 'none' } })
          .expect(200);
        assert.equal(test.body.ok, false, JSON.stringify(baseUrl));
        assert.match(test.body.message, expected);
      }
      assert.equal(sim.s.sim.requestsReceived, received, 'nothing reached the service');
    });

    it('admin endpoints: devices, sites and test for a deployed config (by id)', async () => {
      await loadFlow(flow(read(), secure()), creds);
      const devices = await helper.request().post('/ems-partner/devices').send({ server: 'cfg' }).expect(200);
      assert.equal(devices.body.length, 6);
      assert.ok(
        devices.body.every(
          (d: { deviceReference: string; properties: unknown[] }) =>
            /^dvc_/.test(d.deviceReference) && d.properties.length > 0,
        ),
      );
      const sites = await helper.request().post('/ems-partner/sites').send({ server: 'cfg' }).expect(200);
      assert.deepEqual(
        sites.body.map((s: { siteReference: string }) => s.siteReference),
        DEFAULT_SITES.map((s) => s.siteReference),
      );
      const test = await helper.request().post('/ems-partner/test').send({ server: 'cfg' }).expect(200);
      assert.deepEqual(test.body, {
        ok: true,
        message: `connected to ${new URL(sim.s.url).host}: 6 devices`,
        devices: 6,
      });
      for (const r of [devices, sites, test]) assert.ok(!r.text.includes(KEY));
    });

    it('admin endpoints: an undeployed config body (its own key, or the deployed one behind the placeholder)', async () => {
      await loadFlow(flow(read(), secure()), creds);
      const body = { baseUrl: sim.s.url, simulator: false, authType: 'header', apiKeyHeader: 'x-api-key' };
      const own = await helper
        .request()
        .post('/ems-partner/test')
        .send({ config: { ...body, apiKey: KEY } })
        .expect(200);
      assert.equal(own.body.ok, true);
      const stored = await helper
        .request()
        .post('/ems-partner/devices')
        .send({ server: 'cfg', config: { ...body, apiKey: '__PWRD__' } })
        .expect(200);
      assert.equal(stored.body.length, 6);
      const none = await helper
        .request()
        .post('/ems-partner/devices')
        .send({ config: { ...body } });
      assert.equal(none.status, 502);
      assert.match(none.body.message, /apiKey is required/);
      const wrong = await helper
        .request()
        .post('/ems-partner/test')
        .send({ config: { ...body, apiKey: 'k-WRONG-456' } })
        .expect(200);
      assert.equal(wrong.body.ok, false);
      assert.ok(!wrong.text.includes('WRONG'));
      const unknown = await helper.request().post('/ems-partner/sites').send({ server: 'nope' });
      assert.equal(unknown.status, 502);
      assert.match(unknown.body.message, /unknown config node/);
    });

    it('admin endpoints: the stored key only for the deployed settings; only JSON bodies', async () => {
      await loadFlow(flow(read(), secure()), creds);
      const received = sim.s.sim.requestsReceived;
      const body = { baseUrl: sim.s.url, simulator: false, authType: 'header', apiKeyHeader: 'x-api-key' };
      // The same settings, or any other unsaved setting that does not decide where the key goes, use it.
      const same = await helper
        .request()
        .post('/ems-partner/devices')
        .send({ server: 'cfg', config: { ...body, timeout: 2000 } })
        .expect(200);
      assert.equal(same.body.length, 6);
      const moved = await helper
        .request()
        .post('/ems-partner/devices')
        .send({ server: 'cfg', config: { ...body, apiKeyHeader: 'x-other' } });
      assert.equal(moved.status, 403);
      assert.deepEqual(moved.body, {
        error: 'stored credentials refused',
        message: 'the stored API key is used only with the deployed apiKeyHeader; type it to try these settings',
      });
      const test = await helper
        .request()
        .post('/ems-partner/test')
        .send({ server: 'cfg', config: { ...body, baseUrl: `${sim.s.url}/v2` } });
      assert.equal(test.status, 403);
      assert.equal(test.body.ok, false);
      const form = await helper.request().post('/ems-partner/devices').type('form').send({ server: 'cfg' });
      assert.equal(form.status, 415);
      // The editor asks by id first; this answer tells it to send the settings instead.
      const unknown = await helper.request().post('/ems-partner/test').send({ server: 'nope' });
      assert.deepEqual([unknown.status, unknown.body.error], [502, 'unknown config node']);
      assert.equal(sim.s.sim.requestsReceived, received + 1, 'only the allowed request reached the service');
      for (const r of [same, moved, test, form]) assert.ok(!r.text.includes(KEY));
    });
  });
});
