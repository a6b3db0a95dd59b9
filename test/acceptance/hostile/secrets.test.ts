/**
 * A hostile service echoes every credential it receives (API key, bearer
 * token, OAuth2 client secret, the OAuth2 access token it issued) raw, URL-encoded,
 * form-encoded and base64-encoded, in error messages, requestIds (body and x-request-id) and
 * deep inside steering answers. None of those forms may reach an error, a message, the log,
 * a status or an admin reply.
 */
import assert from 'node:assert/strict';
import { ApiError, EmsClient, type AuthConfig } from '../../../src/client';
import { helper, NODES, Inbox, until, useRuntime, callsOf } from '../../helpers/red';
import { useCrashWatch } from '../../helpers/faults';
import { startHostile, type HostileServer } from '../../helpers/hostile-server';
import { API_KEY, BEARER, CLIENT_SECRET, leaks, TOKEN, WRONG_SECRET } from '../../helpers/secrets';

const AUTHS = (h: HostileServer): Record<string, AuthConfig> => ({
  header: { type: 'header', apiKey: API_KEY, header: 'x-api-key' },
  bearer: { type: 'bearer', token: BEARER },
  oauth2: { type: 'oauth2', tokenUrl: `${h.url}/oauth/token`, clientId: 'partner', clientSecret: CLIENT_SECRET },
  'oauth2, wrong secret': {
    type: 'oauth2',
    tokenUrl: `${h.url}/oauth/token`,
    clientId: 'partner',
    clientSecret: WRONG_SECRET,
  },
});

describe('hostile service echoing credentials: the client', function () {
  this.timeout(30_000);
  let hostile: HostileServer;
  before(async () => {
    hostile = await startHostile({ mode: 'echo', clientSecret: CLIENT_SECRET, token: TOKEN });
  });
  after(async () => {
    await hostile.close();
  });

  it('no form of any secret in errors, requestIds, service messages or steering answers', async () => {
    let errors = 0;
    let answers = 0;
    for (const [name, auth] of Object.entries(AUTHS(hostile))) {
      const client = new EmsClient({ baseUrl: hostile.url, auth, retries: 0 });
      const calls = [
        () => client.getMeasurement('dvc_a', 'soc'),
        () => client.listDevices(),
        () => client.steerEss('ste_a', { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() + 600_000 }),
      ];
      for (const call of calls) {
        try {
          const answer = await call();
          answers++;
          assert.deepEqual(leaks(JSON.stringify(answer)), [], `${name}: answer`);
          assert.match(JSON.stringify(answer), /\*\*\*/, `${name}: the echo is kept, masked`);
        } catch (e) {
          errors++;
          assert.ok(e instanceof ApiError, String(e));
          const text = [
            String(e),
            e.stack,
            e.serviceMessage,
            e.requestId,
            JSON.stringify(e),
            JSON.stringify(Object.entries(e)),
          ].join('\n');
          assert.deepEqual(leaks(text), [], `${name}: ${text.slice(0, 300)}`);
        }
      }
      client.close();
    }
    assert.equal(answers, 3, 'steering answered 200 for header, bearer and oauth2');
    assert.equal(errors, 9);
    assert.ok(hostile.tokensIssued >= 1, 'the access token was fetched (and then echoed)');
    assert.ok(hostile.received.some((r) => r.headers.authorization === `Bearer ${TOKEN}`));
  });
});

describe('hostile service echoing credentials: Node-RED', function () {
  this.timeout(60_000);
  useRuntime();
  const crashes = useCrashWatch();
  let hostile: HostileServer;
  before(async () => {
    hostile = await startHostile({ mode: 'echo', clientSecret: CLIENT_SECRET, token: TOKEN });
  });
  after(async () => {
    await hostile.close();
  });

  it('no form of any secret in done(err), the log, statuses, messages, exported flows or admin replies', async () => {
    const configs = [
      {
        id: 'h',
        type: 'ems-partner-config',
        baseUrl: hostile.url,
        simulator: false,
        authType: 'header',
        apiKeyHeader: 'x-api-key',
        retries: 0,
      },
      { id: 'b', type: 'ems-partner-config', baseUrl: hostile.url, simulator: false, authType: 'bearer', retries: 0 },
      {
        id: 'o',
        type: 'ems-partner-config',
        baseUrl: hostile.url,
        simulator: false,
        authType: 'oauth2',
        tokenUrl: `${hostile.url}/oauth/token`,
        clientId: 'partner',
        retries: 0,
      },
      {
        id: 'w',
        type: 'ems-partner-config',
        baseUrl: hostile.url,
        simulator: false,
        authType: 'oauth2',
        tokenUrl: `${hostile.url}/oauth/token`,
        clientId: 'partner',
        retries: 0,
      },
    ];
    const flow: object[] = [
      ...configs,
      { id: 'out', type: 'helper' },
      { id: 'c', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', type: 'helper' },
    ];
    for (const c of configs) {
      flow.push(
        {
          id: `r${c.id}`,
          type: 'ems-device-read',
          server: c.id,
          device: 'dvc_a',
          deviceType: 'str',
          mode: 'single',
          properties: 'soc',
          propertiesType: 'str',
          wires: [['out']],
        },
        {
          id: `s${c.id}`,
          type: 'ems-site-steer',
          server: c.id,
          site: 'ste_a',
          siteType: 'str',
          mode: 'ess',
          essValue: 'payload',
          essValueType: 'msg',
          essUnit: 'kW',
          validity: 'quarter-hour',
          wires: [['out']],
        },
      );
    }
    await helper.load(NODES, flow, {
      h: { apiKey: API_KEY },
      b: { apiKey: BEARER },
      o: { clientSecret: CLIENT_SECRET },
      w: { clientSecret: WRONG_SECRET },
    });
    const out = new Inbox(helper.getNode('out'));
    const caught = new Inbox(helper.getNode('caught'));
    let sent = 0;
    for (let round = 0; round < 3; round++) {
      for (const c of configs) {
        helper.getNode(`r${c.id}`).receive({ round });
        helper.getNode(`s${c.id}`).receive({ payload: round + 1 });
        sent += 2;
      }
    }
    await until(
      [out, caught],
      () => out.msgs.length + caught.msgs.length >= sent,
      30_000,
      () => `${sent} answers`,
    );
    assert.equal(out.msgs.length, 9, 'steering answered for header, bearer and oauth2');
    assert.equal(caught.msgs.length, 15, "every read and the wrong secret's steering failed");
    const admin: string[] = [];
    for (const c of configs) {
      for (const route of ['/ems-partner/devices', '/ems-partner/sites']) {
        const res = await helper.request().post(route).send({ server: c.id });
        admin.push(`${route} ${c.id} ${res.status} ${res.text}`);
      }
    }
    const nodeCalls = configs
      .flatMap((c) => [`r${c.id}`, `s${c.id}`])
      .flatMap((id) =>
        ['status', 'error', 'warn', 'log'].map((m) =>
          JSON.stringify(callsOf(m, id), (_k, v) =>
            v instanceof Error ? { ...v, message: v.message, stack: v.stack } : v,
          ),
        ),
      );
    const everything = [
      JSON.stringify(helper._redNodes.getFlows()),
      JSON.stringify(helper.log().args),
      JSON.stringify(out.msgs),
      JSON.stringify(caught.msgs),
      ...nodeCalls,
      ...admin,
    ].join('\n');
    assert.deepEqual(leaks(everything), []);
    assert.match(JSON.stringify(out.msgs.map((m) => m.payload)), /\*\*\*/, 'steering answers keep their echo, masked');
    assert.ok(hostile.tokensIssued >= 1);
    assert.deepEqual(crashes.events, []);
  });
});
