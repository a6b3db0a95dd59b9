/**
 * Bursts: cost per message stays flat as a burst grows (counted in operations and listeners,
 * never timed), a node holds a bounded number of waiting messages (the config node's
 * `maxWaiting`), and in a large burst every message ends exactly once.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { EmsClient } from '../src/client';
import { ReadCoalescer, SteeringQueue } from '../src/runtime';
import { DEFAULT_SITES, startSimulator, type StartedSimulator } from '../src/simulator';
import { cfg, flow, helper, loadFlow, siteSteer, until, useRuntime, useSimulator } from './helpers/red';

const SITE = DEFAULT_SITES[0].siteReference;
const BAT = DEFAULT_SITES[0].battery.deviceReference;

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

  it('reads joining one request in flight add one abort listener to their shared signal in all, not one each', async () => {
    const reads = new ReadCoalescer(client, 2);
    const ctl = new AbortController();
    const options = { signal: ctl.signal };
    const listeners = () => getEventListeners(ctl.signal, 'abort').length;
    simulator.sim.setFaults({ latencyMs: [100, 100] });
    const lead = reads.measurement(BAT, 'soc', options);
    const alone = listeners();
    const joined = [reads.measurement(BAT, 'soc', options)];
    const withOne = listeners();
    for (let i = 0; i < 2000; i++) joined.push(reads.measurement(BAT, 'soc', options));
    assert.equal(listeners(), withOne, '2,001 joined reads: as many listeners as one');
    assert.ok(withOne <= alone + 1, `one listener at most for the joined reads (${alone} -> ${withOne})`);
    const answers = await Promise.all([lead, ...joined]);
    assert.equal(reads.requests, 1, 'identical reads share the request in flight');
    assert.ok(answers.every((a) => a.property === 'soc' && a.value === answers[0].value));
    // The joined reads still end with their signal: abort while a second request is in flight.
    const next = reads.measurement(BAT, 'soc', options);
    const late = Array.from({ length: 100 }, () => reads.measurement(BAT, 'soc', options));
    ctl.abort(new Error('stop'));
    const settled = await Promise.allSettled([next, ...late]);
    assert.ok(
      settled.every((r) => r.status === 'rejected'),
      'every joined read rejects when its signal aborts',
    );
    reads.close();
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

describe('bursts: a node holds at most maxWaiting messages', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();

  const read = {
    type: 'ems-device-read',
    device: BAT,
    deviceType: 'str',
    mode: 'single',
    properties: 'soc',
    propertiesType: 'str',
  };

  it('device read: past the limit a message fails at once with an error naming maxWaiting; the status counts the drops; the rest are answered', async () => {
    const loaded = await loadFlow(flow(read, cfg(sim.s.url, { maxWaiting: 5 })));
    sim.s.sim.setFaults({ latencyMs: [200, 200] });
    for (let i = 0; i < 8; i++) loaded.send({ seq: i });
    // Refused at once: before any answer came back (Catch nodes get their messages a turn later).
    await loaded.caught.count(3);
    assert.equal(loaded.out.msgs.length, 0);
    assert.deepEqual(
      loaded.caught.msgs.map((m) => m.seq),
      [5, 6, 7],
    );
    for (const m of loaded.caught.msgs) {
      assert.match(
        m.error.message,
        /5 messages are waiting in this node already \(maxWaiting of the config node: raise it there\)/,
      );
      assert.equal(m.error.source.id, 'n');
    }
    assert.deepEqual(loaded.status.all.at(-1), { fill: 'red', shape: 'ring', text: '3 dropped: 5 waiting' });
    const outs = await loaded.out.count(5);
    assert.deepEqual(outs.map((m) => m.seq).sort(), [0, 1, 2, 3, 4]);
    assert.match(loaded.status.all.at(-1).text, /· 3 dropped$/, 'later statuses keep the count');
    // Once they ended, the node takes messages again.
    sim.s.sim.setFaults({});
    const ok = await loaded.ask({ seq: 8 });
    assert.equal(ok.seq, 8);
    assert.equal(loaded.caught.msgs.length, 3);
  });

  it('site steer (messages in arrival order): the messages past the limit fail at once; those taken are all sent', async () => {
    const loaded = await loadFlow(flow(siteSteer(SITE, { maxEssPower: 1_000_000 }), cfg(sim.s.url, { maxWaiting: 3 })));
    sim.s.sim.setFaults({ latencyMs: [100, 100] });
    for (let i = 0; i < 6; i++) loaded.send({ payload: i, seq: i });
    await loaded.caught.count(3);
    assert.equal(loaded.out.msgs.length, 0);
    assert.deepEqual(
      loaded.caught.msgs.map((m) => m.seq),
      [3, 4, 5],
    );
    assert.match(loaded.caught.msgs[0].error.message, /maxWaiting/);
    const outs = await loaded.out.count(3);
    assert.deepEqual(
      outs.map((m) => m.seq),
      [0, 1, 2],
    );
    assert.equal(loaded.caught.msgs.length, 3);
  });

  it('without the setting (a config node saved before it) a node holds the default 10000', async () => {
    const loaded = await loadFlow(flow(read, cfg(sim.s.url)));
    sim.s.sim.setFaults({ latencyMs: [300, 300] });
    for (let i = 0; i < 10_002; i++) loaded.send({ seq: i });
    await loaded.caught.count(2);
    assert.deepEqual(
      loaded.caught.msgs.map((m) => m.seq),
      [10_000, 10_001],
    );
    assert.match(loaded.caught.msgs[0].error.message, /10000 messages are waiting/);
    await loaded.out.count(10_000, 60_000);
  });

  it('a burst of 100,000 into one device read: every message ends exactly once, in one output or one error', async function () {
    this.timeout(180_000);
    const total = 100_000;
    const loaded = await loadFlow(flow(read, cfg(sim.s.url, { maxWaiting: 200_000 })));
    sim.s.sim.setFaults({});
    const node = helper.getNode('n');
    for (let i = 0; i < total; i++) node.receive({ seq: i });
    await until(
      [loaded.out, loaded.caught],
      () => loaded.out.msgs.length + loaded.caught.msgs.length >= total,
      150_000,
      () => `${total} ends; got ${loaded.out.msgs.length + loaded.caught.msgs.length}`,
    );
    const seen = new Uint8Array(total);
    for (const m of [...loaded.out.msgs, ...loaded.caught.msgs]) seen[m.seq]++;
    assert.equal(loaded.caught.msgs.length, 0, loaded.caught.msgs[0]?.error?.message);
    assert.ok(
      seen.every((n) => n === 1),
      'none lost, none doubled',
    );
    assert.ok(loaded.out.msgs.every((m) => typeof m.payload === 'number'));
  });
});
