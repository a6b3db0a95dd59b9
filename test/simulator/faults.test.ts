import assert from 'node:assert/strict';
import { HOUR_MS } from '../../src/protocol/time';
import type { AddressInfo } from 'node:net';
import {
  createSimServer,
  DEFAULT_SITES,
  Simulator,
  startSimulator,
  type StartedSimulator,
} from '../../src/simulator/index';
import { useSimulator } from '../helpers/sim';
import { call } from '../helpers/sim-http';
import FakeTimers from '@sinonjs/fake-timers';
import { realTurns, stillPending } from '../helpers/real-turns';

const T0 = Date.UTC(2026, 5, 21, 8, 0, 0);
const COM = DEFAULT_SITES[0];
const SOC = `/devices/${COM.battery.deviceReference}/measurement?property=soc`;

describe('simulator: fault injection', () => {
  const simulator = useSimulator({ startTime: T0, frozen: true, seed: 4 }, { each: true });

  it('rate500 = 1 gives 500 with a JSON error body', async () => {
    simulator.sim.setFaults({ rate500: 1 });
    const response = await call(simulator.url, 'GET', SOC);
    assert.equal(response.status, 500);
    assert.match(response.body.message, /fault/);
    assert.equal(response.headers.get('x-request-id'), response.body.requestId);
  });

  it('rate503 = 1 gives 503 with Retry-After', async () => {
    simulator.sim.setFaults({ rate503: 1, retryAfterSeconds: 7 });
    const response = await call(simulator.url, 'GET', SOC);
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), '7');
  });

  it('rate429 = 1 gives 429 with Retry-After (default 1 s), configured over HTTP', async () => {
    const cfg = await call(simulator.url, 'POST', '/sim/faults', { rate429: 1 });
    assert.equal(cfg.status, 200);
    assert.deepEqual(cfg.body, {
      rate500: 0,
      rate503: 0,
      rate429: 1,
      retryAfterSeconds: 1,
      resetRate: 0,
      latencyMs: [0, 0],
    });
    const response = await call(simulator.url, 'GET', SOC);
    assert.equal(response.status, 429);
    assert.equal(response.headers.get('retry-after'), '1');
  });

  it('resetRate = 1 destroys the connection without a response', async () => {
    simulator.sim.setFaults({ resetRate: 1 });
    await assert.rejects(fetch(simulator.url + SOC));
    assert.equal(simulator.sim.requestLog.at(-1)?.status, 0);
    assert.equal(simulator.sim.stats().faults.reset, 1);
  });

  it('latency delays responses by the configured time (fake clock: not at 59 ms, at 60 ms)', async () => {
    simulator.sim.setFaults({ latencyMs: [60, 60] });
    const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const reply = call(simulator.url, 'GET', SOC);
      await realTurns(() => simulator.sim.requestsReceived === 1, 'the request at the simulator');
      await clock.tickAsync(59);
      assert.ok(await stillPending(reply), 'answered before its latency');
      await clock.tickAsync(1);
      assert.equal((await reply).status, 200);
    } finally {
      clock.uninstall();
    }
  });

  it('latency: a read is answered as the state was when it arrived, and held; steering applies after the delay', async () => {
    // The server itself, to see when a request arrived (its own handler runs before this listener).
    const sim = new Simulator({ startTime: T0, frozen: true, seed: 4 });
    const { server, close } = createSimServer(sim);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    after(close);
    sim.setFaults({ latencyMs: [300, 300] });
    const arrived = new Promise((resolve) => server.once('request', resolve));
    const read = call(url, 'GET', SOC);
    await arrived; // the simulator's own handler ran first: the answer is made and held
    sim.clock.advance(HOUR_MS);
    const response = await read;
    assert.equal(response.status, 200);
    assert.equal(
      response.body.timestamp,
      T0,
      `measured at arrival, before the clock moved: ${JSON.stringify(response.body)}`,
    );

    const steered = new Promise((resolve) => server.once('request', resolve));
    const steer = call(url, 'POST', `/sites/${COM.siteReference}/steering/ess`, {
      setting: { value: 10, unit: 'kW' },
      validUntil: T0 + 3 * HOUR_MS,
    });
    await steered;
    assert.equal(
      sim.steeringState(COM.siteReference).components.energyStorageSetting,
      null,
      'not applied during the delay',
    );
    assert.equal((await steer).status, 200);
    assert.equal(sim.steeringState(COM.siteReference).components.energyStorageSetting!.value, 10);
  });

  it('a faulted steering request changes nothing', async () => {
    simulator.sim.setFaults({ rate503: 1 });
    const response = await call(simulator.url, 'POST', `/sites/${COM.siteReference}/steering/ess`, {
      setting: { value: 100, unit: 'kW' },
      validUntil: T0 + HOUR_MS,
    });
    assert.equal(response.status, 503);
    simulator.sim.setFaults({});
    assert.equal(simulator.sim.steeringState(COM.siteReference).components.energyStorageSetting, null);
  });

  it('faults never apply to /sim/*', async () => {
    simulator.sim.setFaults({ rate500: 1 });
    assert.equal((await call(simulator.url, 'GET', '/sim/stats')).status, 200);
    assert.equal((await call(simulator.url, 'POST', '/sim/clock', { advanceMs: 1 })).status, 200);
    assert.equal((await call(simulator.url, 'POST', '/sim/faults', {})).status, 200);
    assert.equal((await call(simulator.url, 'GET', SOC)).status, 200);
  });

  it('decisions are deterministic for a seed', async () => {
    const other = await startSimulator({ startTime: T0, frozen: true, seed: 4 });
    try {
      const statuses = async (x: StartedSimulator) => {
        x.sim.setFaults({ rate500: 0.3, rate429: 0.3 });
        const out: number[] = [];
        for (let i = 0; i < 20; i++) out.push((await call(x.url, 'GET', SOC)).status);
        return out;
      };
      const seen = await statuses(simulator);
      assert.deepEqual(seen, await statuses(other));
      assert.ok(seen.includes(200) && seen.includes(500) && seen.includes(429), seen.join(','));
    } finally {
      await other.close();
    }
  });

  it('faultRate / latencyMs shorthands map like the CLI flags', async () => {
    const started = await startSimulator({ faultRate: 0.4, latencyMs: 5 });
    try {
      assert.deepEqual(started.sim.faults.config, {
        rate500: 0.2,
        rate503: 0,
        rate429: 0.1,
        retryAfterSeconds: 1,
        resetRate: 0.1,
        latencyMs: [5, 5],
      });
    } finally {
      await started.close();
    }
  });

  it('close() also ends a request waiting on latency (its timer on a fake clock that never moves)', async () => {
    // Only setTimeout (and performance.now) are fake: sockets and setImmediate run, and the latency
    // never passes, so the request can end only by close().
    const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'performance'], now: 0 });
    try {
      const started = await startSimulator({ faults: { latencyMs: [5000, 5000] } });
      const pending = fetch(started.url + SOC).then(
        () => 'answered',
        () => 'dropped',
      );
      await realTurns(() => started.sim.requestsReceived === 1, 'the request at the simulator');
      let closed = false;
      const closing = started.close().then(() => {
        closed = true;
      });
      await realTurns(() => closed, 'close() to finish without the latency passing');
      await closing;
      assert.equal(await pending, 'dropped');
      assert.equal(clock.now, 0, 'no (fake) time passed');
    } finally {
      clock.uninstall();
    }
  });
});
