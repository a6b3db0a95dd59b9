/**
 * Reads whose properties differ only in order are not the same read: a list answer keeps the
 * order asked for, so [soc, power] and [power, soc] in flight at once must each get their own
 * answer in their own order, whether the second arrives while the first is in flight or both
 * wait in one window. Time is the fake clock's (only setTimeout is faked, so I/O runs).
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { EmsClient } from '../src/client';
import { ReadCoalescer } from '../src/runtime';
import { DEFAULT_SITES, startSimulator, type StartedSimulator } from '../src/simulator';

const BAT = DEFAULT_SITES[0].battery.deviceReference;
const WINDOW = 60_000;

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
    assert.equal(clock.countTimers(), 1, 'the second waits the window: it did not join the first');
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
