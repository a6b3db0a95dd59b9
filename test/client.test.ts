import assert from 'node:assert/strict';
import axios from 'axios';
import { ValidationError, DAY_MS, HOUR_MS } from '../src/protocol';
import { ApiError, EmsClient, OAuth2TokenSource } from '../src/client';
import { DEFAULT_SITES } from '../src/simulator';
import { clientFor, useClients, useSimulator } from './helpers/sim';

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

describe('client: steering against the simulator', () => {
  const sim = useSimulator({}, { each: true });
  let client: EmsClient;
  beforeEach(() => {
    client = clientFor(sim);
  });
  afterEach(() => {
    client.close();
  });

  it('reproduces the worked example of spec section 3', async () => {
    const validUntil = Date.now() + 15 * 60_000;
    const r1 = await client.steer(COM.siteReference, {
      energyStorageSetting: { value: 100, unit: 'kW' },
      productionCurtailment: { value: 300, unit: 'kW' },
      maximizeGridImport: false,
      validUntil,
    });
    assert.match(r1.requestId, /^req_/);
    await client.steerEss(COM.siteReference, { setting: { value: 300, unit: 'kW' }, validUntil });
    const st = (await axios.get(`${sim.url}/sites/${COM.siteReference}/steering`)).data;
    assert.equal(st.components.energyStorageSetting.value, 300);
    assert.equal(st.components.energyStorageSetting.unit, 'kW');
    assert.equal(st.components.productionCurtailment.value, 300);
    assert.equal(st.components.productionCurtailment.validUntil, validUntil);
    assert.equal(st.components.energyStorageSetting.validUntil, validUntil);
  });

  it('sends only the components the caller set (partial update)', async () => {
    await client.steer(COM.siteReference, {
      productionCurtailment: { value: 50, unit: '%' },
      validUntil: Date.now() + 60_000,
    });
    const body = sim.sim.requestLog.at(-1)!.body as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['productionCurtailment', 'validUntil']);
  });

  it('echoes curtailment-only and grid-target requests, and cancels a grid target', async () => {
    const validUntil = Date.now() + 60_000;
    const cu = await client.steerCurtailment(HOME.siteReference, { setting: { value: 4, unit: 'kW' }, validUntil });
    assert.deepEqual(cu.setting, { value: 4, unit: 'kW' });
    const gt = await client.steerGridTarget(HOME.siteReference, {
      setpoint: { value: 0, unit: 'W' },
      deadband: { value: 200, unit: 'W' },
      validUntil,
    });
    assert.deepEqual(gt.deadband, { value: 200, unit: 'W' });
    assert.ok(sim.sim.steeringState(HOME.siteReference).components.gridTarget);
    const del = await client.cancelGridTarget(HOME.siteReference);
    assert.equal(del.cancelled, true);
    assert.equal(sim.sim.steeringState(HOME.siteReference).components.gridTarget, null);
  });
});

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

describe('client: authentication strategies', () => {
  const KEY = 'k-SECRET-api-key-123';
  const SECRET = 'cs-SECRET-client-456';
  const sim = useSimulator({
    apiKey: KEY,
    oauth: { clientId: 'partner', clientSecret: SECRET, tokenTtlSeconds: 3600 },
  });
  const client = useClients(sim);

  it('sends the API key in a header, or as a bearer token', async () => {
    const headerClient = client({ auth: { type: 'header', apiKey: KEY } });
    const bearerClient = client({ auth: { type: 'bearer', token: KEY } });
    assert.equal((await headerClient.getMeasurement(BAT, 'soc')).property, 'soc');
    assert.equal((await bearerClient.getMeasurement(BAT, 'soc')).property, 'soc');
    headerClient.close();
    bearerClient.close();
  });

  it('answers 401 without credentials', async () => {
    const anonymous = client();
    await assert.rejects(anonymous.listDevices(), (e: unknown) => e instanceof ApiError && e.status === 401);
    anonymous.close();
  });

  it('OAuth2: one token fetch for concurrent requests, refreshed once on a 401', async () => {
    const emsClient = client({
      auth: { type: 'oauth2', tokenUrl: `${sim.url}/oauth/token`, clientId: 'partner', clientSecret: SECRET },
    });
    const issued = sim.sim.oauth!.issued;
    await Promise.all(Array.from({ length: 10 }, () => emsClient.getMeasurement(BAT, 'soc')));
    assert.equal(sim.sim.oauth!.issued - issued, 1);
    assert.equal(emsClient.transport.tokens!.fetchCount, 1);
    sim.sim.oauth!.revokeAll();
    await emsClient.getMeasurement(BAT, 'soc');
    assert.equal(emsClient.transport.tokens!.fetchCount, 2);
    emsClient.close();
  });

  it('OAuth2: refreshes before expiry', async () => {
    let now = 1_000_000;
    const src = new OAuth2TokenSource(
      { type: 'oauth2', tokenUrl: `${sim.url}/oauth/token`, clientId: 'partner', clientSecret: SECRET },
      axios.create(),
      () => [SECRET],
      () => now,
    );
    const t1 = await src.token();
    now += 3_500_000; // 58 min 20 s of 60 min: inside the last minute's refresh window? not yet (refresh 60 s before)
    assert.equal(await src.token(), t1);
    now += 50_000; // 59 min 10 s: within 60 s of expiry
    const t2 = await src.token();
    assert.notEqual(t2, t1);
    assert.equal(src.fetchCount, 2);
  });

  it('OAuth2: a wrong secret is reported clearly, once, without a retry storm', async () => {
    const emsClient = client({
      auth: {
        type: 'oauth2',
        tokenUrl: `${sim.url}/oauth/token`,
        clientId: 'partner',
        clientSecret: 'wrong-secret-789',
      },
    });
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => emsClient.getMeasurement(BAT, 'soc')));
    assert.ok(
      results.every(
        (r) =>
          r.status === 'rejected' &&
          /OAuth2 token request to .* failed: 401 invalid_client: unknown client or wrong secret/.test(
            (r.reason as Error).message,
          ),
      ),
    );
    assert.equal(emsClient.transport.tokens!.fetchCount, 1);
    await assert.rejects(emsClient.getMeasurement(BAT, 'soc'), /OAuth2 token request/);
    assert.equal(emsClient.transport.tokens!.fetchCount, 1, 'cooled down: no new token request');
    emsClient.close();
  });

  it('never puts a key, token or secret into an error', async () => {
    sim.sim.setFaults({ rate500: 0.5, rate429: 0.2, retryAfterSeconds: 0 });
    const clients = [
      client({ retries: 1, retryBaseMs: 1, auth: { type: 'header', apiKey: 'wrong-' + KEY } }),
      client({ retries: 1, retryBaseMs: 1, auth: { type: 'bearer', token: 'wrong-' + KEY } }),
      client({
        retries: 1,
        retryBaseMs: 1,
        auth: {
          type: 'oauth2',
          tokenUrl: `${sim.url}/oauth/token`,
          clientId: 'partner',
          clientSecret: 'wrong-' + SECRET,
        },
      }),
      clientFor('http://127.0.0.1:1', { retries: 0, auth: { type: 'header', apiKey: KEY } }),
    ];
    let errors = 0;
    for (const c of clients) {
      for (const call of [
        () => c.listDevices(),
        () => c.getMeasurement(BAT, 'soc'),
        () => c.steerEss(COM.siteReference, { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() + 60_000 }),
      ]) {
        try {
          await call();
        } catch (e) {
          errors++;
          const text = [
            String(e),
            (e as Error).stack,
            JSON.stringify(e),
            JSON.stringify(Object.entries(e as object)),
          ].join('\n');
          for (const secret of [KEY, SECRET])
            assert.equal(text.includes(secret), false, `secret in ${text.slice(0, 200)}`);
        }
      }
      c.close();
    }
    sim.sim.setFaults({});
    assert.equal(errors, 12);
  });
});
