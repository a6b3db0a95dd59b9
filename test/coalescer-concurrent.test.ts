/**
 * The read coalescer merges only what is concurrent: a read of a device with no
 * request of the coalescer in flight goes out at once, whatever the window; reads that arrive
 * while one is in flight wait the window and share one request. Time is the fake clock's
 * (only setTimeout is faked, so I/O runs): a read that waited for the window would never end.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { packageTimers } from './helpers/clock';
import { EmsClient } from '../src/client';
import { ReadCoalescer } from '../src/runtime';
import { DEFAULT_SITES, startSimulator, type StartedSimulator } from '../src/simulator';

const BAT = DEFAULT_SITES[0].battery.deviceReference;
const PV = DEFAULT_SITES[0].pv.deviceReference;
const WINDOW = 60_000;

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
      assert.equal(packageTimers(clock), 0, 'no window timer for a read without a peer');
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
    assert.equal(packageTimers(clock), 0);
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
    assert.equal(packageTimers(clock), 1, 'one window for the concurrent reads');
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
    assert.equal(packageTimers(clock), 0, 'no window: the second joined the first');
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
