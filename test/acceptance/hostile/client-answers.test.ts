/**
 * The client boundary against a hostile service (test/helpers/hostile-server.ts): every answer
 * of the wrong shape is one EMS_BAD_RESPONSE naming the endpoint, bodies are bounded in size and
 * wall-clock time and the slot is freed, property lists are capped, connection errors name
 * host:port.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { ValidationError, MAX_PROPERTIES } from '../../../src/protocol';
import { ApiError, EmsClient } from '../../../src/client';
import { ReadCoalescer } from '../../../src/runtime';
import { startHostile, type HostileMode, type HostileServer } from '../../helpers/hostile-server';

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

describe('hostile service: answers of the wrong shape', function () {
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

describe('hostile caller input and unreachable services', () => {
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
