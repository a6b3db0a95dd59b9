/**
 * Steering one way: a command becomes one typed request, built once by the
 * protocol's endpoint table; the client sends exactly that request; msg.request is that
 * request. For every steering mode, msg.request (method, path, body) deep-equals what the
 * simulator received (its request log, found by the answer's requestId). Unit tests cover the
 * endpoint table, the typed request builder, the simulator's routes built from the table and
 * the client's trusted path (sends as given, validates nothing again, never after validUntil).
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { MINUTE_MS, ValidationError } from '../src/protocol';
import {
  STEERING_ENDPOINTS,
  STEERING_ENDPOINT_NAMES,
  endpointFor,
  mergeKey,
  sentForm,
  steeringPath,
  steeringRequest,
  steeringRequestFor,
  steeringRequestOf,
  type SteeringCommand,
  type SteeringEndpoint,
} from '../src/protocol/endpoints';
import { EmsClient } from '../src/client';
import { SteeringQueue, requestForCommand } from '../src/runtime';
import { Renewal } from '../src/nodes/shared/renewal';
import { settingsOf } from '../src/nodes/shared/steer-command';
import { matchRoute } from '../src/simulator/routes';
import { DEFAULT_SITES, type StartedSimulator } from '../src/simulator';
import { cfg, flow, helper, loadFlow, siteSteer, turns, useRuntime, useSimulator } from './helpers/red';
import { received, useSimulatorAndClient } from './helpers/sim';

const SITE = DEFAULT_SITES[0].siteReference;
const until = (min = 10) => Date.now() + min * MINUTE_MS;

describe('steering one way: msg.request is what the simulator received, in every mode', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();
  beforeEach(() => sim.s.sim.reset());
  const steer = (extra: Record<string, unknown> = {}) => siteSteer(SITE, extra);
  /** msg.request deep-equals the request the simulator logged for msg.payload.requestId. */
  const same = (m: { request: unknown; payload: { requestId: string } }) =>
    assert.deepStrictEqual(m.request, received(sim.s, m.payload.requestId));

  it('ess', async () => {
    const loaded = await loadFlow(flow(steer(), cfg(sim.s.url)));
    const reply = await loaded.ask({ payload: -50 });
    same(reply);
    assert.equal(reply.request.path, `/sites/${SITE}/steering/ess`);
  });

  it('curtailment (a unit the validators normalise: "kw")', async () => {
    const loaded = await loadFlow(flow(steer({ mode: 'curtailment', curtailmentUnit: '%' }), cfg(sim.s.url)));
    same(await loaded.ask({ payload: 40 }));
    same(await loaded.ask({ payload: { curtailment: { value: 3, unit: 'kw' } } }));
  });

  it("combined, with validFrom, and a body in the API's own shape", async () => {
    const loaded = await loadFlow(
      flow(steer({ mode: 'combined', curtailmentValue: '200', maximizeGridImport: 'true' }), cfg(sim.s.url)),
    );
    const reply = await loaded.ask({ payload: 75 });
    same(reply);
    assert.deepEqual(Object.keys(reply.request.body), [
      'energyStorageSetting',
      'productionCurtailment',
      'maximizeGridImport',
      'validUntil',
    ]);
    const from = Date.now() + MINUTE_MS;
    same(
      await loaded.ask({
        payload: {
          energyStorage: { value: '0.1', unit: 'MW' },
          validFrom: new Date(from).toISOString(),
          validUntil: from + 5 * MINUTE_MS,
        },
      }),
    );
    same(
      await loaded.ask({
        payload: { energyStorageSetting: { value: 30, unit: 'kW' }, maximizeGridImport: false, validUntil: until() },
      }),
    );
  });

  it('grid-target, then cancel by stop (a DELETE without a body)', async () => {
    const loaded = await loadFlow(flow(steer({ mode: 'grid-target', deadbandValue: '5' }), cfg(sim.s.url)));
    same(await loaded.ask({ payload: -20 }));
    const stop = await loaded.ask({ payload: 'stop' });
    same(stop);
    assert.deepStrictEqual(stop.request, { method: 'DELETE', path: `/sites/${SITE}/steering/grid-target` });
  });

  it('stopAction lift', async () => {
    const loaded = await loadFlow(
      flow(
        steer({
          mode: 'curtailment',
          validity: 'duration',
          duration: 30,
          stopAction: 'lift',
          pvPeakPower: 80_000,
          maxCurtailment: 1_000_000,
        }),
        cfg(sim.s.url),
      ),
    );
    same(await loaded.ask({ payload: 300 }));
    const lift = await loaded.ask({ payload: 'stop' });
    same(lift);
    assert.deepEqual(lift.request.body.setting, { value: 80_000, unit: 'W' });
  });

  it('a dry run shows the request that the same message sends for real', async () => {
    const validUntil = until();
    const dry = await loadFlow(
      flow(steer({ mode: 'combined', dryRun: true, curtailmentValue: '10', validity: 'msg' }), cfg(sim.s.url)),
    );
    const dryReply = await dry.ask({ payload: -5, validUntil });
    assert.equal(sim.s.sim.requestLog.length, 0, 'a dry run sends nothing');
    const real = await loadFlow(
      flow(steer({ mode: 'combined', curtailmentValue: '10', validity: 'msg' }), cfg(sim.s.url)),
    );
    const realReply = await real.ask({ payload: -5, validUntil });
    same(realReply);
    assert.equal(dryReply.dryRun, true);
    assert.deepStrictEqual(dryReply.request.body, realReply.request.body);
  });

  it('a merged burst: 100 messages, 2 requests; every msg.request is the request that carried it', async () => {
    sim.s.sim.setFaults({ latencyMs: [40, 40] });
    try {
      // (Limits set: no site list is read, so the simulator receives the steering requests only.)
      const loaded = await loadFlow(flow(steer({ validity: 'msg', maxEssPower: 500_000 }), cfg(sim.s.url)));
      const validUntil = until();
      for (let i = 1; i <= 100; i++) loaded.send({ payload: i, validUntil });
      const out = await loaded.out.count(100);
      assert.equal(sim.s.sim.requestLog.length, 2, 'the first, then one merged request');
      for (const m of out) same(m);
      const last = out.filter((m) => m.request.body.setting.value === 100);
      assert.equal(last.length, 99, 'messages 2 to 100 went out in the merged request');
      assert.deepEqual(last[0].request.body, { setting: { value: 100, unit: 'kW' }, validUntil });
      assert.ok(last.every((m) => m.merged === true));
    } finally {
      sim.s.sim.setFaults({ latencyMs: [0, 0] });
    }
  });

  it('a merged burst of an ESS-only and a curtailment-only node with one validity: one combined request, echoed by both', async () => {
    sim.s.sim.setFaults({ latencyMs: [40, 40] });
    try {
      // (Limits set: no site list is read, so the simulator receives the steering requests only.)
      const loaded = await loadFlow(
        flow(
          steer({ validity: 'msg', maxEssPower: 500_000 }),
          cfg(sim.s.url),
          steer({
            id: 'curt',
            server: 'cfg',
            mode: 'curtailment',
            validity: 'msg',
            maxCurtailment: 1_000_000,
            wires: [['out']],
          }),
        ),
      );
      const validUntil = until();
      loaded.send({ payload: 1, validUntil });
      await new Promise((r) => setImmediate(r));
      loaded.send({ payload: 2, validUntil });
      helper.getNode('curt').receive({ payload: 7, validUntil });
      const out = await loaded.out.count(3);
      for (const m of out) same(m);
      const merged = out.filter((m) => m.request.path === `/sites/${SITE}/steering`);
      assert.equal(merged.length, 2, 'the second ESS and the curtailment went out together');
      assert.deepEqual(merged[0].request.body, {
        energyStorageSetting: { value: 2, unit: 'kW' },
        productionCurtailment: { value: 7, unit: 'kW' },
        validUntil,
      });
      assert.equal(sim.s.sim.requestLog.length, 2);
    } finally {
      sim.s.sim.setFaults({ latencyMs: [0, 0] });
    }
  });
});

describe('steering one way: a renewal sends the request the queue reports', () => {
  let simulator: StartedSimulator;
  let emsClient: EmsClient;
  useSimulatorAndClient({ retries: 0 }, (sim, client) => {
    simulator = sim;
    emsClient = client;
  });

  it("each renewal's SteeringResult.request deep-equals what the simulator received", async () => {
    const clock = FakeTimers.createClock(Date.now());
    const queue = new SteeringQueue(emsClient, { maxValidityMs: 60 * MINUTE_MS, now: () => clock.now });
    const results: Array<{ request: unknown; response: unknown }> = [];
    let settled: () => void = () => undefined;
    const renewal = new Renewal({
      send: (cmd) => {
        const pending = queue.submit(cmd);
        pending
          .then(
            (res) => results.push(res),
            () => undefined,
          )
          .finally(() => settled());
        return pending;
      },
      status: () => undefined,
      warn: () => undefined,
      settings: () => settingsOf({ mode: 'ess', validity: 'duration', duration: 20 }),
      maxValidityMs: () => 60 * MINUTE_MS,
      now: () => clock.now,
      timers: clock,
    });
    const first: SteeringCommand = {
      site: SITE,
      kind: 'ess',
      energyStorageSetting: { value: -5, unit: 'kW' },
      validUntil: clock.now + 20 * MINUTE_MS,
    };
    results.push(await queue.submit(first));
    renewal.schedule(first, clock.now);
    for (let i = 0; i < 3; i++) {
      const done = new Promise<void>((resolve) => {
        settled = resolve;
      });
      await clock.nextAsync();
      await done;
      await turns();
    }
    renewal.close();
    assert.equal(results.length, 4);
    for (const res of results)
      assert.deepStrictEqual(res.request, received(simulator, (res.response as { requestId: string }).requestId));
    const untils = results.map((res) => (res.request as { body: { validUntil: number } }).body.validUntil);
    untils.slice(1).forEach((u, i) => assert.ok(u > untils[i], 'each renewal extends the signal'));
  });
});

describe('steering one way: the endpoint table and the typed request builder', () => {
  const valid = { validUntil: 2_000_000_000_000 };
  const ess = { value: -5, unit: 'kW' } as const;
  const curt = { value: 40, unit: '%' } as const;

  it('names method, path and components of every endpoint', () => {
    assert.deepEqual(STEERING_ENDPOINT_NAMES, [
      'combined',
      'ess',
      'curtailment',
      'grid-target',
      'cancel-grid-target',
      'grid-limits',
    ]);
    const rows = STEERING_ENDPOINT_NAMES.map((e) => [
      e,
      STEERING_ENDPOINTS[e].method,
      STEERING_ENDPOINTS[e].path,
      STEERING_ENDPOINTS[e].components.join(','),
    ]);
    assert.deepEqual(rows, [
      ['combined', 'POST', '/sites/<site>/steering', 'energyStorageSetting,productionCurtailment,maximizeGridImport'],
      ['ess', 'POST', '/sites/<site>/steering/ess', 'energyStorageSetting'],
      ['curtailment', 'POST', '/sites/<site>/steering/curtailment', 'productionCurtailment'],
      ['grid-target', 'POST', '/sites/<site>/steering/grid-target', 'gridTarget'],
      ['cancel-grid-target', 'DELETE', '/sites/<site>/steering/grid-target', 'gridTarget'],
      ['grid-limits', 'POST', '/sites/<site>/steering/grid-limits', 'gridLimits'],
    ]);
    for (const e of STEERING_ENDPOINT_NAMES) {
      const spec = STEERING_ENDPOINTS[e];
      assert.equal(!!spec.validate, spec.method === 'POST', `${e}: a POST has a validator, a DELETE none`);
      assert.equal(!!spec.body, spec.method === 'POST', `${e}: a POST builds a body, a DELETE none`);
    }
  });

  it('URL-encodes the site in the path', () => {
    assert.equal(steeringPath('ess', 'ste:a b/c'), '/sites/ste%3Aa%20b%2Fc/steering/ess');
    assert.equal(steeringRequest('cancel-grid-target', 'x').path, '/sites/x/steering/grid-target');
  });

  it('every body the table builds is one its validator accepts unchanged', () => {
    const values = {
      energyStorageSetting: ess,
      productionCurtailment: curt,
      maximizeGridImport: true,
      gridTarget: { setpoint: { value: 3, unit: 'kW' as const }, deadband: { value: 1, unit: 'kW' as const } },
      gridLimits: { upperLimit: { value: 5, unit: 'kW' as const }, lowerLimit: { value: -5, unit: 'kW' as const } },
    };
    for (const e of STEERING_ENDPOINT_NAMES) {
      const spec = STEERING_ENDPOINTS[e];
      if (!spec.body) continue;
      for (const validity of [valid, { validFrom: valid.validUntil - 60_000, validUntil: valid.validUntil }]) {
        const body: unknown = spec.body(values, validity);
        assert.deepStrictEqual(spec.validate!(body, 0), body, e);
      }
    }
  });

  it("picks the endpoint: a lone component keeps its command's endpoint, merged ones go where they are carried together", () => {
    assert.equal(endpointFor(['energyStorageSetting'], ['ess']), 'ess');
    assert.equal(endpointFor(['energyStorageSetting'], ['combined']), 'combined');
    assert.equal(endpointFor(['productionCurtailment'], ['curtailment']), 'curtailment');
    assert.equal(endpointFor(['energyStorageSetting', 'productionCurtailment'], ['ess', 'curtailment']), 'combined');
    assert.equal(
      endpointFor(['productionCurtailment'], ['ess']),
      'combined',
      "a component its command's endpoint does not carry",
    );
    assert.equal(endpointFor(['gridTarget'], ['grid-target']), 'grid-target');
    assert.equal(endpointFor(['gridTarget'], ['cancel-grid-target']), 'cancel-grid-target');
    assert.equal(endpointFor(['gridTarget'], ['ess']), 'grid-target');
    assert.throws(
      () => endpointFor(['gridTarget', 'energyStorageSetting'], ['combined', 'grid-target']),
      /no steering endpoint carries gridTarget and energyStorageSetting/,
    );
    // Components merge when the endpoint that carries them alone and the validity are the same.
    assert.equal(mergeKey('energyStorageSetting', valid), 'combined||2000000000000');
    assert.equal(mergeKey('maximizeGridImport', valid), 'combined||2000000000000');
    assert.equal(
      mergeKey('productionCurtailment', { validFrom: 1, validUntil: valid.validUntil }),
      'combined|1|2000000000000',
    );
    assert.equal(mergeKey('gridTarget', valid), 'grid-target||2000000000000');
    assert.equal(mergeKey('productionCurtailment', { validUntil: valid.validUntil + 1 }), 'combined||2000000000001');
  });

  it('builds one typed request: endpoint, method, path, body in the component order whatever order the parts came in', () => {
    const req = steeringRequestFor(
      SITE,
      [
        { name: 'maximizeGridImport', value: false, from: 'combined' },
        { name: 'productionCurtailment', value: curt, from: 'curtailment' },
        { name: 'energyStorageSetting', value: ess, from: 'ess' },
      ],
      { validFrom: 1, validUntil: 2 },
    );
    assert.deepStrictEqual(req, {
      site: SITE,
      endpoint: 'combined',
      method: 'POST',
      path: `/sites/${SITE}/steering`,
      body: {
        energyStorageSetting: ess,
        productionCurtailment: curt,
        maximizeGridImport: false,
        validFrom: 1,
        validUntil: 2,
      },
      validUntil: 2,
    });
    assert.deepEqual(Object.keys(req.body!), [
      'energyStorageSetting',
      'productionCurtailment',
      'maximizeGridImport',
      'validFrom',
      'validUntil',
    ]);
  });

  it("builds a lone command's request once, for every kind; msg.request is its method, path and body", () => {
    const cases: Array<[SteeringCommand, unknown]> = [
      [
        { site: SITE, kind: 'ess', energyStorageSetting: ess, ...valid },
        { setting: ess, ...valid },
      ],
      [
        { site: SITE, kind: 'curtailment', productionCurtailment: curt, ...valid },
        { setting: curt, ...valid },
      ],
      [
        { site: SITE, kind: 'combined', energyStorageSetting: ess, maximizeGridImport: true, ...valid },
        { energyStorageSetting: ess, maximizeGridImport: true, ...valid },
      ],
      [
        { site: SITE, kind: 'grid-target', gridTarget: { setpoint: ess }, ...valid },
        { setpoint: ess, ...valid },
      ],
      [{ site: SITE, kind: 'cancel-grid-target' }, undefined],
    ];
    for (const [cmd, body] of cases) {
      const req = steeringRequestOf(cmd)!;
      assert.equal(req.endpoint, cmd.kind);
      assert.equal(req.method, STEERING_ENDPOINTS[cmd.kind].method);
      assert.equal(req.path, steeringPath(cmd.kind, SITE));
      assert.deepStrictEqual(req.body, body);
      assert.equal(
        req.validUntil,
        (body as { validUntil?: number } | undefined)?.validUntil,
        "the typed validUntil is the body's",
      );
      const shown =
        body === undefined ? { method: req.method, path: req.path } : { method: req.method, path: req.path, body };
      assert.deepStrictEqual(sentForm(req), shown);
      assert.deepStrictEqual(requestForCommand(cmd), shown);
    }
    assert.equal(steeringRequestOf({ site: SITE, kind: 'ess' }), undefined);
  });

  it('the simulator routes every endpoint of the table, on its path and method', () => {
    for (const e of STEERING_ENDPOINT_NAMES) {
      const spec = STEERING_ENDPOINTS[e];
      const matched = matchRoute(steeringPath(e, SITE).split('/').filter(Boolean));
      assert.ok(matched, e);
      assert.deepEqual(matched.params, [SITE]);
      assert.equal(typeof matched.route.methods[spec.method], 'function', `${spec.method} ${spec.path}`);
    }
  });
});

describe('steering one way: the client sends the typed request as it is', () => {
  let simulator: StartedSimulator;
  let emsClient: EmsClient;
  useSimulatorAndClient({ retries: 0 }, (sim, client) => {
    simulator = sim;
    emsClient = client;
  });
  const last = () => simulator.sim.requestLog.at(-1)!;

  it('sendSteering sends method, path and body unchanged (no second validation); the public method validates', async () => {
    const validUntil = until();
    // "kw" is what a validator would normalise: sent as given proves nothing validated it again.
    const raw = { setting: { value: 1, unit: 'kw' }, validUntil } as never;
    const response = await emsClient.sendSteering(steeringRequest('ess', SITE, raw));
    assert.deepStrictEqual(last().body, { setting: { value: 1, unit: 'kw' }, validUntil });
    assert.equal(last().path, `/sites/${SITE}/steering/ess`);
    assert.match(response.requestId, /^req_/);
    await emsClient.steerEss(SITE, raw);
    assert.deepStrictEqual(
      last().body,
      { setting: { value: 1, unit: 'kW' }, validUntil },
      'the public method sends the validated body',
    );
    const requestsBefore = simulator.sim.requestsReceived;
    await assert.rejects(
      emsClient.steerEss(SITE, { setting: { value: 1, unit: 'mW' }, validUntil } as never),
      (e: unknown) => e instanceof ValidationError && e.field === 'setting.unit',
    );
    await assert.rejects(
      emsClient.steerEss('bad site', { setting: { value: 1, unit: 'kW' }, validUntil }),
      (e: unknown) => e instanceof ValidationError && e.field === 'siteReference',
    );
    assert.equal(simulator.sim.requestsReceived, requestsBefore, 'nothing sent');
  });

  it('steerEndpoint reaches every endpoint of the table with its validator', async () => {
    const validUntil = until();
    const bodies: Record<SteeringEndpoint, unknown> = {
      combined: { energyStorageSetting: { value: 2, unit: 'kW' }, validUntil },
      ess: { setting: { value: 3, unit: 'kW' }, validUntil },
      curtailment: { setting: { value: 4, unit: 'kW' }, validUntil },
      'grid-target': { setpoint: { value: 5, unit: 'kW' }, validUntil },
      'cancel-grid-target': undefined,
      'grid-limits': { upperLimit: { value: 5, unit: 'kW' }, validUntil },
    };
    for (const e of STEERING_ENDPOINT_NAMES) {
      await emsClient.steerEndpoint(e, SITE, bodies[e]);
      assert.deepStrictEqual(
        { method: last().method, path: last().path, body: last().body },
        { method: STEERING_ENDPOINTS[e].method, path: steeringPath(e, SITE), body: bodies[e] },
      );
    }
    assert.equal(simulator.sim.steeringState(SITE).components.gridTarget, null, 'cancelled last');
  });

  it('never sends a request whose validUntil has passed', async () => {
    const req = steeringRequest('ess', SITE, { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() - 1 });
    await assert.rejects(
      emsClient.sendSteering(req),
      (e: unknown) =>
        e instanceof ValidationError && e.field === 'validUntil' && /must be in the future/.test(e.message),
    );
    assert.equal(simulator.sim.requestsReceived, 0);
  });
});
