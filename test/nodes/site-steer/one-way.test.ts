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
import { MINUTE_MS } from '../../../src/protocol';
import type { SteeringCommand } from '../../../src/protocol/endpoints';
import { EmsClient } from '../../../src/client';
import { SteeringQueue } from '../../../src/runtime';
import { Renewal } from '../../../src/nodes/shared/renewal';
import { settingsOf } from '../../../src/nodes/shared/steer-command';
import { DEFAULT_SITES, type StartedSimulator } from '../../../src/simulator';
import { cfg, flow, helper, loadFlow, siteSteer, turns, useRuntime, useSimulator } from '../../helpers/red';
import { received, useSimulatorAndClient } from '../../helpers/sim';

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
