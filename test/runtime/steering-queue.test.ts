import assert from 'node:assert/strict';
import { ValidationError } from '../../src/protocol';
import { EmsClient, ApiError } from '../../src/client';
import { SteeringQueue, requestForCommand } from '../../src/runtime';
import { startSimulator, DEFAULT_SITES, type StartedSimulator } from '../../src/simulator';

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

/**
 * Steering at fleet scale: the record of steering types in force stays bounded
 * without sweeping all its sites on every request, and a steering request whose waiters share
 * one signal is sent with that signal itself (no controller or combined signal per request),
 * while waiters with different signals abort it only once all of them aborted.
 */
describe('steering queue: the signal a request is sent with', () => {
  /** A client that holds each request until released and records the signal it got. */
  function fakeClient() {
    const sent: Array<{ signal?: AbortSignal; release: () => void }> = [];
    const client = {
      sendSteering: (_req: unknown, o?: { signal?: AbortSignal }) =>
        new Promise((resolve) => {
          sent.push({ signal: o?.signal, release: () => resolve({}) });
        }),
    } as unknown as EmsClient;
    return { client, sent };
  }
  const until = () => Date.now() + 10 * 60_000;
  const ess = (value: number) => ({
    site: 'site_a',
    kind: 'ess' as const,
    energyStorageSetting: { value, unit: 'kW' as const },
    validUntil: until(),
  });
  const settled = () => new Promise((r) => setImmediate(r));

  it("passes a lone command's signal on as it is", async () => {
    const { client, sent } = fakeClient();
    const queue = new SteeringQueue(client);
    const ctl = new AbortController();
    const pending = queue.submit(ess(1), { signal: ctl.signal });
    await settled();
    assert.equal(sent.length, 1);
    assert.equal(sent[0].signal, ctl.signal);
    sent[0].release();
    await pending;
  });

  it('passes one shared signal on as it is when merged commands carry the same', async () => {
    const { client, sent } = fakeClient();
    const queue = new SteeringQueue(client);
    const ctl = new AbortController();
    const first = queue.submit(ess(1), { signal: ctl.signal });
    await settled();
    const merged = [queue.submit(ess(2), { signal: ctl.signal }), queue.submit(ess(3), { signal: ctl.signal })];
    sent[0].release();
    await first;
    await settled();
    assert.equal(sent.length, 2, 'the first, then one merged request');
    assert.equal(sent[1].signal, ctl.signal);
    sent[1].release();
    await Promise.all(merged);
  });

  it("aborts a merged request only once every waiter's signal aborted, and never when one has none", async () => {
    const { client, sent } = fakeClient();
    const queue = new SteeringQueue(client);
    const abortFirst = new AbortController();
    const abortSecond = new AbortController();
    const first = queue.submit(ess(1));
    await settled();
    const merged = [
      queue.submit(ess(2), { signal: abortFirst.signal }),
      queue.submit(ess(3), { signal: abortSecond.signal }),
    ];
    sent[0].release();
    await first;
    await settled();
    const mergedSignal = sent[1].signal!;
    assert.ok(mergedSignal && mergedSignal !== abortFirst.signal && mergedSignal !== abortSecond.signal);
    abortFirst.abort();
    assert.equal(mergedSignal.aborted, false, 'b still waits');
    abortSecond.abort();
    assert.equal(mergedSignal.aborted, true);
    sent[1].release();
    await Promise.all(merged);

    const abortThird = new AbortController();
    const blocker = queue.submit(ess(4));
    await settled();
    const withSignal = queue.submit(ess(5), { signal: abortThird.signal });
    const without = queue.submit(ess(6));
    sent[2].release();
    await blocker;
    await settled();
    assert.equal(sent.length, 4);
    assert.equal(sent[3].signal, undefined, 'a waiter without a signal: never aborted');
    sent[3].release();
    await Promise.all([withSignal, without]);
  });
});

/**
 * Bursts: cost per message stays flat as a burst grows (counted in operations and listeners,
 * never timed), a node holds a bounded number of waiting messages (the config node's
 * `maxWaiting`), and in a large burst every message ends exactly once.
 */
describe('bursts: runtime work per message', () => {
  let simulator: StartedSimulator;
  let client: EmsClient;
  beforeEach(async () => {
    simulator = await startSimulator();
    client = new EmsClient({ baseUrl: simulator.url, retries: 0 });
  });
  afterEach(async () => {
    client.close();
    await simulator.close();
  });

  it('a burst of N queued commands for one site merges with work linear in N (counted steps), and every command is answered', async () => {
    const queue = new SteeringQueue(client);
    const validUntil = Date.now() + 10 * 60_000;
    simulator.sim.setFaults({ latencyMs: [50, 50] });
    const total = 20_000;
    const first = queue.submit({ site: SITE, kind: 'ess', energyStorageSetting: { value: 1, unit: 'kW' }, validUntil });
    const queued = Array.from({ length: total }, (_x, i) =>
      queue.submit({ site: SITE, kind: 'ess', energyStorageSetting: { value: i % 7, unit: 'kW' }, validUntil }),
    );
    assert.equal(queue.mergeSteps, total - 1, 'one step per command merged into the queued component');
    const results = await Promise.all([first, ...queued]);
    assert.equal(simulator.sim.requestsReceived, 2, 'the first, then one merged request');
    assert.ok(
      results.slice(1).every((r) => r.merged),
      'each queued command was merged',
    );
    assert.deepEqual(
      (results.at(-1)!.request.body as any).setting,
      { value: (total - 1) % 7, unit: 'kW' },
      'the last command wins',
    );
  });

  it('a burst of N commands over two components with two validities: steps linear in N, one request per endpoint and validity', async () => {
    const queue = new SteeringQueue(client);
    const v1 = Date.now() + 10 * 60_000;
    const v2 = v1 + 60_000;
    simulator.sim.setFaults({ latencyMs: [50, 50] });
    const total = 20_000;
    const first = queue.submit({
      site: SITE,
      kind: 'ess',
      energyStorageSetting: { value: 1, unit: 'kW' },
      validUntil: v1,
    });
    const queued = Array.from({ length: total }, (_x, i) =>
      i % 2
        ? queue.submit({
            site: SITE,
            kind: 'curtailment',
            productionCurtailment: { value: 5, unit: 'kW' },
            validUntil: v2,
          })
        : queue.submit({ site: SITE, kind: 'ess', energyStorageSetting: { value: 2, unit: 'kW' }, validUntil: v1 }),
    );
    const results = await Promise.all([first, ...queued]);
    assert.ok(queue.mergeSteps <= 2 * total, `at most 2 steps per command: ${queue.mergeSteps} for ${total}`);
    assert.equal(simulator.sim.requestsReceived, 3, 'the first, then one request per endpoint and validity');
    assert.equal(results.length, total + 1);
  });
});
