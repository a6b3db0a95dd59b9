import assert from 'node:assert/strict';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../src/protocol/time';
import { useSimulator } from '../helpers/sim';
import { BATTERY_DEFAULTS } from '../../src/simulator/sites';
import { COM, COUNTERS, HOME, post, read, T0 } from './counters';

describe('simulator: physics', () => {
  const simulator = useSimulator({ startTime: T0, frozen: true, seed: 3 }, { each: true });

  it('SOC falls under discharge and rises under charge (1 h each), by energy / capacity with the round-trip efficiency', async () => {
    const ref = COM.battery.deviceReference;
    const sqrtEff = Math.sqrt(BATTERY_DEFAULTS.efficiency);
    const soc0 = await read(simulator.url, ref, 'soc');
    await post(simulator.url, `/sites/${COM.siteReference}/steering/ess`, {
      setting: { value: 200, unit: 'kW' },
      validUntil: T0 + 10 * HOUR_MS,
    });
    simulator.sim.clock.advance(HOUR_MS);
    const soc1 = await read(simulator.url, ref, 'soc');
    // 200 kWh delivered (AC) take 200 / sqrt(eff) kWh from the store of 1 MWh.
    assert.ok(Math.abs(soc1 - (soc0 - 20 / sqrtEff)) < 0.01, `${soc0} -> ${soc1}`);
    await post(simulator.url, `/sites/${COM.siteReference}/steering/ess`, {
      setting: { value: -200, unit: 'kW' },
      validUntil: T0 + 10 * HOUR_MS,
    });
    simulator.sim.clock.advance(HOUR_MS);
    const soc2 = await read(simulator.url, ref, 'soc');
    // 200 kWh charged (AC) store 200 * sqrt(eff) kWh: a full cycle returns eff of what went in.
    assert.ok(Math.abs(soc2 - (soc1 + 20 * sqrtEff)) < 0.01, `${soc1} -> ${soc2}`);
    assert.ok(soc2 < soc0, 'the round trip loses energy');
  });

  it('SOC stays within its window: no discharge when empty (minSoc), no charge when full (maxSoc)', async () => {
    const ref = HOME.battery.deviceReference;
    const ess = (kW: number) =>
      post(simulator.url, `/sites/${HOME.siteReference}/steering/ess`, {
        setting: { value: kW, unit: 'kW' },
        validUntil: simulator.sim.clock.now() + DAY_MS,
      });
    await ess(10);
    simulator.sim.clock.advance(3 * HOUR_MS);
    assert.equal(await read(simulator.url, ref, 'soc'), BATTERY_DEFAULTS.minSoc);
    assert.equal(await read(simulator.url, ref, 'power'), 0);
    await ess(-10);
    simulator.sim.clock.advance(5 * HOUR_MS);
    assert.equal(await read(simulator.url, ref, 'soc'), BATTERY_DEFAULTS.maxSoc);
    assert.equal(await read(simulator.url, ref, 'power'), 0);
  });

  it('counters are monotonic over clock advances and steering changes', async () => {
    const seen = new Map<string, number>();
    const settings = [100, -300, 0, 500, -500];
    for (let i = 0; i < settings.length; i++) {
      await post(simulator.url, `/sites/${COM.siteReference}/steering/ess`, {
        setting: { value: settings[i], unit: 'kW' },
        validUntil: simulator.sim.clock.now() + 2 * HOUR_MS,
      });
      simulator.sim.clock.advance(97 * MINUTE_MS);
      for (const [ref, p] of COUNTERS) {
        const value = await read(simulator.url, ref, p);
        const key = `${ref}/${p}`;
        assert.ok(value >= (seen.get(key) ?? 0), `${key}: ${seen.get(key)} -> ${value}`);
        assert.ok(value >= 500_000, `${key} starts at the vendor example scale`);
        seen.set(key, value);
      }
    }
  });

  it('PV follows the day: zero at night, positive around noon', async () => {
    simulator.sim.clock.advance(18 * HOUR_MS); // midnight UTC
    assert.equal(await read(simulator.url, COM.pv.deviceReference, 'power'), 0);
    simulator.sim.clock.advance(12 * HOUR_MS); // noon
    assert.ok((await read(simulator.url, COM.pv.deviceReference, 'power')) > 100_000);
  });

  it('advancing a year: the state catches up in one step, within its limits, the counters a year further', async () => {
    const before = await read(simulator.url, HOME.meter.deviceReference, 'totalEnergyConsumed');
    simulator.sim.clock.advance(365 * DAY_MS);
    const soc = await read(simulator.url, COM.battery.deviceReference, 'soc');
    const home = await read(simulator.url, HOME.battery.deviceReference, 'soc');
    const after = await read(simulator.url, HOME.meter.deviceReference, 'totalEnergyConsumed');
    for (const v of [soc, home]) assert.ok(v >= 5 && v <= 95, `SOC ${v} % within the 5-95 % window`);
    assert.ok(after > before, `the meter counted the year: ${before} -> ${after} Wh`);
    // (How fast a year is simulated is a benchmark's question, not a test's.)
  });
});
