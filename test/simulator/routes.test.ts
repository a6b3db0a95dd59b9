import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../../src/simulator/index';
import { useSimulator } from '../helpers/sim';
import { call, type Reply } from '../helpers/sim-http';

const T0 = Date.UTC(2026, 5, 21, 12, 0, 0); // a summer noon, UTC
const REF_RE = /^[a-z]{3}_[A-Za-z0-9]{12}$/;
const REQ_ID_RE = /^req_[0-9a-f]{16}$/;
const COM = DEFAULT_SITES[0];
const HOME = DEFAULT_SITES[1];

function assertError(r: Reply, status: number, messagePart?: RegExp): void {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(typeof r.body.message, 'string');
  assert.match(r.body.requestId, REQ_ID_RE);
  assert.equal(r.headers.get('x-request-id'), r.body.requestId);
  if (messagePart) assert.match(r.body.message, messagePart);
}

describe('simulator: endpoints and response shapes', () => {
  const simulator = useSimulator({ startTime: T0, frozen: true, seed: 7 });

  it('binds 127.0.0.1 on a free port', () => {
    assert.match(simulator.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(simulator.port > 0);
  });

  it('GET /devices lists six devices with kind, site and properties with units', async () => {
    const response = await call(simulator.url, 'GET', '/devices');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('x-request-id') ?? '', REQ_ID_RE);
    assert.equal(response.body.devices.length, 6);
    for (const d of response.body.devices) {
      assert.match(d.deviceReference, REF_RE);
      assert.match(d.siteReference, REF_RE);
      assert.ok(['battery', 'pv', 'meter'].includes(d.kind));
      assert.equal(typeof d.name, 'string');
      for (const p of d.properties) assert.deepEqual(Object.keys(p).sort(), ['name', 'unit']);
    }
    const battery = response.body.devices.find((d: any) => d.deviceReference === COM.battery.deviceReference);
    assert.deepEqual(battery.properties, [
      { name: 'soc', unit: '%' },
      { name: 'power', unit: 'W' },
      { name: 'totalEnergyConsumed', unit: 'Wh' },
      { name: 'totalEnergyProduced', unit: 'Wh' },
    ]);
  });

  it('GET /sites lists the two default sites with their devices', async () => {
    const response = await call(simulator.url, 'GET', '/sites');
    assert.equal(response.status, 200);
    assert.deepEqual(
      response.body.sites.map((x: any) => x.siteReference),
      DEFAULT_SITES.map((x) => x.siteReference),
    );
    for (const site of response.body.sites) {
      assert.match(site.siteReference, REF_RE);
      assert.deepEqual(
        site.devices.map((d: any) => d.kind),
        ['battery', 'pv', 'meter'],
      );
    }
  });

  it('GET measurement returns the spec 2.2 shape; soc starts at 65 on the commercial battery', async () => {
    const response = await call(
      simulator.url,
      'GET',
      `/devices/${COM.battery.deviceReference}/measurement?property=soc`,
    );
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, {
      timestamp: T0,
      property: 'soc',
      value: 65,
      unit: '%',
      reference: COM.battery.deviceReference,
    });
    const consumed = await call(
      simulator.url,
      'GET',
      `/devices/${COM.meter.deviceReference}/measurement?property=totalEnergyConsumed`,
    );
    assert.equal(consumed.body.unit, 'Wh');
    assert.ok(consumed.body.value >= 500_000);
  });

  it('GET measurements/map and measurements (list) return the spec 4.3 / 4.4 shapes', async () => {
    const ref = HOME.battery.deviceReference;
    const asMap = await call(
      simulator.url,
      'GET',
      `/devices/${ref}/measurements/map?properties=soc,totalEnergyConsumed`,
    );
    assert.equal(asMap.status, 200);
    assert.equal(asMap.body.reference, ref);
    assert.deepEqual(Object.keys(asMap.body.measurements), ['soc', 'totalEnergyConsumed']);
    assert.deepEqual(asMap.body.measurements.soc, { value: 50, unit: '%' });
    const asList = await call(simulator.url, 'GET', `/devices/${ref}/measurements?properties=soc,power`);
    assert.equal(asList.status, 200);
    assert.equal(asList.body.reference, ref);
    assert.equal(asList.body.measurements.length, 2);
    for (const item of asList.body.measurements)
      assert.deepEqual(Object.keys(item).sort(), ['property', 'timestamp', 'unit', 'value']);
    assert.deepEqual(
      asList.body.measurements.map((x: any) => x.unit),
      ['%', 'W'],
    );
  });

  it('POST time-series: start inclusive, end exclusive, points at start + k*resolution, none after now', async () => {
    const body = {
      property: 'totalEnergyProduced',
      range: { type: 'absolute', start: '2026-06-20T12:00:00Z', end: '2026-06-21T18:00:00Z' },
      resolution: { value: 3, unit: 'h' },
    };
    const response = await call(
      simulator.url,
      'POST',
      `/devices/${COM.pv.deviceReference}/measurements/time-series`,
      body,
    );
    assert.equal(response.status, 200);
    // 20th 12:00 .. 21st 12:00 (= now) every 3 h: 9 points; 15:00 on the 21st is in the future.
    assert.equal(response.body.time.length, 9);
    assert.equal(response.body.data.length, 9);
    assert.equal(response.body.time[0], '2026-06-20T12:00:00Z');
    assert.equal(response.body.time[8], '2026-06-21T12:00:00Z');
    for (const v of response.body.data) assert.equal(typeof v, 'number');
    const end = await call(simulator.url, 'POST', `/devices/${COM.pv.deviceReference}/measurements/time-series`, {
      ...body,
      range: { type: 'absolute', start: '2026-06-21T09:00:00Z', end: '2026-06-21T12:00:00Z' },
      resolution: { value: 1, unit: 'h' },
    });
    assert.deepEqual(end.body.time, ['2026-06-21T09:00:00Z', '2026-06-21T10:00:00Z', '2026-06-21T11:00:00Z']);
  });

  it('GET /sites/:ref/steering and /sites/:ref/state return the simulator-only shapes', async () => {
    const st = await call(simulator.url, 'GET', `/sites/${COM.siteReference}/steering`);
    assert.equal(st.status, 200);
    assert.deepEqual(st.body, {
      siteReference: COM.siteReference,
      components: {
        energyStorageSetting: null,
        productionCurtailment: null,
        maximizeGridImport: null,
        gridTarget: null,
        gridLimits: null,
      },
    });
    const state = await call(simulator.url, 'GET', `/sites/${COM.siteReference}/state`);
    assert.equal(state.status, 200);
    assert.deepEqual(Object.keys(state.body).sort(), [
      'batteryW',
      'gridW',
      'loadW',
      'pvW',
      'siteReference',
      'soc',
      'timestamp',
    ]);
    const power = state.body;
    assert.ok(Math.abs(power.loadW - power.pvW - power.batteryW - power.gridW) <= 2, 'power balance');
    assert.ok(power.pvW > 0, 'sun at noon');
  });

  it('404 for unknown device, site, route and property', async () => {
    assertError(
      await call(simulator.url, 'GET', '/devices/dvc_000000000000/measurement?property=soc'),
      404,
      /unknown device/,
    );
    assertError(await call(simulator.url, 'GET', '/sites/ste_000000000000/steering'), 404, /unknown site/);
    assertError(
      await call(simulator.url, 'POST', '/sites/ste_000000000000/steering/ess', {
        setting: { value: 1, unit: 'kW' },
        validUntil: T0 + 60_000,
      }),
      404,
    );
    assertError(await call(simulator.url, 'GET', '/nothing/here'), 404, /unknown route/);
    assertError(
      await call(simulator.url, 'GET', `/devices/${COM.pv.deviceReference}/measurement?property=soc`),
      404,
      /no property/,
    );
    assertError(
      await call(simulator.url, 'GET', `/devices/${COM.pv.deviceReference}/measurements/map?properties=power,soc`),
      404,
    );
  });

  it('405 for a wrong method, with Allow', async () => {
    const response = await call(simulator.url, 'DELETE', '/devices');
    assertError(response, 405);
    assert.equal(response.headers.get('allow'), 'GET');
    assertError(await call(simulator.url, 'GET', `/sites/${COM.siteReference}/steering/ess`), 405);
  });

  it('400 for a missing property query, malformed JSON, a unit GW and wrong types', async () => {
    const dev = COM.battery.deviceReference;
    assertError(await call(simulator.url, 'GET', `/devices/${dev}/measurement`), 400, /property/);
    assertError(await call(simulator.url, 'GET', `/devices/${dev}/measurements?properties=`), 400);
    assertError(
      await call(simulator.url, 'POST', `/sites/${COM.siteReference}/steering`, '{"validUntil": '),
      400,
      /JSON/,
    );
    assertError(
      await call(simulator.url, 'POST', `/sites/${COM.siteReference}/steering/ess`, {
        setting: { value: 1, unit: 'GW' },
        validUntil: T0 + 60_000,
      }),
      400,
      /unit/,
    );
    assertError(
      await call(simulator.url, 'POST', `/sites/${COM.siteReference}/steering/ess`, {
        setting: { value: 'lots', unit: 'kW' },
        validUntil: T0 + 60_000,
      }),
      400,
    );
    assertError(await call(simulator.url, 'POST', `/sites/${COM.siteReference}/steering`, []), 400);
    assertError(await call(simulator.url, 'POST', `/sites/${COM.siteReference}/steering`), 400);
  });

  it('422 for a 31-day range, two properties, validUntil not after validFrom or in the past', async () => {
    const ts = `/devices/${COM.battery.deviceReference}/measurements/time-series`;
    const range = { type: 'absolute', start: '2026-05-01T00:00:00Z', end: '2026-06-01T00:00:00Z' };
    assertError(
      await call(simulator.url, 'POST', ts, { property: 'soc', range, resolution: { value: 1, unit: 'h' } }),
      422,
      /30 days/,
    );
    const ok = { type: 'absolute', start: '2026-06-01T00:00:00Z', end: '2026-06-02T00:00:00Z' };
    assertError(
      await call(simulator.url, 'POST', ts, { property: 'soc,power', range: ok, resolution: { value: 1, unit: 'h' } }),
      422,
      /one property/,
    );
    assertError(
      await call(simulator.url, 'POST', ts, {
        property: ['soc', 'power'],
        range: ok,
        resolution: { value: 1, unit: 'h' },
      }),
      422,
    );
    const ess = `/sites/${COM.siteReference}/steering/ess`;
    assertError(
      await call(simulator.url, 'POST', ess, {
        setting: { value: 1, unit: 'kW' },
        validFrom: T0 + 60_000,
        validUntil: T0 + 60_000,
      }),
      422,
    );
    assertError(
      await call(simulator.url, 'POST', ess, { setting: { value: 1, unit: 'kW' }, validUntil: T0 - 1 }),
      422,
      /future/,
    );
  });

  it('413 for a body over 1 MB', async () => {
    const big = JSON.stringify({ property: 'soc', pad: 'x'.repeat(1024 * 1024 + 10) });
    assertError(
      await call(simulator.url, 'POST', `/devices/${COM.battery.deviceReference}/measurements/time-series`, big),
      413,
    );
  });

  it('survives odd input: bad percent-encoding, scalar bodies, unknown fields', async () => {
    assertError(await call(simulator.url, 'GET', '/devices/%E0%A4%A/measurement?property=soc'), 400);
    for (const body of ['null', '42', '"text"', '{"setting": null, "validUntil": 1}']) {
      const response = await call(simulator.url, 'POST', `/sites/${COM.siteReference}/steering/ess`, body);
      assert.ok(response.status === 400 || response.status === 422, `${body}: ${response.status}`);
    }
    assertError(
      await call(simulator.url, 'POST', `/sites/${COM.siteReference}/steering`, { foo: 1, validUntil: T0 + 60_000 }),
      400,
      /foo/,
    );
    const ok = await call(simulator.url, 'GET', '/devices');
    assert.equal(ok.status, 200);
  });

  it('control endpoints: /sim/clock, /sim/stats, /sim/faults, /sim/reset', async () => {
    const clockReply = await call(simulator.url, 'POST', '/sim/clock', { advanceMs: 0 });
    assert.deepEqual(clockReply.body, { now: T0 });
    assert.match(clockReply.headers.get('x-request-id') ?? '', REQ_ID_RE);
    assertError(await call(simulator.url, 'POST', '/sim/clock', { advanceMs: -5 }), 400);
    const st = await call(simulator.url, 'GET', '/sim/stats');
    assert.equal(typeof st.body.requests, 'number');
    assert.equal(typeof st.body.byRoute, 'object');
    const faults = await call(simulator.url, 'GET', '/sim/faults');
    assert.deepEqual(faults.body, {
      rate500: 0,
      rate503: 0,
      rate429: 0,
      retryAfterSeconds: 1,
      resetRate: 0,
      latencyMs: [0, 0],
    });
    assertError(await call(simulator.url, 'POST', '/sim/faults', { rate500: 2 }), 400);
    assertError(await call(simulator.url, 'GET', '/sim/unknown'), 404);
    const response = await call(simulator.url, 'POST', '/sim/reset');
    assert.equal(response.body.reset, true);
    assert.equal((await call(simulator.url, 'GET', '/sim/stats')).body.requests, 0);
  });
});
