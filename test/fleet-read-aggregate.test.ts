/**
 * Fleet read: the aggregate (protocol/aggregate.ts: sums of power and energy per
 * property in W and Wh whatever the units, the SOC mean weighted by capacity or plain) and the
 * bounded fan-out of runtime/fleet-read.ts (at most so many reads in flight, every device ends).
 */
import assert from 'node:assert/strict';
import { FleetAggregator, energyFactor, powerUnit } from '../src/protocol/aggregate';
import { batteryCapacities, readFleet } from '../src/runtime/fleet-read';
import type { ReadCoalescer } from '../src/runtime/coalescer';

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

  it('capacities: GET /sites once per client; a failure gives none (the plain mean)', async () => {
    let calls = 0;
    const ok = {
      listSites: async () => {
        calls++;
        return [
          {
            siteReference: 's',
            name: 's',
            batteryCapacity: 5000,
            devices: [
              { deviceReference: 'b', kind: 'battery' },
              { deviceReference: 'p', kind: 'pv' },
            ],
          },
        ];
      },
    };
    const capacities = await batteryCapacities(ok);
    assert.deepEqual([...capacities], [['b', 5000]]);
    await batteryCapacities(ok);
    assert.equal(calls, 1);
    const bad = {
      listSites: async () => {
        throw new Error('HTTP 500');
      },
    };
    assert.equal((await batteryCapacities(bad)).size, 0);
  });
});

describe('fleet read: bounded fan-out', () => {
  it('never more than the bound in flight; every device ends with its answer or its error, in order', async () => {
    let inFlight = 0;
    let most = 0;
    const reads = {
      read: (req: { device: string }) => {
        inFlight++;
        most = Math.max(most, inFlight);
        return new Promise((resolve, reject) =>
          setImmediate(() => {
            inFlight--;
            if (req.device.startsWith('bad')) reject(new Error(`no ${req.device}`));
            else resolve({ reference: req.device, measurements: {} });
          }),
        );
      },
    } as unknown as ReadCoalescer;
    const devices = Array.from({ length: 100 }, (_, i) => (i % 10 === 3 ? `bad${i}` : `d${i}`));
    const out = await readFleet(reads, { concurrency: 2 }, devices, 'map', ['soc'], { inFlight: 7 });
    assert.equal(most, 7);
    assert.equal(out.failed, 10);
    devices.forEach((d, i) => {
      if (d.startsWith('bad')) assert.equal((out.errors[i] as Error).message, `no ${d}`);
      else assert.equal((out.answers[i] as { reference: string }).reference, d);
    });
    // The default bound: 4 x the client's concurrency, at least 16.
    most = 0;
    await readFleet(reads, { concurrency: 6 }, devices, 'map', ['soc']);
    assert.equal(most, 24);
  });
});
