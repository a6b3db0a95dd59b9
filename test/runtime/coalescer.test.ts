/**
 * The read coalescer merges only what is concurrent: a read of a device with no
 * request of the coalescer in flight goes out at once, whatever the window; reads that arrive
 * while one is in flight wait the window and share one request. Time is the fake clock's
 * (only setTimeout is faked, so I/O runs): a read that waited for the window would never end.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { EmsClient } from '../../src/client';
import { ReadCoalescer } from '../../src/runtime';
import { DEFAULT_SITES, startSimulator, type StartedSimulator } from '../../src/simulator';
import { getEventListeners } from 'node:events';

const BAT = DEFAULT_SITES[0].battery.deviceReference;
const PV = DEFAULT_SITES[0].pv.deviceReference;
const WINDOW = 60_000;

/**
 * The coalescing windows open: the clock's timers due one window from now. A read without a peer is
 * sent in the call that makes it, so its attempt's own timers (deadline, connect timeout) run already.
 */
function windowTimers(clock: ReturnType<typeof FakeTimers.install>): number {
  const store = (clock as unknown as { timers?: Map<number, { callAt: number }> | Record<string, { callAt: number }> })
    .timers;
  if (!store) return 0;
  const timers = store instanceof Map ? [...store.values()] : Object.values(store);
  return timers.filter((timer) => timer.callAt === clock.now + WINDOW).length;
}

describe('read coalescer: only concurrent reads wait', () => {
  let simulator: StartedSimulator;
  let client: EmsClient;
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  const paths = () => simulator.sim.requestLog.map((e) => `${e.method} ${e.path}`);
  beforeEach(async () => {
    simulator = await startSimulator();
    client = new EmsClient({ baseUrl: simulator.url, retries: 0 });
  });
  afterEach(async () => {
    clock?.uninstall();
    clock = undefined;
    client.close();
    await simulator.close();
  });

  it('lone reads, one after another, go out at once: no window timer, one request each', async () => {
    const reads = new ReadCoalescer(client, WINDOW);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    for (const p of ['soc', 'power', 'soc']) {
      const reading = reads.measurement(BAT, p);
      assert.equal(windowTimers(clock), 0, 'no window timer for a read without a peer');
      assert.equal((await reading).property, p);
    }
    assert.equal(reads.requests, 3);
    reads.close();
  });

  it('reads of other devices are not peers: each goes out at once', async () => {
    const reads = new ReadCoalescer(client, WINDOW);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    const [a, b] = await Promise.all([reads.measurement(BAT, 'soc'), reads.measurement(PV, 'power')]);
    assert.deepEqual([a.reference, b.reference], [BAT, PV]);
    assert.equal(windowTimers(clock), 0);
    reads.close();
  });

  it('reads concurrent with one in flight wait the window, then go as one list request', async () => {
    const reads = new ReadCoalescer(client, WINDOW);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    simulator.sim.clearLog();
    const lead = reads.measurement(BAT, 'soc');
    const rest = [
      reads.measurement(BAT, 'power'),
      reads.map(BAT, 'soc,power'),
      reads.measurement(BAT, 'totalEnergyConsumed'),
    ] as const;
    assert.equal(windowTimers(clock), 1, 'one window for the concurrent reads');
    assert.equal((await lead).property, 'soc');
    assert.deepEqual(paths(), [`GET /devices/${BAT}/measurement?property=soc`], 'the concurrent reads still wait');
    await clock.tickAsync(WINDOW);
    const [power, map, energy] = await Promise.all(rest);
    assert.equal(power.property, 'power');
    assert.deepEqual(Object.keys(map.measurements), ['soc', 'power']);
    assert.equal(energy.property, 'totalEnergyConsumed');
    assert.deepEqual(paths(), [
      `GET /devices/${BAT}/measurement?property=soc`,
      `GET /devices/${BAT}/measurements?properties=power,soc,totalEnergyConsumed`,
    ]);
    reads.close();
  });

  it('an identical read joins the request in flight: one request, the same answer', async () => {
    const reads = new ReadCoalescer(client, WINDOW);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    simulator.sim.clearLog();
    const [a, b] = await Promise.all([reads.measurement(BAT, 'soc'), reads.measurement(BAT, 'soc')]);
    assert.deepEqual(a, b);
    assert.equal(windowTimers(clock), 0, 'no window: the second joined the first');
    assert.deepEqual(paths(), [`GET /devices/${BAT}/measurement?property=soc`]);
    reads.close();
  });

  it("a joined read is not ended by the first caller's abort (it goes out alone), and its own abort ends only its wait", async () => {
    const reads = new ReadCoalescer(client, WINDOW);
    simulator.sim.setFaults({ latencyMs: [100, 100] });
    simulator.sim.clearLog();
    const first = new AbortController();
    const abortedRead = reads.measurement(BAT, 'soc', { signal: first.signal });
    const joinedRead = reads.measurement(BAT, 'soc');
    first.abort();
    await assert.rejects(abortedRead);
    assert.equal((await joinedRead).property, 'soc', 'the joined read got an answer of its own');
    assert.equal(paths().length, 1, 'the aborted request never reached the simulator; the joined one did');
    const mine = new AbortController();
    const firstPower = reads.measurement(BAT, 'power');
    const minePower = reads.measurement(BAT, 'power', { signal: mine.signal });
    mine.abort(new Error('mine'));
    await assert.rejects(minePower, /mine/);
    assert.equal((await firstPower).property, 'power', 'the request in flight goes on for the first caller');
    reads.close();
  });

  it('a window of 0 is off: concurrent reads each go out alone', async () => {
    const reads = new ReadCoalescer(client, 0);
    await Promise.all([reads.measurement(BAT, 'soc'), reads.measurement(BAT, 'soc'), reads.measurement(BAT, 'power')]);
    assert.equal(reads.requests, 3);
    reads.close();
  });
});

/**
 * Reads whose properties differ only in order are not the same read: a list answer keeps the
 * order asked for, so [soc, power] and [power, soc] in flight at once must each get their own
 * answer in their own order, whether the second arrives while the first is in flight or both
 * wait in one window. Time is the fake clock's (only setTimeout is faked, so I/O runs).
 */
describe('read coalescer: properties in another order are another read', () => {
  let simulator: StartedSimulator;
  let client: EmsClient;
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  const paths = () => simulator.sim.requestLog.map((e) => `${e.method} ${e.path}`);
  const order = (l: { measurements: Array<{ property: string }> }) => l.measurements.map((m) => m.property);
  beforeEach(async () => {
    simulator = await startSimulator();
    client = new EmsClient({ baseUrl: simulator.url, retries: 0 });
    simulator.sim.clearLog();
  });
  afterEach(async () => {
    clock?.uninstall();
    clock = undefined;
    client.close();
    await simulator.close();
  });

  it('[soc, power] in flight, then [power, soc]: not joined, each list in its own order', async () => {
    const reads = new ReadCoalescer(client, WINDOW);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    const first = reads.list(BAT, ['soc', 'power']);
    const second = reads.list(BAT, ['power', 'soc']);
    assert.equal(windowTimers(clock), 1, 'the second waits the window: it did not join the first');
    assert.deepEqual(order(await first), ['soc', 'power']);
    await clock.tickAsync(WINDOW);
    assert.deepEqual(order(await second), ['power', 'soc']);
    assert.deepEqual(paths(), [
      `GET /devices/${BAT}/measurements?properties=soc,power`,
      `GET /devices/${BAT}/measurements?properties=power,soc`,
    ]);
    reads.close();
  });

  it('[soc, power] and [power, soc] in one window: one merged request, each answer in its own order', async () => {
    const reads = new ReadCoalescer(client, WINDOW);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    const lead = reads.measurement(BAT, 'totalEnergyConsumed');
    const socFirst = reads.list(BAT, ['soc', 'power']);
    const powerFirst = reads.list(BAT, ['power', 'soc']);
    await lead;
    await clock.tickAsync(WINDOW);
    const [la, lb] = await Promise.all([socFirst, powerFirst]);
    assert.deepEqual(order(la), ['soc', 'power']);
    assert.deepEqual(order(lb), ['power', 'soc']);
    // The same values: one answer fanned out, not two requests at two times.
    assert.equal(la.measurements[0].value, lb.measurements[1].value);
    assert.equal(paths().length, 2);
    assert.equal(paths()[1], `GET /devices/${BAT}/measurements?properties=soc,power`);
    reads.close();
  });

  it('map reads [soc, power] and [power, soc] at once: each map keeps its own key order', async () => {
    const reads = new ReadCoalescer(client, WINDOW);
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    const first = reads.map(BAT, ['soc', 'power']);
    const second = reads.map(BAT, ['power', 'soc']);
    assert.deepEqual(Object.keys((await first).measurements), ['soc', 'power']);
    await clock.tickAsync(WINDOW);
    assert.deepEqual(Object.keys((await second).measurements), ['power', 'soc']);
    reads.close();
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
});
