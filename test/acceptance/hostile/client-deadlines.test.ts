/**
 * The client boundary against a hostile service (test/helpers/hostile-server.ts): every answer
 * of the wrong shape is one EMS_BAD_RESPONSE naming the endpoint, bodies are bounded in size and
 * wall-clock time and the slot is freed, property lists are capped, connection errors name
 * host:port.
 */
import assert from 'node:assert/strict';
import { ApiError, EmsClient } from '../../../src/client';
import { startHostile, type HostileMode, type HostileServer } from '../../helpers/hostile-server';
import { watchTimers } from '../../helpers/faults';
import { watchPushes } from '../../helpers/barrier';
import { realTurns, stillPending } from '../../helpers/real-turns';
import FakeTimers from '@sinonjs/fake-timers';

const DEV = 'dvc_a';
const SITE = 'ste_a';
const until = () => Date.now() + 600_000;

describe('hostile service: bounded bodies and wall-clock deadlines', function () {
  this.timeout(30_000);
  let hostile: HostileServer;
  before(async () => {
    hostile = await startHostile({ dripMs: 1000, trickleMs: 5 });
  });
  after(async () => {
    await hostile.close();
  });
  afterEach(() => {
    hostile.clearOverrides();
  });

  it('a 200 MB body is refused at maxBodyBytes (default 10 MB) with EMS_TOO_LARGE naming the limit, not read whole', async () => {
    hostile.mode = 'huge';
    const client = new EmsClient({ baseUrl: hostile.url, retries: 2, timeoutMs: 20_000 });
    const sent = hostile.bytesSent;
    await assert.rejects(
      client.getMeasurement(DEV, 'soc'),
      (e: unknown) =>
        e instanceof ApiError &&
        e.code === 'EMS_TOO_LARGE' &&
        e.message === `GET /devices/${DEV}/measurement answer is over the limit of 10 MB (maxBodyMB)`,
    );
    assert.equal(client.transport.limiter.inFlight, 0, 'the slot is free');
    assert.ok(
      hostile.bytesSent - sent < 60 * 1024 * 1024,
      `the server wrote ${hostile.bytesSent - sent} bytes before the client hung up`,
    );
    assert.equal(hostile.received.filter((r) => r.path.endsWith('/measurement')).length, 1, 'not retried');
    client.close();
  });

  it('an endless chunked body at full speed ends at maxBodyBytes', async () => {
    hostile.mode = 'flood';
    const client = new EmsClient({ baseUrl: hostile.url, retries: 0, timeoutMs: 20_000, maxBodyBytes: 1024 * 1024 });
    await assert.rejects(
      client.listDevices(),
      (e: unknown) =>
        e instanceof ApiError && e.code === 'EMS_TOO_LARGE' && /over the limit of 1 MB \(maxBodyMB\)/.test(e.message),
    );
    client.close();
  });

  for (const mode of ['endless', 'drip'] as HostileMode[]) {
    it(`${mode}: the attempt ends at its wall-clock deadline as a timeout (fake clock: not at 299 ms, at 300 ms), is retried, and frees its slot`, async () => {
      hostile.mode = mode;
      const client = new EmsClient({ baseUrl: hostile.url, retries: 1, retryBaseMs: 1, retryMaxMs: 2, timeoutMs: 300 });
      const before = hostile.received.length;
      const arrived = (n: number) =>
        realTurns(() => hostile.received.length - before >= n, `attempt ${n} at the server`);
      // The deadline's timer and the retry's wait are fake; the server's bytes keep coming in real time.
      const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'], now: 0 });
      try {
        const read = client.getMeasurement(DEV, 'soc');
        read.catch(() => undefined);
        for (const n of [1, 2]) {
          await arrived(n);
          const start = clock.now;
          await clock.tickAsync(299);
          assert.ok(await stillPending(read), `attempt ${n} ended before its deadline`);
          assert.equal(hostile.received.length - before, n, `no attempt ${n + 1} before the deadline of attempt ${n}`);
          await clock.tickAsync(1);
          assert.equal(clock.now - start, 300);
          if (n === 1) {
            // The retry waits 1-2 ms (fake): its timer, once set, is the only one.
            await realTurns(
              () => clock.countTimers() > 0 || hostile.received.length - before === 2,
              'the retry scheduled',
            );
            if (hostile.received.length - before < 2) await clock.nextAsync();
          }
        }
        await assert.rejects(
          read,
          (e: unknown) =>
            e instanceof ApiError &&
            e.code === 'ETIMEDOUT' &&
            e.message === `GET /devices/${DEV}/measurement timed out after 300 ms (ETIMEDOUT)`,
        );
        assert.equal(hostile.received.length - before, 2, 'the timeout was retried once');
        assert.ok(
          clock.now >= 600 && clock.now <= 602,
          `two attempts of 300 ms and a retry wait of at most 2 ms took ${clock.now} ms`,
        );
        assert.equal(client.transport.limiter.inFlight, 0);
      } finally {
        clock.uninstall();
        client.close();
      }
    });
  }

  it('six dripping answers do not starve a steering command beyond one deadline', async () => {
    hostile.mode = 'drip';
    hostile.override(/^\/sites\//, 'ok');
    // The attempt hook is called in the slot, just before an attempt is sent: the sixth call means all six hold one.
    let sent = 0;
    let six!: () => void;
    const inSlots = new Promise<void>((resolve) => {
      six = resolve;
    });
    const attempts = {
      before: () => {
        if (++sent === 6) six();
      },
      after: () => undefined,
    };
    const client = new EmsClient({
      baseUrl: hostile.url,
      retries: 2,
      retryBaseMs: 1,
      retryMaxMs: 2,
      timeoutMs: 300,
      concurrency: 6,
      attempts,
    });
    // Deadlines and retry waits on a fake clock; the drip's bytes keep coming in real time.
    const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'], now: 0 });
    try {
      let settled = 0;
      const reads = Array.from({ length: 6 }, () =>
        client
          .getMeasurement(DEV, 'soc')
          .then(
            () => 'ok',
            (e: ApiError) => e.code,
          )
          .finally(() => {
            settled++;
          }),
      );
      await inSlots; // the six hold every slot
      assert.equal(client.transport.limiter.inFlight, 6);
      const steering = client.steerEss(SITE, { setting: { value: 5, unit: 'kW' }, validUntil: until() });
      await clock.tickAsync(299);
      assert.ok(await stillPending(steering), "no slot is free before the drips' deadline");
      // The deadline frees the six slots: the command, waiting first, takes one before any retry.
      await clock.tickAsync(1);
      let answered = false;
      void steering.then(
        () => {
          answered = true;
        },
        () => {
          answered = true;
        },
      );
      await realTurns(() => answered, 'the steering answer');
      assert.equal(clock.now, 300, 'the command waited one deadline (300 ms), no more');
      assert.equal(((await steering) as { requestId?: string }).requestId, 'req_1');
      // The reads retry twice (a wait of 1-2 ms, an attempt of 300 ms) and time out.
      for (let ms = 0; ms < 1_000 && settled < 6; ms++) {
        await clock.tickAsync(1);
        await new Promise((r) => setImmediate(r));
      }
      assert.deepEqual(await Promise.all(reads), Array(6).fill('ETIMEDOUT'));
    } finally {
      clock.uninstall();
      client.close();
    }
  });

  it("the caller's abort still aborts a dripping answer, and close() aborts every one", async () => {
    hostile.mode = 'drip';
    const client = new EmsClient({ baseUrl: hostile.url, retries: 3, timeoutMs: 5_000 });
    // Each abort comes once the server got the request: its answer is dripping (a byte a second).
    const log = watchPushes(hostile.received);
    const arrived = (path: string) => {
      const from = hostile.received.length;
      return log.until(() => hostile.received.slice(from).some((r) => r.path === path), `${path} at the server`);
    };
    try {
      const ctl = new AbortController();
      const single = arrived(`/devices/${DEV}/measurement`);
      const singleRead = client.getMeasurement(DEV, 'soc', { signal: ctl.signal });
      await single;
      assert.equal(client.transport.limiter.inFlight, 1, 'the read is in flight');
      ctl.abort();
      await assert.rejects(singleRead, (e: unknown) => e instanceof ApiError && e.code === 'EMS_ABORTED');
      const map = arrived(`/devices/${DEV}/measurements/map`);
      const mapRead = client.getMeasurementsMap(DEV, 'soc');
      await map;
      assert.equal(client.transport.limiter.inFlight, 1, 'the map read is in flight');
      client.close();
      await assert.rejects(mapRead, (e: unknown) => e instanceof ApiError && e.code === 'EMS_ABORTED');
      assert.equal(client.transport.limiter.inFlight, 0);
    } finally {
      log.restore();
    }
  });

  it('leaves no timer of the package behind', async () => {
    const timers = watchTimers();
    hostile.mode = 'drip';
    const client = new EmsClient({ baseUrl: hostile.url, retries: 0, timeoutMs: 200 });
    await assert.rejects(client.getMeasurement(DEV, 'soc'), (e: unknown) => (e as ApiError).code === 'ETIMEDOUT');
    hostile.mode = 'ok';
    await client.getMeasurement(DEV, 'soc');
    const ctl = new AbortController();
    hostile.mode = 'silent';
    const listing = client.listDevices({ signal: ctl.signal });
    ctl.abort();
    await assert.rejects(listing);
    client.close();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    timers.stop();
    assert.deepEqual(timers.pending(), []);
  });
});
