import assert from 'node:assert/strict';
import { endOfQuarterHour, HOUR_MS, MINUTE_MS } from '../../src/protocol/time';
import { DEFAULT_SITES } from '../../src/simulator/index';
import { useSimulator } from '../helpers/sim';
import { BATTERY_DEFAULTS } from '../../src/simulator/sites';
import { call } from '../helpers/sim-http';

const T0 = Date.UTC(2026, 5, 21, 12, 5, 0); // summer, sun high (UTC)
const COM = DEFAULT_SITES[0];
const HOME = DEFAULT_SITES[1];
const SITE = `/sites/${COM.siteReference}`;

describe('simulator: steering components (spec section 3)', () => {
  const simulator = useSimulator({ startTime: T0, frozen: true }, { each: true });

  const state = async (site = SITE) => (await call(simulator.url, 'GET', `${site}/steering`)).body.components;
  const flows = async (site = SITE) => (await call(simulator.url, 'GET', `${site}/state`)).body;

  it('worked example: site signal, then ESS-only 300 kW keeps curtailment 300 kW and validUntil', async () => {
    const validUntil = endOfQuarterHour(T0);
    const first = await call(simulator.url, 'POST', `${SITE}/steering`, {
      energyStorageSetting: { value: 100, unit: 'kW' },
      productionCurtailment: { value: 300, unit: 'kW' },
      maximizeGridImport: false,
      validUntil,
    });
    assert.equal(first.status, 200);
    assert.match(first.body.requestId, /^req_[0-9a-f]{16}$/);
    assert.equal(first.headers.get('x-request-id'), first.body.requestId);
    assert.deepEqual(
      { ...first.body, requestId: undefined },
      {
        energyStorageSetting: { value: 100, unit: 'kW' },
        productionCurtailment: { value: 300, unit: 'kW' },
        maximizeGridImport: false,
        validUntil,
        requestId: undefined,
      },
    );

    const ess = await call(simulator.url, 'POST', `${SITE}/steering/ess`, {
      setting: { value: 300, unit: 'kW' },
      validUntil,
    });
    assert.equal(ess.status, 200);
    assert.deepEqual(
      { ...ess.body, requestId: undefined },
      { setting: { value: 300, unit: 'kW' }, validUntil, requestId: undefined },
    );

    const stateNow = await state();
    assert.deepEqual(stateNow.energyStorageSetting, { value: 300, unit: 'kW', validFrom: T0, validUntil });
    assert.deepEqual(stateNow.productionCurtailment, { value: 300, unit: 'kW', validFrom: T0, validUntil });
    assert.deepEqual(stateNow.maximizeGridImport, { value: false, validFrom: T0, validUntil });
    assert.equal(stateNow.gridTarget, null);

    const flowsNow = await flows();
    assert.equal(flowsNow.batteryW, 300_000);
    assert.ok(flowsNow.pvW <= 300_000);
  });

  it('normalises units and echoes the accepted payload (e.g. "kw" -> "kW")', async () => {
    const response = await call(simulator.url, 'POST', `${SITE}/steering/ess`, {
      setting: { value: '-50', unit: 'kw' },
      validUntil: T0 + HOUR_MS,
    });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body.setting, { value: -50, unit: 'kW' });
  });

  it('a combined request leaves absent components alone; curtailment-only replaces only curtailment', async () => {
    const until = T0 + HOUR_MS;
    await call(simulator.url, 'POST', `${SITE}/steering`, {
      energyStorageSetting: { value: -100, unit: 'kW' },
      validUntil: until,
    });
    await call(simulator.url, 'POST', `${SITE}/steering`, {
      productionCurtailment: { value: 50, unit: '%' },
      validUntil: until + HOUR_MS,
    });
    let stateNow = await state();
    assert.deepEqual(stateNow.energyStorageSetting, { value: -100, unit: 'kW', validFrom: T0, validUntil: until });
    assert.deepEqual(stateNow.productionCurtailment, {
      value: 50,
      unit: '%',
      validFrom: T0,
      validUntil: until + HOUR_MS,
    });
    assert.equal(stateNow.maximizeGridImport, null);

    const response = await call(simulator.url, 'POST', `${SITE}/steering/curtailment`, {
      setting: { value: 0.2, unit: 'MW' },
      validUntil: until,
    });
    assert.equal(response.status, 200);
    stateNow = await state();
    assert.deepEqual(stateNow.productionCurtailment, { value: 0.2, unit: 'MW', validFrom: T0, validUntil: until });
    assert.deepEqual(stateNow.energyStorageSetting, { value: -100, unit: 'kW', validFrom: T0, validUntil: until });
    const flowsNow = await flows();
    assert.ok(flowsNow.pvW <= 200_000);
    assert.equal(flowsNow.batteryW, -100_000);
  });

  it('components expire independently (clock advanced, no sleeps)', async () => {
    await call(simulator.url, 'POST', `${SITE}/steering`, {
      energyStorageSetting: { value: 100, unit: 'kW' },
      validUntil: T0 + 15 * MINUTE_MS,
    });
    await call(simulator.url, 'POST', `${SITE}/steering/curtailment`, {
      setting: { value: 100, unit: 'kW' },
      validUntil: T0 + HOUR_MS,
    });
    simulator.sim.clock.advance(20 * MINUTE_MS);
    let stateNow = await state();
    assert.equal(stateNow.energyStorageSetting, null);
    assert.equal(stateNow.productionCurtailment.value, 100);
    const flowsNow = await flows();
    assert.notEqual(flowsNow.batteryW, 100_000, 'ESS no longer applies');
    assert.ok(flowsNow.pvW <= 100_000);
    await call(simulator.url, 'POST', '/sim/clock', { advanceMs: HOUR_MS });
    stateNow = await state();
    assert.equal(stateNow.productionCurtailment, null);
    assert.ok((await flows()).pvW > 100_000, 'curtailment lifted at noon');
  });

  it('expiry and validFrom apply at the exact instant inside the physics (one 1-hour jump)', async () => {
    const read = async (property: string) =>
      (await call(simulator.url, 'GET', `/devices/${COM.battery.deviceReference}/measurement?property=${property}`))
        .body.value as number;
    const [soc0, out0, in0] = [await read('soc'), await read('totalEnergyProduced'), await read('totalEnergyConsumed')];
    // 30 min discharging at 500 kW, then 30 min charging at 500 kW (maximize grid import).
    await call(simulator.url, 'POST', `${SITE}/steering/ess`, {
      setting: { value: 500, unit: 'kW' },
      validUntil: T0 + 30 * MINUTE_MS,
    });
    await call(simulator.url, 'POST', `${SITE}/steering`, {
      maximizeGridImport: true,
      validFrom: T0 + 30 * MINUTE_MS,
      validUntil: T0 + 90 * MINUTE_MS,
    });
    simulator.sim.clock.advance(HOUR_MS);
    // 250 kWh out and 250 kWh in through a 90 % round-trip efficiency (AC side): the store ends lower.
    assert.ok(Math.abs((await read('soc')) - (soc0 - 25 * (1 / Math.sqrt(0.9) - Math.sqrt(0.9)))) < 0.01);
    assert.ok(Math.abs((await read('totalEnergyProduced')) - out0 - 250_000) < 1);
    assert.ok(Math.abs((await read('totalEnergyConsumed')) - in0 - 250_000) < 1);
  });

  it('a component with validFrom in the future is stored but applies only from then', async () => {
    const from = T0 + 30 * MINUTE_MS;
    const response = await call(simulator.url, 'POST', `${SITE}/steering/ess`, {
      setting: { value: 42, unit: 'kW' },
      validFrom: from,
      validUntil: from + HOUR_MS,
    });
    assert.equal(response.status, 200);
    assert.equal(response.body.validFrom, from);
    assert.equal((await state()).energyStorageSetting, null);
    assert.notEqual((await flows()).batteryW, 42_000);
    simulator.sim.clock.advance(30 * MINUTE_MS);
    assert.deepEqual((await state()).energyStorageSetting, {
      value: 42,
      unit: 'kW',
      validFrom: from,
      validUntil: from + HOUR_MS,
    });
    assert.equal((await flows()).batteryW, 42_000);
  });

  it('maximizeGridImport: battery charges at max power, production curtailed to 0', async () => {
    await call(simulator.url, 'POST', `${SITE}/steering`, { maximizeGridImport: true, validUntil: T0 + HOUR_MS });
    const flowsNow = await flows();
    assert.equal(flowsNow.batteryW, -COM.battery.maxPowerW);
    assert.equal(flowsNow.pvW, 0);
    assert.equal(flowsNow.gridW, flowsNow.loadW + COM.battery.maxPowerW);
  });

  it('ESS settings beyond the battery limits are clamped', async () => {
    await call(simulator.url, 'POST', `${SITE}/steering/ess`, {
      setting: { value: 2, unit: 'MW' },
      validUntil: T0 + HOUR_MS,
    });
    assert.equal((await flows()).batteryW, COM.battery.maxPowerW);
    await call(simulator.url, 'POST', `${SITE}/steering/ess`, {
      setting: { value: -2, unit: 'MW' },
      validUntil: T0 + HOUR_MS,
    });
    assert.equal((await flows()).batteryW, -COM.battery.maxPowerW);
  });

  it('curtailment in % caps PV at that share of installed power', async () => {
    const before = (await flows()).pvW;
    assert.ok(before > 250_000, `PV at noon ${before}`);
    await call(simulator.url, 'POST', `${SITE}/steering/curtailment`, {
      setting: { value: 10, unit: '%' },
      validUntil: T0 + HOUR_MS,
    });
    assert.equal((await flows()).pvW, 100_000);
  });

  it('grid target: grid import reaches the setpoint; a deadband leaves the battery idle; DELETE cancels', async () => {
    const home = `/sites/${HOME.siteReference}`;
    const response = await call(simulator.url, 'POST', `${home}/steering/grid-target`, {
      setpoint: { value: 2, unit: 'kW' },
      validUntil: T0 + HOUR_MS,
    });
    assert.equal(response.status, 200);
    assert.deepEqual(
      { ...response.body, requestId: undefined },
      { setpoint: { value: 2, unit: 'kW' }, validUntil: T0 + HOUR_MS, requestId: undefined },
    );
    let flowsNow = await flows(home);
    assert.ok(Math.abs(flowsNow.gridW - 2000) <= 1, `grid ${flowsNow.gridW}`);
    assert.deepEqual((await state(home)).gridTarget, { value: 2, unit: 'kW', validFrom: T0, validUntil: T0 + HOUR_MS });

    // A band wide enough to contain the idle grid power: nothing is adjusted.
    await call(simulator.url, 'POST', `${home}/steering/grid-target`, {
      setpoint: { value: 0, unit: 'W' },
      deadband: { value: 1, unit: 'MW' },
      validUntil: T0 + HOUR_MS,
    });
    flowsNow = await flows(home);
    assert.equal(flowsNow.batteryW, 0);
    assert.deepEqual((await state(home)).gridTarget.deadband, { value: 1, unit: 'MW' });

    const del = await call(simulator.url, 'DELETE', `${home}/steering/grid-target`);
    assert.equal(del.status, 200);
    assert.equal(del.body.cancelled, true);
    assert.match(del.body.requestId, /^req_[0-9a-f]{16}$/);
    assert.equal((await state(home)).gridTarget, null);
    assert.equal((await call(simulator.url, 'DELETE', `${home}/steering/grid-target`)).body.cancelled, false);
  });

  it('grid target curtails production when the battery cannot absorb the surplus', async () => {
    const home = `/sites/${HOME.siteReference}`;
    // Fill the home battery first, then ask for zero export at noon.
    await call(simulator.url, 'POST', `${home}/steering/ess`, {
      setting: { value: -10, unit: 'kW' },
      validUntil: T0 + 3 * HOUR_MS,
    });
    simulator.sim.clock.advance(3 * HOUR_MS);
    // Full is the top of the SOC window (vendor notes: device constraints), not 100 %.
    assert.ok(
      Math.abs(simulator.sim.siteState(HOME.siteReference).soc - (HOME.battery.maxSoc ?? BATTERY_DEFAULTS.maxSoc)) <
        0.1,
    );
    const now = simulator.sim.clock.now();
    await call(simulator.url, 'POST', `${home}/steering/grid-target`, {
      setpoint: { value: 0, unit: 'W' },
      validUntil: now + HOUR_MS,
    });
    const flowsNow = await flows(home);
    assert.equal(flowsNow.batteryW, 0);
    assert.ok(Math.abs(flowsNow.gridW) <= 1, `grid ${flowsNow.gridW}`);
  });

  it('without any component the battery does self-consumption', async () => {
    const flowsNow = await flows();
    const expected = Math.max(-COM.battery.maxPowerW, Math.min(COM.battery.maxPowerW, flowsNow.loadW - flowsNow.pvW));
    assert.ok(Math.abs(flowsNow.batteryW - expected) <= 1);
  });

  it('sim.steeringState() and POST /sim/reset', async () => {
    await call(simulator.url, 'POST', `${SITE}/steering/ess`, {
      setting: { value: 1, unit: 'kW' },
      validUntil: T0 + HOUR_MS,
    });
    assert.equal(simulator.sim.steeringState(COM.siteReference).components.energyStorageSetting?.value, 1);
    await call(simulator.url, 'POST', '/sim/reset');
    assert.equal(simulator.sim.steeringState(COM.siteReference).components.energyStorageSetting, null);
    assert.throws(() => simulator.sim.steeringState('ste_unknown00000'), /unknown site/);
  });
});
