/**
 * Issue 10, the client boundary against a hostile service (test/helpers/hostile-server.ts):
 * every answer of the wrong shape is one EMS_BAD_RESPONSE naming the endpoint (defects 1, 7),
 * bodies are bounded in size and wall-clock time and the slot is freed (defects 2, 4),
 * property lists are capped (defect 8), connection errors name host:port (defect 13).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { ValidationError, MAX_PROPERTIES } from '../src/protocol';
import { ApiError, EmsClient } from '../src/client';
import { ReadCoalescer } from '../src/runtime';
import { startHostile, type HostileMode, type HostileServer } from './helpers/hostile-server';
import { watchTimers } from './helpers/faults';
import { watchPushes } from './helpers/barrier';
import { realTurns, stillPending } from './helpers/real-turns';
import FakeTimers from '@sinonjs/fake-timers';

const DEV = 'dvc_a';
const SITE = 'ste_a';
const until = () => Date.now() + 600_000;

/** Every call of the client, with the endpoint its errors must name. */
const CALLS: Array<{ name: string; endpoint: string; call: (c: EmsClient) => Promise<unknown>; steering?: boolean }> = [
  { name: 'single', endpoint: `GET /devices/${DEV}/measurement`, call: (c) => c.getMeasurement(DEV, 'soc') },
  {
    name: 'map',
    endpoint: `GET /devices/${DEV}/measurements/map`,
    call: (c) => c.getMeasurementsMap(DEV, 'soc,power'),
  },
  { name: 'list', endpoint: `GET /devices/${DEV}/measurements`, call: (c) => c.getMeasurementsList(DEV, 'soc,power') },
  {
    name: 'time series',
    endpoint: `POST /devices/${DEV}/measurements/time-series`,
    call: (c) => c.getTimeSeries(DEV, { property: 'soc', start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 0, 2) }),
  },
  { name: 'devices', endpoint: 'GET /devices', call: (c) => c.listDevices() },
  { name: 'sites', endpoint: 'GET /sites', call: (c) => c.listSites() },
  {
    name: 'steering',
    endpoint: `POST /sites/${SITE}/steering/ess`,
    call: (c) => c.steerEss(SITE, { setting: { value: 1, unit: 'kW' }, validUntil: until() }),
    steering: true,
  },
  {
    name: 'grid-target cancel',
    endpoint: `DELETE /sites/${SITE}/steering/grid-target`,
    call: (c) => c.cancelGridTarget(SITE),
    steering: true,
  },
];

const BAD: Array<{ mode: HostileMode; says: RegExp; steeringOk?: boolean }> = [
  { mode: 'empty-object', says: /answered 200 with (no |an? )/, steeringOk: true },
  { mode: 'null', says: /answered 200 with null, expected/ },
  { mode: 'html', says: /answered 200 with an HTML page, expected/ },
  { mode: 'broken-json', says: /answered 200 with broken or cut-off JSON, expected/ },
  { mode: 'no-content', says: /answered 204 with no body, expected/, steeringOk: true },
];

function badResponse(endpoint: string, says: RegExp) {
  return (e: unknown) => {
    assert.ok(e instanceof ApiError, `an ApiError, got ${String(e)}`);
    assert.equal(e.code, 'EMS_BAD_RESPONSE');
    assert.ok(e.message.startsWith(`${endpoint} answered`), e.message);
    assert.match(e.message, says);
    assert.doesNotMatch(e.message, /<(!doctype|html|head|title|body)/i, 'no raw HTML in the message');
    return true;
  };
}

describe('hostile service: answers of the wrong shape (defects 1, 7)', function () {
  this.timeout(30_000);
  let h: HostileServer;
  let c: EmsClient;
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  before(async () => {
    h = await startHostile();
    c = new EmsClient({ baseUrl: h.url, retries: 0, timeoutMs: 2_000 });
    process.on('unhandledRejection', onUnhandled);
  });
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    c.close();
    await h.close();
  });
  afterEach(() => assert.deepEqual(unhandled, []));

  it('accepts the well-formed answers', async () => {
    h.mode = 'ok';
    for (const { name, call } of CALLS) await assert.doesNotReject(call(c), name);
  });

  for (const { mode, says, steeringOk } of BAD) {
    it(`${mode}: each endpoint fails with one EMS_BAD_RESPONSE naming it`, async () => {
      h.mode = mode;
      for (const { name, endpoint, call, steering } of CALLS) {
        if (steering && steeringOk) {
          assert.deepEqual(await call(c), {}, `${name}: an empty steering answer is {}`);
          continue;
        }
        await assert.rejects(call(c), badResponse(endpoint, says), `${name} in mode ${mode}`);
      }
    });
  }

  it('"NaN" and "65" are refused: numbers must be numbers, and the error names the field', async () => {
    h.mode = 'nan';
    await assert.rejects(
      c.getMeasurement(DEV, 'soc'),
      badResponse(
        `GET /devices/${DEV}/measurement`,
        /with value "NaN" \(a string, not a finite number\), expected a JSON measurement \{timestamp, property, value, unit, reference\}/,
      ),
    );
    await assert.rejects(
      c.getMeasurementsMap(DEV, 'soc'),
      badResponse(`GET /devices/${DEV}/measurements/map`, /measurements\.soc\.value "NaN"/),
    );
    await assert.rejects(
      c.getMeasurementsList(DEV, 'soc'),
      badResponse(`GET /devices/${DEV}/measurements`, /measurements\[0\]\.value "NaN"/),
    );
    await assert.rejects(
      c.getTimeSeries(DEV, { property: 'soc', start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 0, 2) }),
      badResponse(`POST /devices/${DEV}/measurements/time-series`, /data\[0\] "NaN"/),
    );
  });

  it('an HTML error page gives its title as the service message, not the page', async () => {
    h.mode = 'html-error';
    await assert.rejects(c.getMeasurement(DEV, 'soc'), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.status, 502);
      assert.equal(e.serviceMessage, 'Service Unavailable - maintenance');
      assert.equal(e.message, `GET /devices/${DEV}/measurement failed: HTTP 502 Service Unavailable - maintenance`);
      return true;
    });
  });

  it('merged reads (coalescer): every waiter ends with the one EMS_BAD_RESPONSE, nothing unhandled', async () => {
    const reads = new ReadCoalescer(c, 5);
    for (const mode of ['empty-object', 'null', 'html', 'broken-json', 'no-content', 'nan'] as HostileMode[]) {
      h.mode = mode;
      const before = h.received.length;
      // The first read goes out at once (no peer in flight) and the identical last one joins it; the two
      // others, concurrent with it, merge into one request.
      const [lone, map, list, same] = await Promise.allSettled([
        reads.measurement(DEV, 'soc'),
        reads.map(DEV, 'soc,power'),
        reads.list(DEV, 'power'),
        reads.measurement(DEV, 'soc'),
      ]);
      assert.deepEqual(
        h.received.slice(before).map((r) => r.path.split('?')[0]),
        [`/devices/${DEV}/measurement`, `/devices/${DEV}/measurements`],
        `${mode}: the lone read, then one merged request`,
      );
      for (const r of [lone, same]) {
        assert.equal(r.status, 'rejected', mode);
        badResponse(`GET /devices/${DEV}/measurement`, /answered 20[04] with/)((r as PromiseRejectedResult).reason);
      }
      assert.equal(
        (lone as PromiseRejectedResult).reason,
        (same as PromiseRejectedResult).reason,
        'the identical read shares the error',
      );
      for (const r of [map, list]) {
        assert.equal(r.status, 'rejected', mode);
        badResponse(`GET /devices/${DEV}/measurements`, /answered 20[04] with/)((r as PromiseRejectedResult).reason);
      }
    }
    reads.close();
  });

  it('a 100,000-item list and map are read and checked (the cap on messages is maxSplit, in the node)', async () => {
    h.mode = 'huge-list';
    const list = await c.getMeasurementsList(DEV, 'soc');
    assert.equal(list.measurements.length, 100_000);
    const map = await c.getMeasurementsMap(DEV, 'soc');
    assert.equal(Object.keys(map.measurements).length, 100_000);
  });
});

describe('hostile service: bounded bodies and wall-clock deadlines (defects 2, 4)', function () {
  this.timeout(30_000);
  let h: HostileServer;
  before(async () => {
    h = await startHostile({ dripMs: 1000, trickleMs: 5 });
  });
  after(async () => {
    await h.close();
  });
  afterEach(() => {
    h.clearOverrides();
  });

  it('a 200 MB body is refused at maxBodyBytes (default 10 MB) with EMS_TOO_LARGE naming the limit, not read whole', async () => {
    h.mode = 'huge';
    const c = new EmsClient({ baseUrl: h.url, retries: 2, timeoutMs: 20_000 });
    const sent = h.bytesSent;
    await assert.rejects(
      c.getMeasurement(DEV, 'soc'),
      (e: unknown) =>
        e instanceof ApiError &&
        e.code === 'EMS_TOO_LARGE' &&
        e.message === `GET /devices/${DEV}/measurement answer is over the limit of 10 MB (maxBodyMB)`,
    );
    assert.equal(c.transport.limiter.inFlight, 0, 'the slot is free');
    assert.ok(
      h.bytesSent - sent < 60 * 1024 * 1024,
      `the server wrote ${h.bytesSent - sent} bytes before the client hung up`,
    );
    assert.equal(h.received.filter((r) => r.path.endsWith('/measurement')).length, 1, 'not retried');
    c.close();
  });

  it('an endless chunked body at full speed ends at maxBodyBytes', async () => {
    h.mode = 'flood';
    const c = new EmsClient({ baseUrl: h.url, retries: 0, timeoutMs: 20_000, maxBodyBytes: 1024 * 1024 });
    await assert.rejects(
      c.listDevices(),
      (e: unknown) =>
        e instanceof ApiError && e.code === 'EMS_TOO_LARGE' && /over the limit of 1 MB \(maxBodyMB\)/.test(e.message),
    );
    c.close();
  });

  for (const mode of ['endless', 'drip'] as HostileMode[]) {
    it(`${mode}: the attempt ends at its wall-clock deadline as a timeout (fake clock: not at 299 ms, at 300 ms), is retried, and frees its slot`, async () => {
      h.mode = mode;
      const c = new EmsClient({ baseUrl: h.url, retries: 1, retryBaseMs: 1, retryMaxMs: 2, timeoutMs: 300 });
      const before = h.received.length;
      const arrived = (n: number) => realTurns(() => h.received.length - before >= n, `attempt ${n} at the server`);
      // The deadline's timer and the retry's wait are fake; the server's bytes keep coming in real time.
      const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'], now: 0 });
      try {
        const read = c.getMeasurement(DEV, 'soc');
        read.catch(() => undefined);
        for (const n of [1, 2]) {
          await arrived(n);
          const start = clock.now;
          await clock.tickAsync(299);
          assert.ok(await stillPending(read), `attempt ${n} ended before its deadline`);
          assert.equal(h.received.length - before, n, `no attempt ${n + 1} before the deadline of attempt ${n}`);
          await clock.tickAsync(1);
          assert.equal(clock.now - start, 300);
          if (n === 1) {
            // The retry waits 1-2 ms (fake): its timer, once set, is the only one.
            await realTurns(() => clock.countTimers() > 0 || h.received.length - before === 2, 'the retry scheduled');
            if (h.received.length - before < 2) await clock.nextAsync();
          }
        }
        await assert.rejects(
          read,
          (e: unknown) =>
            e instanceof ApiError &&
            e.code === 'ETIMEDOUT' &&
            e.message === `GET /devices/${DEV}/measurement timed out after 300 ms (ETIMEDOUT)`,
        );
        assert.equal(h.received.length - before, 2, 'the timeout was retried once');
        assert.ok(
          clock.now >= 600 && clock.now <= 602,
          `two attempts of 300 ms and a retry wait of at most 2 ms took ${clock.now} ms`,
        );
        assert.equal(c.transport.limiter.inFlight, 0);
      } finally {
        clock.uninstall();
        c.close();
      }
    });
  }

  it('six dripping answers do not starve a steering command beyond one deadline', async () => {
    h.mode = 'drip';
    h.override(/^\/sites\//, 'ok');
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
    const c = new EmsClient({
      baseUrl: h.url,
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
        c
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
      assert.equal(c.transport.limiter.inFlight, 6);
      const steering = c.steerEss(SITE, { setting: { value: 5, unit: 'kW' }, validUntil: until() });
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
      c.close();
    }
  });

  it("the caller's abort still aborts a dripping answer, and close() aborts every one", async () => {
    h.mode = 'drip';
    const c = new EmsClient({ baseUrl: h.url, retries: 3, timeoutMs: 5_000 });
    // Each abort comes once the server got the request: its answer is dripping (a byte a second).
    const log = watchPushes(h.received);
    const arrived = (path: string) => {
      const from = h.received.length;
      return log.until(() => h.received.slice(from).some((r) => r.path === path), `${path} at the server`);
    };
    try {
      const ctl = new AbortController();
      const single = arrived(`/devices/${DEV}/measurement`);
      const p = c.getMeasurement(DEV, 'soc', { signal: ctl.signal });
      await single;
      assert.equal(c.transport.limiter.inFlight, 1, 'the read is in flight');
      ctl.abort();
      await assert.rejects(p, (e: unknown) => e instanceof ApiError && e.code === 'EMS_ABORTED');
      const map = arrived(`/devices/${DEV}/measurements/map`);
      const q = c.getMeasurementsMap(DEV, 'soc');
      await map;
      assert.equal(c.transport.limiter.inFlight, 1, 'the map read is in flight');
      c.close();
      await assert.rejects(q, (e: unknown) => e instanceof ApiError && e.code === 'EMS_ABORTED');
      assert.equal(c.transport.limiter.inFlight, 0);
    } finally {
      log.restore();
    }
  });

  it('leaves no timer of the package behind', async () => {
    const timers = watchTimers();
    h.mode = 'drip';
    const c = new EmsClient({ baseUrl: h.url, retries: 0, timeoutMs: 200 });
    await assert.rejects(c.getMeasurement(DEV, 'soc'), (e: unknown) => (e as ApiError).code === 'ETIMEDOUT');
    h.mode = 'ok';
    await c.getMeasurement(DEV, 'soc');
    const ctl = new AbortController();
    h.mode = 'silent';
    const p = c.listDevices({ signal: ctl.signal });
    ctl.abort();
    await assert.rejects(p);
    c.close();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    timers.stop();
    assert.deepEqual(timers.pending(), []);
  });
});

describe('hostile caller input and unreachable services (defects 8, 13)', () => {
  let h: HostileServer;
  before(async () => {
    h = await startHostile();
  });
  after(async () => {
    await h.close();
  });

  it(`caps properties at ${MAX_PROPERTIES} per request before building a URL`, async () => {
    const c = new EmsClient({ baseUrl: h.url, retries: 0 });
    const before = h.received.length;
    const names = (n: number) => Array.from({ length: n }, (_, i) => `p${i}`);
    await assert.doesNotReject(c.getMeasurementsMap(DEV, names(MAX_PROPERTIES)));
    const refused = (e: unknown) =>
      e instanceof ValidationError &&
      e.field === 'properties' &&
      /must name at most 100 properties per request/.test(e.message);
    await assert.rejects(c.getMeasurementsMap(DEV, names(MAX_PROPERTIES + 1)), refused);
    const million = names(1_000_000);
    await assert.rejects(c.getMeasurementsList(DEV, million.join(',')), refused);
    await assert.rejects(c.getMeasurementsList(DEV, million), refused);
    assert.equal(h.received.length - before, 1, 'only the first request was sent');
    c.close();
  });

  it("a refused connection names host and port, not the path's query", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const c = new EmsClient({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      retries: 0,
      auth: { type: 'header', apiKey: 'k-123456789' },
    });
    await assert.rejects(
      c.getMeasurement(DEV, 'soc'),
      (e: unknown) =>
        e instanceof ApiError &&
        e.code === 'ECONNREFUSED' &&
        e.message === `GET /devices/${DEV}/measurement connection to 127.0.0.1:${port} failed (ECONNREFUSED)`,
    );
    c.close();
  });
});
