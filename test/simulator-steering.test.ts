import assert from 'node:assert/strict';
import { endOfQuarterHour, HOUR_MS, MINUTE_MS } from '../src/protocol/time';
import { DEFAULT_SITES } from '../src/simulator/index';
import { useSimulator } from './helpers/sim';
import { BATTERY_DEFAULTS } from '../src/simulator/sites';
import { call } from './helpers/sim-http';

const T0 = Date.UTC(2026, 5, 21, 12, 5, 0); // summer, sun high (UTC)
const COM = DEFAULT_SITES[0];
const HOME = DEFAULT_SITES[1];
const SITE = `/sites/${COM.siteReference}`;

describe('simulator: steering components (spec section 3)', () => {
  const s = useSimulator({ startTime: T0, frozen: true }, { each: true });

  const state = async (site = SITE) => (await call(s.url, 'GET', `${site}/steering`)).body.components;
  const flows = async (site = SITE) => (await call(s.url, 'GET', `${site}/state`)).body;

  it('worked example: site signal, then ESS-only 300 kW keeps curtailment 300 kW and validUntil', async () => {
    const validUntil = endOfQuarterHour(T0);
    const first = await call(s.url, 'POST', `${SITE}/steering`, {
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

    const ess = await call(s.url, 'POST', `${SITE}/steering/ess`, { setting: { value: 300, unit: 'kW' }, validUntil });
    assert.equal(ess.status, 200);
    assert.deepEqual(
      { ...ess.body, requestId: undefined },
      { setting: { value: 300, unit: 'kW' }, validUntil, requestId: undefined },
    );

    const c = await state();
    assert.deepEqual(c.energyStorageSetting, { value: 300, unit: 'kW', validFrom: T0, validUntil });
    assert.deepEqual(c.productionCurtailment, { value: 300, unit: 'kW', validFrom: T0, validUntil });
    assert.deepEqual(c.maximizeGridImport, { value: false, validFrom: T0, validUntil });
    assert.equal(c.gridTarget, null);

    const f = await flows();
    assert.equal(f.batteryW, 300_000);
    assert.ok(f.pvW <= 300_000);
  });

  it('normalises units and echoes the accepted payload (e.g. "kw" -> "kW")', async () => {
    const r = await call(s.url, 'POST', `${SITE}/steering/ess`, {
      setting: { value: '-50', unit: 'kw' },
      validUntil: T0 + HOUR_MS,
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.setting, { value: -50, unit: 'kW' });
  });

  it('a combined request leaves absent components alone; curtailment-only replaces only curtailment', async () => {
    const until = T0 + HOUR_MS;
    await call(s.url, 'POST', `${SITE}/steering`, {
      energyStorageSetting: { value: -100, unit: 'kW' },
      validUntil: until,
    });
    await call(s.url, 'POST', `${SITE}/steering`, {
      productionCurtailment: { value: 50, unit: '%' },
      validUntil: until + HOUR_MS,
    });
    let c = await state();
    assert.deepEqual(c.energyStorageSetting, { value: -100, unit: 'kW', validFrom: T0, validUntil: until });
    assert.deepEqual(c.productionCurtailment, { value: 50, unit: '%', validFrom: T0, validUntil: until + HOUR_MS });
    assert.equal(c.maximizeGridImport, null);

    const r = await call(s.url, 'POST', `${SITE}/steering/curtailment`, {
      setting: { value: 0.2, unit: 'MW' },
      validUntil: until,
    });
    assert.equal(r.status, 200);
    c = await state();
    assert.deepEqual(c.productionCurtailment, { value: 0.2, unit: 'MW', validFrom: T0, validUntil: until });
    assert.deepEqual(c.energyStorageSetting, { value: -100, unit: 'kW', validFrom: T0, validUntil: until });
    const f = await flows();
    assert.ok(f.pvW <= 200_000);
    assert.equal(f.batteryW, -100_000);
  });

  it('components expire independently (clock advanced, no sleeps)', async () => {
    await call(s.url, 'POST', `${SITE}/steering`, {
      energyStorageSetting: { value: 100, unit: 'kW' },
      validUntil: T0 + 15 * MINUTE_MS,
    });
    await call(s.url, 'POST', `${SITE}/steering/curtailment`, {
      setting: { value: 100, unit: 'kW' },
      validUntil: T0 + HOUR_MS,
    });
    s.sim.clock.advance(20 * MINUTE_MS);
    let c = await state();
    assert.equal(c.energyStorageSetting, null);
    assert.equal(c.productionCurtailment.value, 100);
    const f = await flows();
    assert.notEqual(f.batteryW, 100_000, 'ESS no longer applies');
    assert.ok(f.pvW <= 100_000);
    await call(s.url, 'POST', '/sim/clock', { advanceMs: HOUR_MS });
    c = await state();
    assert.equal(c.productionCurtailment, null);
    assert.ok((await flows()).pvW > 100_000, 'curtailment lifted at noon');
  });

  it('expiry and validFrom apply at the exact instant inside the physics (one 1-hour jump)', async () => {
    const read = async (property: string) =>
      (await call(s.url, 'GET', `/devices/${COM.battery.deviceReference}/measurement?property=${property}`)).body
        .value as number;
    const [soc0, out0, in0] = [await read('soc'), await read('totalEnergyProduced'), await read('totalEnergyConsumed')];
    // 30 min discharging at 500 kW, then 30 min charging at 500 kW (maximize grid import).
    await call(s.url, 'POST', `${SITE}/steering/ess`, {
      setting: { value: 500, unit: 'kW' },
      validUntil: T0 + 30 * MINUTE_MS,
    });
    await call(s.url, 'POST', `${SITE}/steering`, {
      maximizeGridImport: true,
      validFrom: T0 + 30 * MINUTE_MS,
      validUntil: T0 + 90 * MINUTE_MS,
    });
    s.sim.clock.advance(HOUR_MS);
    // 250 kWh out and 250 kWh in through a 90 % round-trip efficiency (AC side): the store ends lower.
    assert.ok(Math.abs((await read('soc')) - (soc0 - 25 * (1 / Math.sqrt(0.9) - Math.sqrt(0.9)))) < 0.01);
    assert.ok(Math.abs((await read('totalEnergyProduced')) - out0 - 250_000) < 1);
    assert.ok(Math.abs((await read('totalEnergyConsumed')) - in0 - 250_000) < 1);
  });

  it('a component with validFrom in the future is stored but applies only from then', async () => {
    const from = T0 + 30 * MINUTE_MS;
    const r = await call(s.url, 'POST', `${SITE}/steering/ess`, {
      setting: { value: 42, unit: 'kW' },
      validFrom: from,
      validUntil: from + HOUR_MS,
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.validFrom, from);
    assert.equal((await state()).energyStorageSetting, null);
    assert.notEqual((await flows()).batteryW, 42_000);
    s.sim.clock.advance(30 * MINUTE_MS);
    assert.deepEqual((await state()).energyStorageSetting, {
      value: 42,
      unit: 'kW',
      validFrom: from,
      validUntil: from + HOUR_MS,
    });
    assert.equal((await flows()).batteryW, 42_000);
  });

  it('maximizeGridImport: battery charges at max power, production curtailed to 0', async () => {
    await call(s.url, 'POST', `${SITE}/steering`, { maximizeGridImport: true, validUntil: T0 + HOUR_MS });
    const f = await flows();
    assert.equal(f.batteryW, -COM.battery.maxPowerW);
    assert.equal(f.pvW, 0);
    assert.equal(f.gridW, f.loadW + COM.battery.maxPowerW);
  });

  it('ESS settings beyond the battery limits are clamped', async () => {
    await call(s.url, 'POST', `${SITE}/steering/ess`, { setting: { value: 2, unit: 'MW' }, validUntil: T0 + HOUR_MS });
    assert.equal((await flows()).batteryW, COM.battery.maxPowerW);
    await call(s.url, 'POST', `${SITE}/steering/ess`, { setting: { value: -2, unit: 'MW' }, validUntil: T0 + HOUR_MS });
    assert.equal((await flows()).batteryW, -COM.battery.maxPowerW);
  });

  it('curtailment in % caps PV at that share of installed power', async () => {
    const before = (await flows()).pvW;
    assert.ok(before > 250_000, `PV at noon ${before}`);
    await call(s.url, 'POST', `${SITE}/steering/curtailment`, {
      setting: { value: 10, unit: '%' },
      validUntil: T0 + HOUR_MS,
    });
    assert.equal((await flows()).pvW, 100_000);
  });

  it('grid target: grid import reaches the setpoint; a deadband leaves the battery idle; DELETE cancels', async () => {
    const home = `/sites/${HOME.siteReference}`;
    const r = await call(s.url, 'POST', `${home}/steering/grid-target`, {
      setpoint: { value: 2, unit: 'kW' },
      validUntil: T0 + HOUR_MS,
    });
    assert.equal(r.status, 200);
    assert.deepEqual(
      { ...r.body, requestId: undefined },
      { setpoint: { value: 2, unit: 'kW' }, validUntil: T0 + HOUR_MS, requestId: undefined },
    );
    let f = await flows(home);
    assert.ok(Math.abs(f.gridW - 2000) <= 1, `grid ${f.gridW}`);
    assert.deepEqual((await state(home)).gridTarget, { value: 2, unit: 'kW', validFrom: T0, validUntil: T0 + HOUR_MS });

    // A band wide enough to contain the idle grid power: nothing is adjusted.
    await call(s.url, 'POST', `${home}/steering/grid-target`, {
      setpoint: { value: 0, unit: 'W' },
      deadband: { value: 1, unit: 'MW' },
      validUntil: T0 + HOUR_MS,
    });
    f = await flows(home);
    assert.equal(f.batteryW, 0);
    assert.deepEqual((await state(home)).gridTarget.deadband, { value: 1, unit: 'MW' });

    const del = await call(s.url, 'DELETE', `${home}/steering/grid-target`);
    assert.equal(del.status, 200);
    assert.equal(del.body.cancelled, true);
    assert.match(del.body.requestId, /^req_[0-9a-f]{16}$/);
    assert.equal((await state(home)).gridTarget, null);
    assert.equal((await call(s.url, 'DELETE', `${home}/steering/grid-target`)).body.cancelled, false);
  });

  it('grid target curtails production when the battery cannot absorb the surplus', async () => {
    const home = `/sites/${HOME.siteReference}`;
    // Fill the home battery first, then ask for zero export at noon.
    await call(s.url, 'POST', `${home}/steering/ess`, {
      setting: { value: -10, unit: 'kW' },
      validUntil: T0 + 3 * HOUR_MS,
    });
    s.sim.clock.advance(3 * HOUR_MS);
    // Full is the top of the SOC window (issue 12: device constraints), not 100 %.
    assert.ok(
      Math.abs(s.sim.siteState(HOME.siteReference).soc - (HOME.battery.maxSoc ?? BATTERY_DEFAULTS.maxSoc)) < 0.1,
    );
    const t = s.sim.clock.now();
    await call(s.url, 'POST', `${home}/steering/grid-target`, {
      setpoint: { value: 0, unit: 'W' },
      validUntil: t + HOUR_MS,
    });
    const f = await flows(home);
    assert.equal(f.batteryW, 0);
    assert.ok(Math.abs(f.gridW) <= 1, `grid ${f.gridW}`);
  });

  it('without any component the battery does self-consumption', async () => {
    const f = await flows();
    const expected = Math.max(-COM.battery.maxPowerW, Math.min(COM.battery.maxPowerW, f.loadW - f.pvW));
    assert.ok(Math.abs(f.batteryW - expected) <= 1);
  });

  it('sim.steeringState() and POST /sim/reset', async () => {
    await call(s.url, 'POST', `${SITE}/steering/ess`, { setting: { value: 1, unit: 'kW' }, validUntil: T0 + HOUR_MS });
    assert.equal(s.sim.steeringState(COM.siteReference).components.energyStorageSetting?.value, 1);
    await call(s.url, 'POST', '/sim/reset');
    assert.equal(s.sim.steeringState(COM.siteReference).components.energyStorageSetting, null);
    assert.throws(() => s.sim.steeringState('ste_unknown00000'), /unknown site/);
  });
});
