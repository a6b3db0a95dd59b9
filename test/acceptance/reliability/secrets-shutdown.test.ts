/**
 * Reliability tests 4 and 5.
 * 4: with every auth type configured and faults on, the API key, bearer token and client
 *    secret appear nowhere in the flow export, the log, node status, messages or errors.
 * 5: redeploy while 200 reads and a renewing steering signal are in flight: nothing is sent
 *    afterwards, no timer survives, and the renewed signal is not extended.
 */
import assert from 'node:assert/strict';
import { helper, NODES, Inbox, until, useRuntime } from '../../helpers/red';
import { useCrashWatch, watchTimers } from '../../helpers/faults';
import { startSimulator, DEFAULT_SITES, type StartedSimulator } from '../../../src/simulator';

const [COM, HOME] = DEFAULT_SITES;
const KEY = 'K3y-SECRET-abcdef123456';
const SECRET = 'Cl1ent-SECRET-987654zyx';

describe('reliability 4: secrets stay in credentials', function () {
  this.timeout(60_000);
  useRuntime();
  let simulator: StartedSimulator;
  before(async () => {
    simulator = await startSimulator({
      apiKey: KEY,
      oauth: { clientId: 'partner', clientSecret: SECRET },
      faults: { rate500: 0.2, rate429: 0.1, retryAfterSeconds: 0, resetRate: 0.05 },
    });
  });
  after(async () => {
    await simulator.close();
  });

  it('never shows a key, token or secret in export, log, status, messages or errors', async () => {
    const configs = [
      { id: 'h', type: 'ems-partner-config', baseUrl: simulator.url, authType: 'header', retries: 1 },
      { id: 'b', type: 'ems-partner-config', baseUrl: simulator.url, authType: 'bearer', retries: 1 },
      {
        id: 'o',
        type: 'ems-partner-config',
        baseUrl: simulator.url,
        authType: 'oauth2',
        tokenUrl: `${simulator.url}/oauth/token`,
        clientId: 'partner',
        retries: 1,
      },
      {
        id: 'w',
        type: 'ems-partner-config',
        baseUrl: simulator.url,
        authType: 'oauth2',
        tokenUrl: `${simulator.url}/oauth/token`,
        clientId: 'partner',
        retries: 1,
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
          device: COM.battery.deviceReference,
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
          site: HOME.siteReference,
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
    const credentials = {
      h: { apiKey: KEY },
      b: { apiKey: KEY },
      o: { clientSecret: SECRET },
      w: { clientSecret: `wrong-${SECRET}` },
    };
    await helper.load(NODES, flow, credentials);
    const seen: string[] = [];
    for (const c of configs)
      for (const id of [`r${c.id}`, `s${c.id}`]) {
        const node = helper.getNode(id);
        for (const ev of ['call:status', 'call:error', 'call:warn', 'call:log'])
          node.on(ev, (call: { args: unknown[] }) =>
            seen.push(
              JSON.stringify(call.args, (_k, v) =>
                v instanceof Error ? { ...v, message: v.message, stack: v.stack } : v,
              ),
            ),
          );
      }
    const out = new Inbox(helper.getNode('out'));
    const caught = new Inbox(helper.getNode('caught'));
    let sent = 0;
    for (let round = 0; round < 10; round++) {
      for (const c of configs) {
        helper.getNode(`r${c.id}`).receive({ round });
        helper.getNode(`s${c.id}`).receive({ payload: round });
        sent += 2;
      }
    }
    await until(
      [out, caught],
      () => out.msgs.length + caught.msgs.length >= sent,
      30_000,
      () => `${sent} answers`,
    );
    assert.ok(out.msgs.length > 0 && caught.msgs.length > 0, 'both successes and failures happened');
    const everything = [
      JSON.stringify(helper._redNodes.getFlows()),
      JSON.stringify(helper.log().args),
      JSON.stringify(out.msgs),
      JSON.stringify(caught.msgs),
      ...seen,
    ].join('\n');
    for (const secret of [KEY, SECRET]) assert.equal(everything.includes(secret), false, `${secret} leaked`);
    assert.match(
      everything,
      /OAuth2 token request .* failed: 401 invalid_client/,
      'the wrong secret was reported (without the secret)',
    );
  });
});

describe('reliability 5: shutdown while busy', function () {
  this.timeout(60_000);
  useRuntime();
  const crashes = useCrashWatch();
  let simulator: StartedSimulator;
  before(async () => {
    simulator = await startSimulator({ faults: { latencyMs: [300, 300] } });
  });
  after(async () => {
    await simulator.close();
  });

  it('redeploy with 200 reads and a renewing signal in flight: nothing sent afterwards, no timer left, signal not extended', async () => {
    const ours = watchTimers();
    await helper.load(NODES, [
      {
        id: 'cfg',
        type: 'ems-partner-config',
        baseUrl: simulator.url,
        simulator: false,
        coalesceMs: 0,
        concurrency: 4,
      },
      {
        id: 'r',
        type: 'ems-device-read',
        server: 'cfg',
        device: COM.battery.deviceReference,
        deviceType: 'str',
        mode: 'single',
        properties: 'soc',
        propertiesType: 'str',
        interval: 1,
        wires: [['out']],
      },
      // Valid for 4 s: the renewal is due 2 s before expiry.
      {
        id: 's',
        type: 'ems-site-steer',
        server: 'cfg',
        site: COM.siteReference,
        siteType: 'str',
        mode: 'ess',
        essValue: 'payload',
        essValueType: 'msg',
        essUnit: 'kW',
        validity: 'duration',
        duration: 4 / 60,
        renew: true,
        wires: [['out']],
      },
      { id: 'out', type: 'helper' },
    ]);
    const out = new Inbox(helper.getNode('out'));
    helper.getNode('s').receive({ payload: -25 });
    const [steered] = await until(
      [out],
      () => out.msgs.some((m) => m.request),
      10_000,
      () => 'the steering answer',
    ).then(() => out.msgs.filter((m) => m.request));
    const validUntil = steered.request.body.validUntil as number;
    for (let i = 0; i < 200; i++) helper.getNode('r').receive({ i });
    await until(
      [],
      () => true,
      0,
      () => '',
    );
    const before = simulator.sim.requestsReceived;
    await helper.unload(); // redeploy: the nodes close
    await new Promise((r) => setImmediate(r)); // async_hooks reports cleared timers a turn later
    await new Promise((r) => setImmediate(r));
    const leftAtClose = ours.pending();
    const atClose = simulator.sim.requestsReceived;
    const outputsAtClose = out.msgs.length;
    // Wait past the moment the renewal and the next poll would have gone out, then look.
    await new Promise((r) => setTimeout(r, Math.max(0, validUntil - Date.now()) + 500));
    assert.ok(atClose - before <= 4, 'only requests already on the wire (at most `concurrency`) arrived while closing');
    assert.equal(simulator.sim.requestsReceived, atClose, 'nothing was sent after close');
    assert.equal(out.msgs.length, outputsAtClose, 'a closed node sent no message');
    assert.equal(
      simulator.sim.steeringState(COM.siteReference).components.energyStorageSetting,
      null,
      'the signal expired: not extended',
    );
    ours.stop();
    assert.deepEqual(leftAtClose, [], 'no timer of the package survived the close');
    assert.deepEqual(crashes.events, []);
    // helper.unload in afterEach runs on an empty flow.
    await helper.load(NODES, []);
  });
});
