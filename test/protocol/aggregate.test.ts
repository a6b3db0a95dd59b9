/**
 * Fleet read: the aggregate (protocol/aggregate.ts: sums of power and energy per
 * property in W and Wh whatever the units, the SOC mean weighted by capacity or plain) and the
 * bounded fan-out of runtime/fleet-read.ts (at most so many reads in flight, every device ends).
 */
import assert from 'node:assert/strict';
import { FleetAggregator, energyFactor, powerUnit } from '../../src/protocol/aggregate';

describe('fleet read: aggregate', () => {
  it('sums power in W and energy in Wh across units, per property', () => {
    const aggregator = new FleetAggregator();
    aggregator.answered();
    aggregator.add('a', 'power', 300, 'W');
    aggregator.add('b', 'power', 5, 'kW');
    aggregator.add('c', 'power', 0.001, 'MW');
    aggregator.add('a', 'pvPower', 2, 'kw');
    aggregator.add('a', 'totalEnergyProduced', 1, 'MWh');
    aggregator.add('b', 'totalEnergyProduced', 500, 'kWh');
    aggregator.add('c', 'totalEnergyProduced', 20, 'Wh');
    aggregator.add('c', 'temperature', 21, '°C');
    aggregator.add('c', 'power', 1, 'mW'); // milliwatt: not a power this package converts
    aggregator.add('c', 'power', Number.NaN, 'W');
    aggregator.failedOne();
    const result = aggregator.result();
    assert.deepEqual(result.power, {
      power: { value: 6300, unit: 'W', devices: 3 },
      pvPower: { value: 2000, unit: 'W', devices: 1 },
    });
    assert.deepEqual(result.energy, { totalEnergyProduced: { value: 1_500_020, unit: 'Wh', devices: 3 } });
    assert.equal(result.devices, 2);
    assert.equal(result.ok, 1);
    assert.equal(result.failed, 1);
    assert.equal(result.soc, undefined);
    assert.equal(powerUnit('kW'), 'kW');
    assert.equal(powerUnit('mW'), undefined);
    assert.equal(powerUnit('Wh'), undefined);
    assert.equal(energyFactor('kwh'), 1000);
    assert.equal(energyFactor('mWh'), undefined);
  });

  it('SOC: weighted by capacity when every capacity is known, else the plain mean (and it says which)', () => {
    const caps = new Map([
      ['big', 1_000_000],
      ['small', 20_000],
    ]);
    const weighted = new FleetAggregator((d) => caps.get(d));
    weighted.add('big', 'soc', 60, '%');
    weighted.add('small', 'soc', 10, '%');
    const ws = weighted.result().soc!;
    assert.equal(ws.weighting, 'capacity');
    assert.ok(Math.abs(ws.value - (60 * 1e6 + 10 * 2e4) / 1.02e6) < 1e-9);
    assert.equal(ws.capacityWh, 1_020_000);
    const mixed = new FleetAggregator((d) => caps.get(d));
    mixed.add('big', 'soc', 60, '%');
    mixed.add('unknown', 'soc', 10, '%');
    assert.deepEqual(mixed.result().soc, { value: 35, unit: '%', devices: 2, weighting: 'mean' });
  });
});
