/**
 * The delivery check: the pure formulas and verdicts (src/protocol/delivery.ts),
 * and the runtime's check (src/runtime/delivery-check.ts) against the simulator with a frozen
 * clock, driven by a @sinonjs/fake-timers clock advanced in step with the simulator's.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import FakeTimers from '@sinonjs/fake-timers';
import { EmsClient } from '../../src/client';
import type { Asked } from '../../src/protocol/delivery';
import { MINUTE_MS } from '../../src/protocol/time';
import { ReadCoalescer } from '../../src/runtime/coalescer';
import { DeliveryCheck, componentsOf, readingOf, type CheckClock } from '../../src/runtime/delivery-check';

const kW = (value: number) => ({ value, unit: 'kW' as const });
const setpoint = (value: number, deadbandW?: number): Asked => ({
  kind: 'setpoint',
  value: kW(value),
  ...(deadbandW ? { deadbandW } : {}),
});

describe('delivery: formulas and verdicts (pure)', () => {
  it('componentsOf: one asked item per component of a command; a cancel ends the grid target', () => {
    const components = componentsOf({
      site: 's',
      kind: 'combined',
      energyStorageSetting: kW(5),
      productionCurtailment: kW(300),
      maximizeGridImport: false,
      validUntil: 1,
    });
    assert.deepEqual(
      components.asked.map((a) => [a.component, a.asked.kind]),
      [
        ['energyStorage', 'setpoint'],
        ['curtailment', 'max'],
        ['maximizeGridImport', 'flag'],
      ],
    );
    const gridComponents = componentsOf({
      site: 's',
      kind: 'grid-target',
      gridTarget: { setpoint: kW(3), deadband: kW(1) },
      validUntil: 1,
    });
    assert.deepEqual(gridComponents.asked[0].asked, { kind: 'setpoint', value: kW(3), deadbandW: 1000 });
    assert.deepEqual(componentsOf({ site: 's', kind: 'cancel-grid-target' }), { asked: [], ends: ['gridTarget'] });
  });

  it("readingOf: counters in Wh (kWh, MWh converted), power in W, the instant from the counters' timestamps", () => {
    const reading = readingOf(
      {
        reference: 'd',
        measurements: [
          { timestamp: 5, property: 'totalEnergyProduced', value: 2, unit: 'kWh' },
          { timestamp: 7, property: 'totalEnergyConsumed', value: 300, unit: 'Wh' },
          { timestamp: 9, property: 'power', value: 1.5, unit: 'kW' },
        ],
      },
      100,
    );
    assert.deepEqual(reading, { at: 7, produced: 2000, consumed: 300, power: 1500 });
    assert.deepEqual(
      readingOf({ reference: 'd', measurements: [{ timestamp: 3, property: 'power', value: 1, unit: 'W' }] }, 100),
      { at: 3, power: 1 },
    );
    assert.deepEqual(
      readingOf(
        { reference: 'd', measurements: [{ timestamp: 3, property: 'totalEnergyProduced', value: 1, unit: 'J' }] },
        100,
      ),
      { at: 100 },
      'an unknown unit is not used',
    );
  });
});

describe('delivery check: a device without energy counters', () => {
  it('falls back to its power property (source "power"), remembering what the device offers', async () => {
    const asked: string[] = [];
    let now = 1_700_000_000_000;
    const server = http.createServer((req, res) => {
      const props = new URL(req.url!, 'http://x').searchParams.get('properties') ?? '';
      asked.push(props);
      if (props.includes('totalEnergy')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"unknown property"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          reference: 'dvc_x',
          measurements: [{ timestamp: now, property: 'power', value: now % 2 ? 4000 : 6000, unit: 'W' }],
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new EmsClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, retries: 0 });
    const reads = new ReadCoalescer(client, 0);
    const clock = FakeTimers.createClock(now);
    const cc: CheckClock = {
      now: () => clock.now,
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
      clearTimeout: (t) => clock.clearTimeout(t as FakeTimers.TimerId),
    };
    try {
      const deliveryCheck = new DeliveryCheck(
        {
          site: 'ste_x',
          component: 'energyStorage',
          asked: setpoint(5),
          from: clock.now,
          until: clock.now + 15 * MINUTE_MS,
          devices: { battery: 'dvc_x' },
        },
        { reads },
        { clock: cc },
      );
      await deliveryCheck.started;
      now += 15 * MINUTE_MS + 1;
      await clock.tickAsync(15 * MINUTE_MS);
      const report = await deliveryCheck.done;
      assert.equal(report.source, 'power');
      assert.equal(report.followed, 'yes');
      assert.equal(report.measured!.value, 5, 'the mean of 6 kW and 4 kW');
      assert.match(report.reason!, /from the device's power at the window's ends/);
      assert.deepEqual(
        asked,
        ['totalEnergyProduced,totalEnergyConsumed,power', 'totalEnergyProduced,totalEnergyConsumed', 'power', 'power'],
        'the end reading asks for power alone',
      );
    } finally {
      client.close();
      await new Promise((r) => server.close(r));
    }
  });
});
