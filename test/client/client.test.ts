import assert from 'node:assert/strict';
import { ValidationError, DAY_MS, HOUR_MS } from '../../src/protocol';
import { ApiError, EmsClient, ServerError, isRetryable, mergeSeries } from '../../src/client';
import { DEFAULT_SITES } from '../../src/simulator';
import { clientFor, useSimulator } from '../helpers/sim';
import { isTransientNetworkError } from '../../src/client/transport';
import { DEV, SITE, json, startStub, type Stub } from '../helpers/stub-server';

const [COM, HOME] = DEFAULT_SITES;
const BAT = COM.battery.deviceReference;

describe('client: device data against the simulator', () => {
  const sim = useSimulator({ frozen: true, startTime: Date.UTC(2026, 5, 1, 12) });
  let client: EmsClient;
  before(() => {
    client = clientFor(sim);
  });
  after(() => {
    client.close();
  });

  it('lists devices, normalised, with properties and units', async () => {
    const devices = await client.listDevices();
    assert.equal(devices.length, 6);
    const bat = devices.find((d) => d.deviceReference === BAT)!;
    assert.deepEqual(
      bat.properties.find((p) => p.name === 'soc'),
      { name: 'soc', unit: '%' },
    );
    assert.equal(bat.kind, 'battery');
  });

  it('reads a single measurement in the shape of spec 2.2', async () => {
    const measurement = await client.getMeasurement(BAT, 'soc');
    assert.deepEqual(Object.keys(measurement).sort(), ['property', 'reference', 'timestamp', 'unit', 'value']);
    assert.equal(measurement.reference, BAT);
    assert.equal(measurement.unit, '%');
    assert.equal(typeof measurement.timestamp, 'number');
  });

  it('reads several measurements as a map and as a list (spec 2.3, 2.4)', async () => {
    const map = await client.getMeasurementsMap(BAT, ['soc', 'totalEnergyConsumed']);
    assert.equal(map.reference, BAT);
    assert.deepEqual(Object.keys(map.measurements).sort(), ['soc', 'totalEnergyConsumed']);
    assert.equal(map.measurements.totalEnergyConsumed.unit, 'Wh');
    const list = await client.getMeasurementsList(BAT, 'soc,totalEnergyProduced');
    assert.deepEqual(
      list.measurements.map((m) => m.property),
      ['soc', 'totalEnergyProduced'],
    );
    assert.ok(list.measurements.every((m) => typeof m.timestamp === 'number' && !('reference' in m)));
  });

  it('reads a time series and splits a 95-day range into 4 requests, one point per hour', async () => {
    const end = Date.UTC(2026, 5, 1, 0);
    const one = await client.getTimeSeries(BAT, { property: 'soc', start: end - DAY_MS, end, resolutionHours: 1 });
    assert.equal(one.time.length, 24);
    assert.equal(one.time.length, one.data.length);
    sim.sim.clearLog();
    const series = await client.getTimeSeriesRange(BAT, { property: 'soc', start: end - 95 * DAY_MS, end });
    assert.equal(sim.sim.requestLog.filter((e) => e.route.includes('time-series')).length, 4);
    assert.equal(series.time.length, 95 * 24);
    const ts = series.time.map(Date.parse);
    assert.equal(new Set(ts).size, ts.length);
    for (let i = 1; i < ts.length; i++) assert.equal(ts[i] - ts[i - 1], HOUR_MS);
  });

  it('validates before sending: nothing reaches the service', async () => {
    const before = sim.sim.requestsReceived;
    await assert.rejects(
      client.getMeasurement('../x', 'soc'),
      (e: unknown) => e instanceof ValidationError && e.field === 'deviceReference',
    );
    await assert.rejects(
      client.getTimeSeries(BAT, { property: 'soc', start: 0, end: 31 * DAY_MS }),
      /range must span at most 30 days/,
    );
    await assert.rejects(
      client.steerEss(COM.siteReference, {
        setting: { value: 1, unit: 'GW' as never },
        validUntil: Date.now() + 60_000,
      }),
      /setting.unit must be one of W, kW, MW; got "GW"/,
    );
    assert.equal(sim.sim.requestsReceived, before);
  });

  it('refuses a time series of more than 62 spans (about 5 years) before sending', async () => {
    const before = sim.sim.requestsReceived;
    const end = Date.UTC(2026, 5, 1);
    await assert.rejects(
      client.getTimeSeriesRange(BAT, { property: 'soc', start: end - 62 * 30 * DAY_MS - HOUR_MS, end }),
      (e: unknown) => e instanceof ValidationError && e.field === 'range' && /at most 62 requests/.test(e.message),
    );
    assert.equal(sim.sim.requestsReceived, before);
  });

  it('maps service errors to ApiError with status, message, request and requestId', async () => {
    await assert.rejects(client.getMeasurement('dvc_unknown00000', 'soc'), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.status, 404);
      assert.deepEqual(e.request, { method: 'GET', path: '/devices/dvc_unknown00000/measurement' });
      assert.match(e.requestId ?? '', /^req_/);
      assert.match(e.message, /GET \/devices\/dvc_unknown00000\/measurement failed: HTTP 404 .*requestId req_/);
      return true;
    });
    await assert.rejects(
      client.steerEss('ste_unknown00000', { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() + 600_000 }),
      (e: unknown) => e instanceof ApiError && e.status === 404,
    );
    // The service's own 422 and 400, sent past the client's validation on purpose.
    const ts = {
      property: 'soc',
      range: { type: 'absolute', start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z' },
      resolution: { value: 1, unit: 'h' },
    };
    await assert.rejects(
      client.request('POST', `/devices/${BAT}/measurements/time-series`, { kind: 'read' }, undefined, { data: ts }),
      (e: unknown) => e instanceof ApiError && e.status === 422 && /30 days/.test(e.serviceMessage ?? ''),
    );
    await assert.rejects(
      client.request('POST', `/sites/${COM.siteReference}/steering`, { kind: 'steer' }, undefined, {
        data: '{"oops',
        headers: { 'content-type': 'application/json' },
      }),
      (e: unknown) => e instanceof ApiError && e.status === 400,
    );
  });

  it("lists the simulator's sites", async () => {
    const sites = await client.listSites();
    assert.deepEqual(
      sites.map((x) => x.siteReference),
      [COM.siteReference, HOME.siteReference],
    );
  });
});

/**
 * The client room's edges (src/client), part 2: what error messages name (requestId from the
 * header, host:port, unparseable base URLs), the client's own checks before sending, the retry
 * policy, and OAuth2 token fetches that fail, are cut off, point nowhere or are aborted. A
 * loopback stub (test/helpers/stub-server.ts) answers each test as it needs.
 */
describe("client coverage: the client's own checks", function () {
  this.timeout(20_000);
  let stub: Stub;
  let client: EmsClient;
  beforeEach(async () => {
    stub = await startStub();
    client = new EmsClient({ baseUrl: stub.url, retries: 0, timeoutMs: 5_000 });
  });
  afterEach(async () => {
    client.close();
    await stub.close();
  });

  it('a base URL that is not http(s) is refused naming baseUrl', () => {
    for (const bad of ['ftp://x', 'localhost:1880', '', 42 as unknown as string, 'http:// spaced']) {
      assert.throws(
        () => new EmsClient({ baseUrl: bad }),
        (e) => e instanceof ValidationError && e.field === 'baseUrl' && /http:\/\/ or https:\/\//.test(e.message),
      );
    }
  });

  it('getTimeSeries sends a ready TimeSeriesRequest as it is', async () => {
    stub.handle = (_h, res) => json(res, 200, { time: ['2026-01-01T00:00:00Z'], data: [1.5] });
    const req = {
      property: 'power',
      range: { type: 'absolute' as const, start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z' },
      resolution: { value: 1, unit: 'h' as const },
    };
    assert.deepEqual(await client.getTimeSeries(DEV, req), { time: ['2026-01-01T00:00:00Z'], data: [1.5] });
    assert.deepEqual(JSON.parse(stub.hits[0].body), req);
  });

  it('getTimeSeriesRange refuses an end not after the start and a resolution out of range, naming the field; nothing sent', async () => {
    const time = Date.UTC(2026, 0, 1);
    await assert.rejects(
      client.getTimeSeriesRange(DEV, { property: 'soc', start: time, end: time }),
      (e) =>
        e instanceof ValidationError &&
        e.field === 'end' &&
        /must be after start \(2026-01-01T00:00:00Z\)/.test(e.message),
    );
    for (const r of [0, 'x', Number.NaN]) {
      await assert.rejects(
        client.getTimeSeriesRange(DEV, {
          property: 'soc',
          start: time,
          end: time + 86_400_000,
          resolutionHours: r as number,
        }),
        (e) => e instanceof ValidationError && e.field === 'resolution',
      );
    }
    assert.equal(stub.hits.length, 0);
  });

  it('the trusted steering path refuses a validUntil that passed or is not a number, naming it; nothing sent', async () => {
    const req = (validUntil: number) =>
      ({
        endpoint: 'ess',
        method: 'POST',
        path: `/sites/${SITE}/steering/ess`,
        body: { setting: { value: 1, unit: 'kW' }, validUntil },
        validUntil,
      }) as never;
    const past = Date.now() - 1000;
    await assert.rejects(
      client.sendSteering(req(past)),
      (e) =>
        e instanceof ValidationError && e.field === 'validUntil' && e.message.includes(new Date(past).toISOString()),
    );
    await assert.rejects(
      client.sendSteering(req(Number.NaN)),
      (e) => e instanceof ValidationError && e.field === 'validUntil' && /got NaN/.test(e.message),
    );
    await assert.rejects(
      client.sendSteering(req(-9e15)),
      (e) => e instanceof ValidationError && /got -9000000000000000/.test(e.message),
    );
    assert.equal(stub.hits.length, 0);
  });

  it('listSites: a 405 gives [] (the service has no such path); a 500 is an error', async () => {
    stub.handle = (_h, res) => json(res, 405, { message: 'method not allowed' });
    assert.deepEqual(await client.listSites(), []);
    stub.handle = (_h, res) => json(res, 500, { message: 'boom' });
    await assert.rejects(client.listSites(), (e) => e instanceof ServerError && e.serviceMessage === 'boom');
  });

  it('request() without a shape returns the answer unchecked', async () => {
    stub.handle = (_h, res) => json(res, 200, { anything: [1, 2] });
    assert.deepEqual(await client.request('GET', '/whatever', { kind: 'read' }), { anything: [1, 2] });
  });

  it('mergeSeries keeps points in [start, end) once, in order, and skips parts without arrays', () => {
    const start = Date.UTC(2026, 0, 1);
    const iso = (h: number) => new Date(start + h * 3_600_000).toISOString().replace('.000', '');
    const merged = mergeSeries(
      [
        { time: [iso(-1), iso(0), iso(1)], data: [9, 0, 1] },
        {} as never,
        { time: [iso(1), iso(2), iso(3)], data: [1, 2] }, // one repeat at the seam; one time without a value
        { time: [iso(4)], data: [4] }, // at the end: left out
      ],
      start,
      start + 4 * 3_600_000,
    );
    assert.deepEqual(merged, { time: [iso(0), iso(1), iso(2)], data: [0, 1, 2] });
  });

  it('the retry policy never retries a cancel, a request without policy, or a steering 4xx other than 429', () => {
    const err = (o: Record<string, unknown>) => ({ isAxiosError: true, message: 'x', ...o }) as never;
    assert.equal(isRetryable(err({ __CANCEL__: true, config: { ems: { kind: 'read' } } })), false);
    assert.equal(isRetryable(err({ code: 'ECONNRESET', config: {} })), false, 'no policy: not one of ours');
    assert.equal(isRetryable(err({ response: { status: 409 }, config: { ems: { kind: 'steer' } } })), false);
    assert.equal(isRetryable(err({ response: { status: 503 }, config: { ems: { kind: 'steer' } } })), true);
    assert.equal(isRetryable(err({ code: 'ERR_BAD_REQUEST', config: { ems: { kind: 'steer' } } })), false);
    assert.equal(
      isRetryable(err({ message: 'socket hang up', config: { ems: { kind: 'steer' } } })),
      true,
      'no code, but a hang-up',
    );
    assert.equal(isTransientNetworkError(err({ __CANCEL__: true, code: 'ECONNRESET' })), false);
    assert.equal(isTransientNetworkError(err({ code: 'ECONNRESET', response: { status: 502 } })), false);
  });
});
