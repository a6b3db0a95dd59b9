import assert from 'node:assert/strict';
import { ApiError } from '../../src/client';
import { DEFAULT_SITES } from '../../src/simulator';
import { useClients, useSimulator } from '../helpers/sim';

const [COM, HOME] = DEFAULT_SITES;
const BAT = COM.battery.deviceReference;

describe('client: retries, timeouts and aborts', () => {
  const sim = useSimulator({}, { each: true });
  const client = useClients(sim);
  const fast = { retryBaseMs: 5, retryMaxMs: 20 };

  it('retries reads on 5xx up to `retries`, then fails with the last error', async () => {
    const emsClient = client({ retries: 2, ...fast });
    sim.sim.setFaults({ rate500: 1 });
    await assert.rejects(
      emsClient.getMeasurement(BAT, 'soc'),
      (e: unknown) => e instanceof ApiError && e.status === 500,
    );
    assert.equal(sim.sim.requestsReceived, 3);
    emsClient.close();
  });

  it('retries reads on 429 honouring Retry-After and on connection resets', async () => {
    const emsClient = client({ retries: 3, ...fast });
    sim.sim.setFaults({ rate429: 1, retryAfterSeconds: 0 });
    await assert.rejects(
      emsClient.getMeasurement(BAT, 'soc'),
      (e: unknown) => e instanceof ApiError && e.status === 429 && e.retryAfter === 0,
    );
    assert.equal(sim.sim.requestsReceived, 4);
    sim.sim.clearLog();
    sim.sim.setFaults({ resetRate: 1 });
    await assert.rejects(
      emsClient.getMeasurement(BAT, 'soc'),
      (e: unknown) => e instanceof ApiError && /connection to 127\.0\.0\.1:\d+ failed \(ECONNRESET\)/.test(e.message),
    );
    assert.equal(sim.sim.requestLog.length, 4);
    emsClient.close();
  });

  it('after a 429, pauses every request of the client until Retry-After, and says so', async () => {
    const emsClient = client({ retries: 0 });
    const states: string[] = [];
    emsClient.onState((st) => states.push(st.state));
    sim.sim.setFaults({ rate429: 1, retryAfterSeconds: 1 });
    await assert.rejects(
      emsClient.getMeasurement(BAT, 'soc'),
      (e: unknown) => e instanceof ApiError && e.status === 429,
    );
    const limitedAt = sim.sim.requestLog.at(-1)!.time;
    assert.ok(emsClient.transport.rateLimitedUntil > Date.now(), 'the shared pause is in force');
    assert.deepEqual(states, ['rate-limited']);
    sim.sim.setFaults({});
    // Another request, as another node would send it: it waits out the pause, then goes through.
    await emsClient.getMeasurementsMap(HOME.battery.deviceReference, 'soc');
    assert.ok(sim.sim.requestLog.at(-1)!.time >= limitedAt + 1000, 'not sent before Retry-After elapsed');
    assert.deepEqual(states, ['rate-limited', 'ok']);
    emsClient.close();
  });

  it('never retries other 4xx', async () => {
    const emsClient = client({ retries: 3, ...fast });
    await assert.rejects(
      emsClient.getMeasurement('dvc_unknown00000', 'soc'),
      (e: unknown) => e instanceof ApiError && e.status === 404,
    );
    assert.equal(sim.sim.requestsReceived, 1);
    emsClient.close();
  });

  it('retries steering on 503 but not on 500, and never past validUntil', async () => {
    const emsClient = client({ retries: 2, ...fast });
    const body = () => ({ setting: { value: 1, unit: 'kW' as const }, validUntil: Date.now() + 60_000 });
    sim.sim.setFaults({ rate500: 1 });
    await assert.rejects(
      emsClient.steerEss(COM.siteReference, body()),
      (e: unknown) => e instanceof ApiError && e.status === 500,
    );
    assert.equal(sim.sim.requestsReceived, 1);
    sim.sim.setFaults({ rate503: 1, retryAfterSeconds: 0 });
    await assert.rejects(
      emsClient.steerEss(COM.siteReference, body()),
      (e: unknown) => e instanceof ApiError && e.status === 503,
    );
    assert.equal(sim.sim.requestsReceived, 4);
    // Retry-After 5 s but the signal ends in 2 s: no retry is scheduled.
    sim.sim.setFaults({ rate503: 1, retryAfterSeconds: 5 });
    await assert.rejects(
      emsClient.steerEss(COM.siteReference, { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() + 2_000 }),
      (e: unknown) => e instanceof ApiError && e.status === 503,
    );
    assert.equal(sim.sim.requestsReceived, 5);
    emsClient.close();
  });

  it('times out each attempt and reports it', async () => {
    const emsClient = client({ retries: 1, timeoutMs: 100, ...fast });
    sim.sim.setFaults({ latencyMs: [400, 400] });
    await assert.rejects(
      emsClient.getMeasurement(BAT, 'soc'),
      (e: unknown) => e instanceof ApiError && /timed out/.test(e.message),
    );
    emsClient.close();
  });

  it('aborts a call on its signal and every call on close()', async () => {
    const emsClient = client({ retries: 0 });
    sim.sim.setFaults({ latencyMs: [300, 300] });
    const ctl = new AbortController();
    const pending = emsClient.getMeasurement(BAT, 'soc', { signal: ctl.signal });
    ctl.abort();
    await assert.rejects(pending, (e: unknown) => e instanceof ApiError && e.code === 'EMS_ABORTED');
    const pendingMap = emsClient.getMeasurementsMap(BAT, 'soc');
    emsClient.close();
    await assert.rejects(pendingMap, (e: unknown) => e instanceof ApiError && e.code === 'EMS_ABORTED');
    await assert.rejects(emsClient.listDevices(), (e: unknown) => e instanceof ApiError && e.code === 'EMS_CLOSED');
  });

  it('bounds the requests in flight by `concurrency`', async () => {
    const emsClient = client({ concurrency: 3 });
    sim.sim.setFaults({ latencyMs: [30, 30] });
    let max = 0;
    const probe = setInterval(() => {
      max = Math.max(max, emsClient.transport.limiter.inFlight);
    }, 2);
    await Promise.all(Array.from({ length: 20 }, () => emsClient.getMeasurement(BAT, 'soc')));
    clearInterval(probe);
    assert.ok(max <= 3 && max >= 1, `max in flight ${max}`);
    emsClient.close();
  });
});
