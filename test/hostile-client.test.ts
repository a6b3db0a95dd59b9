/**
 * The client boundary against a hostile service (test/helpers/hostile-server.ts): every answer
 * of the wrong shape is one EMS_BAD_RESPONSE naming the endpoint, bodies are bounded in size and
 * wall-clock time and the slot is freed, property lists are capped, connection errors name
 * host:port.
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
  let hostile: HostileServer;
  let client: EmsClient;
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  before(async () => {
    hostile = await startHostile();
    client = new EmsClient({ baseUrl: hostile.url, retries: 0, timeoutMs: 2_000 });
    process.on('unhandledRejection', onUnhandled);
  });
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    client.close();
    await hostile.close();
  });
  afterEach(() => assert.deepEqual(unhandled, []));

  it('accepts the well-formed answers', async () => {
    hostile.mode = 'ok';
    for (const { name, call } of CALLS) await assert.doesNotReject(call(client), name);
  });

  for (const { mode, says, steeringOk } of BAD) {
    it(`${mode}: each endpoint fails with one EMS_BAD_RESPONSE naming it`, async () => {
      hostile.mode = mode;
      for (const { name, endpoint, call, steering } of CALLS) {
        if (steering && steeringOk) {
          assert.deepEqual(await call(client), {}, `${name}: an empty steering answer is {}`);
          continue;
        }
        await assert.rejects(call(client), badResponse(endpoint, says), `${name} in mode ${mode}`);
      }
    });
  }

  it('"NaN" and "65" are refused: numbers must be numbers, and the error names the field', async () => {
    hostile.mode = 'nan';
    await assert.rejects(
      client.getMeasurement(DEV, 'soc'),
      badResponse(
        `GET /devices/${DEV}/measurement`,
        /with value "NaN" \(a string, not a finite number\), expected a JSON measurement \{timestamp, property, value, unit, reference\}/,
      ),
    );
    await assert.rejects(
      client.getMeasurementsMap(DEV, 'soc'),
      badResponse(`GET /devices/${DEV}/measurements/map`, /measurements\.soc\.value "NaN"/),
    );
    await assert.rejects(
      client.getMeasurementsList(DEV, 'soc'),
      badResponse(`GET /devices/${DEV}/measurements`, /measurements\[0\]\.value "NaN"/),
    );
    await assert.rejects(
      client.getTimeSeries(DEV, { property: 'soc', start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 0, 2) }),
      badResponse(`POST /devices/${DEV}/measurements/time-series`, /data\[0\] "NaN"/),
    );
  });

  it('an HTML error page gives its title as the service message, not the page', async () => {
    hostile.mode = 'html-error';
    await assert.rejects(client.getMeasurement(DEV, 'soc'), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.status, 502);
      assert.equal(e.serviceMessage, 'Service Unavailable - maintenance');
      assert.equal(e.message, `GET /devices/${DEV}/measurement failed: HTTP 502 Service Unavailable - maintenance`);
      return true;
    });
  });

  it('merged reads (coalescer): every waiter ends with the one EMS_BAD_RESPONSE, nothing unhandled', async () => {
    const reads = new ReadCoalescer(client, 5);
    for (const mode of ['empty-object', 'null', 'html', 'broken-json', 'no-content', 'nan'] as HostileMode[]) {
      hostile.mode = mode;
      const before = hostile.received.length;
      // The first read goes out at once (no peer in flight) and the identical last one joins it; the two
      // others, concurrent with it, merge into one request.
      const [lone, map, list, same] = await Promise.allSettled([
        reads.measurement(DEV, 'soc'),
        reads.map(DEV, 'soc,power'),
        reads.list(DEV, 'power'),
        reads.measurement(DEV, 'soc'),
      ]);
      assert.deepEqual(
        hostile.received.slice(before).map((r) => r.path.split('?')[0]),
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
    hostile.mode = 'huge-list';
    const list = await client.getMeasurementsList(DEV, 'soc');
    assert.equal(list.measurements.length, 100_000);
    const map = await client.getMeasurementsMap(DEV, 'soc');
    assert.equal(Object.keys(map.measurements).length, 100_000);
  });
});

describe('hostile service: bounded bodies and wall-clock deadlines (defects 2, 4)', function () {
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

describe('hostile caller input and unreachable services (defects 8, 13)', () => {
  let hostile: HostileServer;
  before(async () => {
    hostile = await startHostile();
  });
  after(async () => {
    await hostile.close();
  });

  it(`caps properties at ${MAX_PROPERTIES} per request before building a URL`, async () => {
    const client = new EmsClient({ baseUrl: hostile.url, retries: 0 });
    const before = hostile.received.length;
    const names = (n: number) => Array.from({ length: n }, (_, i) => `p${i}`);
    await assert.doesNotReject(client.getMeasurementsMap(DEV, names(MAX_PROPERTIES)));
    const refused = (e: unknown) =>
      e instanceof ValidationError &&
      e.field === 'properties' &&
      /must name at most 100 properties per request/.test(e.message);
    await assert.rejects(client.getMeasurementsMap(DEV, names(MAX_PROPERTIES + 1)), refused);
    const million = names(1_000_000);
    await assert.rejects(client.getMeasurementsList(DEV, million.join(',')), refused);
    await assert.rejects(client.getMeasurementsList(DEV, million), refused);
    assert.equal(hostile.received.length - before, 1, 'only the first request was sent');
    client.close();
  });

  it("a refused connection names host and port, not the path's query", async () => {
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (server.address() as net.AddressInfo).port;
        server.close(() => resolve(port));
      });
    });
    const client = new EmsClient({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      retries: 0,
      auth: { type: 'header', apiKey: 'k-123456789' },
    });
    await assert.rejects(
      client.getMeasurement(DEV, 'soc'),
      (e: unknown) =>
        e instanceof ApiError &&
        e.code === 'ECONNREFUSED' &&
        e.message === `GET /devices/${DEV}/measurement connection to 127.0.0.1:${port} failed (ECONNREFUSED)`,
    );
    client.close();
  });
});
