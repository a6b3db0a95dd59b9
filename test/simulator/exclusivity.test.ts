/**
 * The vendor's steering facts: asset steering (combined, ESS-only, curtailment-only) and
 * grid target cannot be used together; "only the last received steering request of each type
 * is processed". In the simulator a request of one type ends the other type in force on that
 * site (at once, also one stored for a future validFrom, like a replaced slot: A18); grid
 * limits coexist with both; a cancel ends nothing else. Checked through HTTP: GET steering
 * shows the other type gone, and the flows follow what is left.
 */
import assert from 'node:assert/strict';
import { HOUR_MS, MINUTE_MS } from '../../src/protocol/time';
import { DISPLACES, STEERING_ENDPOINTS, STEERING_ENDPOINT_NAMES, steeringTypeOf } from '../../src/protocol/endpoints';
import { DEFAULT_SITES } from '../../src/simulator/index';
import { useSimulator } from '../helpers/sim';
import { call } from '../helpers/sim-http';

const T0 = Date.UTC(2026, 5, 21, 12, 5, 0);
const COM = DEFAULT_SITES[0];
const HOME = DEFAULT_SITES[1];
const kW = (value: number) => ({ value, unit: 'kW' });

describe('simulator: asset steering and grid target displace each other', () => {
  const simulator = useSimulator({ startTime: T0, frozen: true }, { each: true });

  const site = `/sites/${COM.siteReference}`;
  const post = async (p: string, body: unknown) => {
    const response = await call(simulator.url, 'POST', `${site}${p}`, body);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  };
  const components = async (ref = COM.siteReference) =>
    (await call(simulator.url, 'GET', `/sites/${ref}/steering`)).body.components;
  const flows = async () => (await call(simulator.url, 'GET', `${site}/state`)).body;
  const until = T0 + HOUR_MS;
  const assetAll = () =>
    post('/steering', {
      energyStorageSetting: kW(-100),
      productionCurtailment: kW(400),
      maximizeGridImport: false,
      validUntil: until,
    });

  it('the simulator follows the protocol table: asset and grid target displace each other, grid limits neither', () => {
    assert.deepEqual(DISPLACES, { asset: ['grid-target'], 'grid-target': ['asset'], 'grid-limits': [] });
    const types = Object.fromEntries(STEERING_ENDPOINT_NAMES.map((e) => [e, steeringTypeOf(e)]));
    assert.deepEqual(types, {
      combined: 'asset',
      ess: 'asset',
      curtailment: 'asset',
      'grid-target': 'grid-target',
      'cancel-grid-target': 'grid-target',
      'grid-limits': 'grid-limits',
    });
    assert.equal(STEERING_ENDPOINTS['cancel-grid-target'].method, 'DELETE');
  });

  it('a grid-target request ends the asset steering in force: ESS, curtailment and maximize grid import', async () => {
    await assetAll();
    let componentsNow = await components();
    assert.ok(
      componentsNow.energyStorageSetting && componentsNow.productionCurtailment && componentsNow.maximizeGridImport,
    );
    assert.equal((await flows()).batteryW, -100_000);
    await post('/steering/grid-target', { setpoint: kW(50), validUntil: until });
    componentsNow = await components();
    assert.deepEqual(
      [componentsNow.energyStorageSetting, componentsNow.productionCurtailment, componentsNow.maximizeGridImport],
      [null, null, null],
    );
    assert.deepEqual(componentsNow.gridTarget, { value: 50, unit: 'kW', validFrom: T0, validUntil: until });
    const flowsNow = await flows();
    assert.ok(Math.abs(flowsNow.gridW - 50_000) <= 1, `the grid target governs: grid ${flowsNow.gridW}`);
  });

  for (const [name, p, body] of [
    ['ESS-only', '/steering/ess', { setting: kW(120), validUntil: until }],
    ['curtailment-only', '/steering/curtailment', { setting: kW(100), validUntil: until }],
    ['combined', '/steering', { maximizeGridImport: true, validUntil: until }],
  ] as const) {
    it(`${name}: a request ends the grid target in force`, async () => {
      await post('/steering/grid-target', { setpoint: kW(0), deadband: kW(1), validUntil: until });
      assert.ok((await components()).gridTarget);
      await post(p, body);
      const componentsNow = await components();
      assert.equal(componentsNow.gridTarget, null);
      const flowsNow = await flows();
      if (name === 'ESS-only') assert.equal(flowsNow.batteryW, 120_000, 'the ESS setting governs');
      if (name === 'curtailment-only') assert.ok(flowsNow.pvW <= 100_000);
      if (name === 'combined') assert.deepEqual([flowsNow.pvW, flowsNow.batteryW], [0, -COM.battery.maxPowerW]);
    });
  }

  it('a request with a future validFrom ends the other type at once (A18: a slot is replaced when the request arrives)', async () => {
    await post('/steering/ess', { setting: kW(200), validUntil: until });
    await post('/steering/grid-target', { setpoint: kW(0), validFrom: T0 + 30 * MINUTE_MS, validUntil: until });
    let componentsNow = await components();
    assert.equal(componentsNow.energyStorageSetting, null, 'ended at once');
    assert.equal(componentsNow.gridTarget, null, 'not yet in force');
    const flowsNow = await flows();
    assert.ok(
      Math.abs(
        flowsNow.batteryW -
          Math.max(-COM.battery.maxPowerW, Math.min(COM.battery.maxPowerW, flowsNow.loadW - flowsNow.pvW)),
      ) <= 1,
      'self-consumption until then',
    );
    simulator.sim.clock.advance(30 * MINUTE_MS);
    componentsNow = await components();
    assert.equal(componentsNow.gridTarget.value, 0);
    // And the other way: an asset request ends a grid target that was only stored for later.
    await post('/steering/grid-target', { setpoint: kW(10), validFrom: T0 + 50 * MINUTE_MS, validUntil: until });
    await post('/steering/curtailment', { setting: kW(500), validUntil: until });
    simulator.sim.clock.advance(25 * MINUTE_MS);
    componentsNow = await components();
    assert.equal(componentsNow.gridTarget, null, 'the stored grid target never applies');
    assert.equal(componentsNow.productionCurtailment.value, 500);
  });

  it('within one type, requests replace only the components they carry', async () => {
    await assetAll();
    await post('/steering/ess', { setting: kW(30), validUntil: until });
    const componentsNow = await components();
    assert.equal(componentsNow.energyStorageSetting.value, 30);
    assert.equal(componentsNow.productionCurtailment.value, 400, 'asset steering does not end asset steering');
    assert.equal(componentsNow.maximizeGridImport.value, false);
  });

  it('cancelling the grid target ends nothing else', async () => {
    await assetAll();
    const del = await call(simulator.url, 'DELETE', `${site}/steering/grid-target`);
    assert.equal(del.status, 200);
    assert.equal(del.body.cancelled, false);
    const componentsNow = await components();
    assert.ok(
      componentsNow.energyStorageSetting && componentsNow.productionCurtailment && componentsNow.maximizeGridImport,
      'asset steering still in force',
    );
  });

  it('grid limits coexist with asset steering and with a grid target, and neither ends them', async () => {
    await post('/steering/grid-limits', { upperLimit: kW(900), validUntil: until });
    await assetAll();
    let componentsNow = await components();
    assert.ok(
      componentsNow.gridLimits && componentsNow.energyStorageSetting,
      'asset steering and grid limits together',
    );
    await post('/steering/grid-target', { setpoint: kW(0), validUntil: until });
    componentsNow = await components();
    assert.ok(componentsNow.gridLimits && componentsNow.gridTarget, 'grid target and grid limits together');
    assert.equal(componentsNow.energyStorageSetting, null);
    await post('/steering/grid-limits', { lowerLimit: kW(-50), validUntil: until });
    componentsNow = await components();
    assert.ok(componentsNow.gridTarget, 'a grid-limits request ends no other type');
    assert.deepEqual(componentsNow.gridLimits.requested, { lowerLimit: kW(-50) }, 'only the last grid-limits request');
  });

  it("displacement is per site: a grid target on one site leaves the other site's asset steering alone", async () => {
    await call(simulator.url, 'POST', `/sites/${HOME.siteReference}/steering/ess`, {
      setting: kW(2),
      validUntil: until,
    });
    await post('/steering/grid-target', { setpoint: kW(0), validUntil: until });
    assert.equal((await components(HOME.siteReference)).energyStorageSetting.value, 2);
  });

  it('a refused request ends nothing', async () => {
    await assetAll();
    const response = await call(simulator.url, 'POST', `${site}/steering/grid-target`, {
      setpoint: { value: 1, unit: '%' },
      validUntil: until,
    });
    assert.equal(response.status, 400);
    assert.ok((await components()).energyStorageSetting, 'still in force');
  });
});
