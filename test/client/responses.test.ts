/**
 * The client room's edges (src/client), part 3: hostile answers. Every answer of the wrong
 * shape is one EMS_BAD_RESPONSE naming the field and what it held; error bodies give the
 * service's message however they carry it (OAuth2 style, nested, HTML with or without a title,
 * entities, long text) and never the page; raw requests refuse bodies they cannot send, relay
 * only the selected headers, and mask secrets in keys and values. A loopback stub
 * (test/helpers/stub-server.ts) answers each test as it needs.
 */
import assert from 'node:assert/strict';
import { BadResponseError, EmsClient } from '../../src/client';
import { DEV, SITE, json, startStub, type Stub } from '../helpers/stub-server';

const MEASUREMENT = { timestamp: 1, property: 'soc', value: 1, unit: '%', reference: DEV };

describe('client coverage: answers of the wrong shape name the field and what it held', function () {
  this.timeout(20_000);
  let stub: Stub;
  let client: EmsClient;
  let body: unknown;
  before(async () => {
    stub = await startStub((_h, res) => json(res, 200, body));
    client = new EmsClient({ baseUrl: stub.url, retries: 0, auth: { type: 'header', apiKey: 'k3y-s3cret-value' } });
  });
  after(async () => {
    client.close();
    await stub.close();
  });

  const CASES: Array<{ call: (c: EmsClient) => Promise<unknown>; endpoint: string; body: unknown; says: string }> = [
    {
      call: (c) => c.getMeasurement(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurement`,
      body: [MEASUREMENT],
      says: 'with an array, expected a JSON measurement',
    },
    {
      call: (c) => c.getMeasurement(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurement`,
      body: 42,
      says: 'with 42 (not an object), expected',
    },
    {
      call: (c) => c.getMeasurement(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurement`,
      body: { ...MEASUREMENT, unit: 5 },
      says: 'with unit 5 (not a string)',
    },
    {
      call: (c) => c.getMeasurement(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurement`,
      body: { ...MEASUREMENT, reference: null },
      says: 'with reference null (not a string)',
    },
    {
      call: (c) => c.getMeasurement(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurement`,
      body: 'k3y-s3cret-value is down',
      says: 'with text that is not JSON',
    },
    {
      call: (c) => c.getMeasurement(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurement`,
      body: '   ',
      says: 'with an empty body',
    },
    {
      call: (c) => c.getMeasurementsMap(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurements/map`,
      body: { reference: DEV, measurements: { soc: { value: 1, unit: 3 } } },
      says: 'with measurements.soc.unit 3 (not a string)',
    },
    {
      call: (c) => c.getMeasurementsList(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurements`,
      body: { reference: DEV, measurements: [null] },
      says: 'with measurements[0] null (not an object)',
    },
    {
      call: (c) => c.getMeasurementsList(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurements`,
      body: { reference: DEV, measurements: [{ ...MEASUREMENT, timestamp: 'k3y-s3cret-value' }] },
      says: 'with measurements[0].timestamp "***" (a string, not a finite number)',
    },
    {
      call: (c) => c.getMeasurementsList(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurements`,
      body: { reference: DEV, measurements: [{ timestamp: 1, property: 'soc', value: 1 }] },
      says: 'with no measurements[0].unit',
    },
    {
      call: (c) => c.getTimeSeries(DEV, { property: 'soc', start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 0, 2) }),
      endpoint: `POST /devices/${DEV}/measurements/time-series`,
      body: { time: ['yesterday'], data: [1] },
      says: 'with time[0] "yesterday" (a string, not an ISO 8601 time)',
    },
    { call: (c) => c.listDevices(), endpoint: 'GET /devices', body: { things: [] }, says: 'with no device list' },
    {
      call: (c) => c.listDevices(),
      endpoint: 'GET /devices',
      body: true,
      says: 'with true, expected a JSON device list',
    },
    {
      call: (c) => c.listDevices(),
      endpoint: 'GET /devices',
      body: null,
      says: 'with null, expected a JSON device list',
    },
    { call: (c) => c.listSites(), endpoint: 'GET /sites', body: [5], says: 'with sites[0] 5 (not an object)' },
    {
      call: (c) => c.listSites(),
      endpoint: 'GET /sites',
      body: { sites: [{}] },
      says: 'with no sites[0].siteReference',
    },
    {
      call: (c) => c.listSites(),
      endpoint: 'GET /sites',
      body: [{ siteReference: 's', devices: 'all' }],
      says: 'with sites[0].devices "all" (a string, not an array)',
    },
    {
      call: (c) => c.steerEss(SITE, { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() + 600_000 }),
      endpoint: `POST /sites/${SITE}/steering/ess`,
      body: [1],
      says: 'with an array, expected a JSON object',
    },
  ];

  for (const t of CASES) {
    it(`${t.endpoint} answering ${JSON.stringify(t.body).slice(0, 60)}: "${t.says}"`, async () => {
      body = t.body;
      await assert.rejects(t.call(client), (e) => {
        assert.ok(e instanceof BadResponseError, String(e));
        assert.equal(e.code, 'EMS_BAD_RESPONSE');
        assert.ok(e.message.startsWith(`${t.endpoint} answered 200 `), e.message);
        assert.ok(e.message.includes(t.says), e.message);
        assert.doesNotMatch(e.message, /s3cret/);
        return true;
      });
    });
  }

  it('a steering answer nested deeper than 64 levels is refused (not walked for secrets), naming why', async () => {
    let deep: unknown = { requestId: 'r' };
    for (let i = 0; i < 70; i++) deep = { inner: deep };
    body = deep;
    await assert.rejects(
      client.steerEss(SITE, { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() + 600_000 }),
      (e) =>
        e instanceof BadResponseError &&
        /with a body it could not read \(nested deeper than 64 levels\)/.test(e.message),
    );
  });
});
