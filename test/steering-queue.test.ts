import assert from 'node:assert/strict';
import { ValidationError } from '../src/protocol';
import { EmsClient, ApiError } from '../src/client';
import { SteeringQueue, requestForCommand } from '../src/runtime';
import { startSimulator, DEFAULT_SITES, type StartedSimulator } from '../src/simulator';

const SITE = DEFAULT_SITES[0].siteReference;

describe('steering queue', () => {
  let simulator: StartedSimulator;
  let emsClient: EmsClient;
  let queue: SteeringQueue;
  beforeEach(async () => {
    simulator = await startSimulator();
    emsClient = new EmsClient({ baseUrl: simulator.url });
    queue = new SteeringQueue(emsClient);
  });
  afterEach(async () => {
    emsClient.close();
    await simulator.close();
  });
  const until = () => Date.now() + 10 * 60_000;

  it('answers a command with several components carried by one request', async () => {
    const result = await queue.submit({
      site: SITE,
      kind: 'combined',
      energyStorageSetting: { value: -12, unit: 'MW' },
      productionCurtailment: { value: 300, unit: 'kW' },
      validUntil: until(),
    });
    assert.equal(result.request.path, `/sites/${SITE}/steering`);
    assert.equal(simulator.sim.requestsReceived, 1);
  });

  it('keeps the ESS-only and curtailment-only endpoints for lone components', async () => {
    const expiry = until();
    const essResult = await queue.submit({
      site: SITE,
      kind: 'ess',
      energyStorageSetting: { value: 5, unit: 'kW' },
      validUntil: expiry,
    });
    const curtailmentResult = await queue.submit({
      site: SITE,
      kind: 'curtailment',
      productionCurtailment: { value: 5, unit: '%' },
      validUntil: expiry,
    });
    assert.equal(essResult.request.path.endsWith('/steering/ess'), true);
    assert.deepEqual(curtailmentResult.request.body, { setting: { value: 5, unit: '%' }, validUntil: expiry });
    assert.deepEqual(
      requestForCommand({
        site: SITE,
        kind: 'ess',
        energyStorageSetting: { value: 5, unit: 'kW' },
        validUntil: expiry,
      }),
      essResult.request,
    );
  });

  it('merges queued commands per component, later wins, and sends both kinds', async () => {
    const expiry = until();
    simulator.sim.setFaults({ latencyMs: [50, 50] });
    const first = queue.submit({
      site: SITE,
      kind: 'ess',
      energyStorageSetting: { value: 1, unit: 'kW' },
      validUntil: expiry,
    });
    const queued = [
      queue.submit({ site: SITE, kind: 'ess', energyStorageSetting: { value: 2, unit: 'kW' }, validUntil: expiry }),
      queue.submit({
        site: SITE,
        kind: 'curtailment',
        productionCurtailment: { value: 7, unit: 'kW' },
        validUntil: expiry,
      }),
      queue.submit({ site: SITE, kind: 'ess', energyStorageSetting: { value: 3, unit: 'kW' }, validUntil: expiry }),
    ];
    const results = await Promise.all([first, ...queued]);
    assert.equal(simulator.sim.requestsReceived, 2, 'the first, then one merged request');
    assert.deepEqual(results[3].request.body, {
      energyStorageSetting: { value: 3, unit: 'kW' },
      productionCurtailment: { value: 7, unit: 'kW' },
      validUntil: expiry,
    });
    assert.equal(results[1].merged, true);
    const st = simulator.sim.steeringState(SITE).components;
    assert.equal(st.energyStorageSetting!.value, 3);
    assert.equal(st.productionCurtailment!.value, 7);
  });

  it('sends components with different validity in separate requests', async () => {
    simulator.sim.setFaults({ latencyMs: [30, 30] });
    const v1 = until();
    const v2 = v1 + 60_000;
    const first = queue.submit({
      site: SITE,
      kind: 'ess',
      energyStorageSetting: { value: 1, unit: 'kW' },
      validUntil: v1,
    });
    const laterEss = queue.submit({
      site: SITE,
      kind: 'ess',
      energyStorageSetting: { value: 2, unit: 'kW' },
      validUntil: v1,
    });
    const combined = queue.submit({
      site: SITE,
      kind: 'combined',
      productionCurtailment: { value: 9, unit: 'kW' },
      maximizeGridImport: true,
      validUntil: v2,
    });
    await Promise.all([first, laterEss, combined]);
    assert.equal(simulator.sim.requestsReceived, 3);
    const st = simulator.sim.steeringState(SITE).components;
    assert.equal(st.energyStorageSetting!.validUntil, v1);
    assert.equal(st.productionCurtailment!.validUntil, v2);
  });

  it('refuses a validUntil beyond maxValidityMs from now, naming the limit; nothing is sent', async () => {
    const capped = new SteeringQueue(emsClient, { maxValidityMs: 24 * 3_600_000 });
    const ess = { value: 1, unit: 'kW' } as const;
    for (const validUntil of [
      Date.parse('9999-12-31T23:59:59Z'),
      8.64e15 - 1,
      Date.now() + 1e9 * 60_000,
      Date.now() + 24 * 3_600_000 + 60_000,
    ]) {
      await assert.rejects(
        capped.submit({ site: SITE, kind: 'ess', energyStorageSetting: ess, validUntil }),
        (e: unknown) =>
          e instanceof ValidationError &&
          e.field === 'validUntil' &&
          /^validUntil must be at most 24 h \(the config node's maxValidity, 1440 min\) from now; got .*Z; nothing was sent$/.test(
            e.message,
          ),
      );
    }
    await assert.rejects(
      capped.submit({
        site: SITE,
        kind: 'ess',
        energyStorageSetting: ess,
        validUntil: Date.parse('9999-12-31T23:59:59Z'),
      }),
      /got 9999-12-31T23:59:59.000Z; nothing was sent/,
    );
    assert.equal(simulator.sim.requestsReceived, 0);
    assert.equal(capped.queued(), 0);
    const ok = await capped.submit({
      site: SITE,
      kind: 'ess',
      energyStorageSetting: ess,
      validUntil: Date.now() + 23 * 3_600_000,
    });
    assert.equal(ok.request.path.endsWith('/steering/ess'), true);
    assert.equal(simulator.sim.requestsReceived, 1);
    assert.equal(simulator.sim.steeringState(SITE).components.energyStorageSetting!.value, 1);
  });

  it('drops what an owner queued, naming it, and answers its waiters with an error', async () => {
    simulator.sim.setFaults({ latencyMs: [50, 50] });
    const owner = {};
    const first = queue.submit(
      { site: SITE, kind: 'ess', energyStorageSetting: { value: 1, unit: 'kW' }, validUntil: until() },
      { owner },
    );
    const queued = queue.submit(
      { site: SITE, kind: 'ess', energyStorageSetting: { value: 2, unit: 'kW' }, validUntil: until() },
      { owner },
    );
    const dropped = queue.dropOwner(owner, 'node closed');
    assert.deepEqual(dropped, [`${SITE} energyStorageSetting=2 kW`]);
    await assert.rejects(queued, (e: unknown) => e instanceof ApiError && e.code === 'EMS_DROPPED');
    await first;
    assert.equal(simulator.sim.requestsReceived, 1);
    assert.equal(queue.queued(), 0);
  });
});
