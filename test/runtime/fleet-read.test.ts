/**
 * The runtime room's edges (src/runtime), part 1: fleet reads' errors and battery capacities;
 * the schedule player closed, failing, or with callbacks that throw. Reads and submits are
 * fakes that record what they were asked; time is a fake clock.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { apiError, type EmsClient } from '../../src/client';
import type { ReadRequest } from '../../src/protocol/types';
import type { ReadCoalescer } from '../../src/runtime/coalescer';
import {
  CAPACITY_RETRY_MS,
  CAPACITY_TTL_MS,
  FleetReadError,
  batteryCapacities,
  readFleet,
  reasonOf,
} from '../../src/runtime/fleet-read';
import { useCrashWatch } from '../helpers/faults';

describe('runtime coverage: fleet reads, their errors and battery capacities', () => {
  const crashes = useCrashWatch();
  afterEach(() => assert.deepEqual(crashes.events, []));

  it("reasonOf: the status and the service's message, else the message or code; other errors by their message or text", () => {
    const req = { method: 'GET', path: '/devices/d/measurement' };
    assert.equal(
      reasonOf(
        apiError({ code: 'HTTP_404', status: 404, serviceMessage: 'unknown device', message: 'x', request: req }),
      ),
      'HTTP 404 unknown device',
    );
    assert.equal(reasonOf(apiError({ code: 'HTTP_502', status: 502, message: 'x', request: req })), 'HTTP 502');
    assert.equal(
      reasonOf(
        apiError({ code: 'ECONNREFUSED', message: 'GET … connection to h:1 failed (ECONNREFUSED)', request: req }),
      ),
      'GET … connection to h:1 failed (ECONNREFUSED)',
    );
    assert.equal(reasonOf(apiError({ code: 'EMS_ABORTED', message: '', request: req })), 'EMS_ABORTED');
    assert.equal(reasonOf(new RangeError('bad')), 'bad');
    assert.equal(reasonOf('plain text'), 'plain text');
  });

  it('a fleet read where every device failed differently: EMS_FLEET_FAILED without a status, five devices named and "N more"', async () => {
    const devices = Array.from({ length: 7 }, (_, i) => `dvc_${i}`);
    const req = { method: 'GET', path: '-' };
    const errorFor = (d: string) =>
      d === 'dvc_0'
        ? apiError({ code: 'ECONNRESET', message: 'reset', request: req })
        : apiError({ code: 'HTTP_404', status: 404, serviceMessage: `unknown ${d}`, message: 'x', request: req });
    const reads = {
      read: async (r: ReadRequest) => {
        throw errorFor(r.device);
      },
    } as unknown as ReadCoalescer;
    const out = await readFleet(reads, { concurrency: 1 }, devices, 'single', ['soc'], { inFlight: 2 });
    assert.equal(out.failed, 7);
    const failed = Object.fromEntries(devices.map((d, i) => [d, (out.errors[i] as Error).message]));
    const reasons = Object.fromEntries(devices.map((d, i) => [d, reasonOf(out.errors[i])]));
    const error = new FleetReadError('msg.deviceReference', 7, failed, reasons, out.errors);
    assert.equal(error.code, 'EMS_FLEET_FAILED');
    assert.equal(error.status, undefined);
    assert.equal(
      error.message,
      'all 7 devices failed (msg.deviceReference): dvc_0 (reset), dvc_1 (HTTP 404 unknown dvc_1), dvc_2 (HTTP 404 unknown dvc_2), dvc_3 (HTTP 404 unknown dvc_3), dvc_4 (HTTP 404 unknown dvc_4), and 2 more',
    );
    assert.equal((error as { field?: string }).field, 'msg.deviceReference');
    const same = new FleetReadError('f', 2, { a: 'x', b: 'x' }, { a: 'HTTP 503', b: 'HTTP 503' }, [
      apiError({ code: 'HTTP_503', status: 503, message: 'x', request: req }),
      apiError({ code: 'HTTP_503', status: 503, message: 'x', request: req }),
    ]);
    assert.deepEqual(
      [same.code, same.status],
      ['HTTP_503', 503],
      'all the same: the code and status a poller backs off on',
    );
    const partial = new FleetReadError('f', 3, { a: 'x' }, { a: 'HTTP 503' }, [
      apiError({ code: 'HTTP_503', status: 503, message: 'x', request: req }),
    ]);
    assert.deepEqual(
      [partial.code, partial.status, partial.message],
      ['EMS_FLEET_PARTIAL', undefined, '1 of 3 devices failed (f): a (HTTP 503)'],
    );
  });

  it('an aborted fleet read ends every device with the abort; no device is left without an outcome', async () => {
    const ctl = new AbortController();
    let count = 0;
    const reads = {
      read: (r: ReadRequest, o: { signal?: AbortSignal }) => {
        count++;
        if (count === 2) ctl.abort(new Error('node closed'));
        return o.signal?.aborted ? Promise.reject(o.signal.reason) : Promise.resolve({ value: r.device });
      },
    } as unknown as ReadCoalescer;
    const out = await readFleet(reads, { concurrency: 6 }, ['a', 'b', 'c', 'd'], 'single', ['soc'], {
      inFlight: 1,
      signal: ctl.signal,
    });
    assert.deepEqual(Array.from(out.answers), [{ value: 'a' }, undefined, undefined, undefined]);
    assert.equal(out.failed, 3);
    assert.deepEqual(
      out.errors.slice(1).map((e) => (e as Error).message),
      ['node closed', 'node closed', 'node closed'],
    );
  });

  it('battery capacities: one GET /sites for concurrent callers; bad capacities skipped; kept an hour; a failure (even a throw) gives none and is asked again after 5 min', async () => {
    const clock = FakeTimers.install({ now: Date.UTC(2026, 0, 1), toFake: ['Date'] });
    try {
      let calls = 0;
      let answer: () => Promise<unknown> = async () => [
        {
          siteReference: 's1',
          name: 'a',
          batteryCapacity: 5000,
          devices: [{ deviceReference: 'b1', kind: 'battery' }, { deviceReference: 'p1', kind: 'pv' }, null],
        },
        {
          siteReference: 's2',
          name: 'b',
          batteryCapacity: Number.POSITIVE_INFINITY,
          devices: [{ deviceReference: 'b2', kind: 'battery' }],
        },
        { siteReference: 's3', name: 'c', batteryCapacity: 0, devices: [{ deviceReference: 'b3', kind: 'battery' }] },
        { siteReference: 's4', name: 'd', batteryCapacity: 7000, devices: 'b4' },
        { siteReference: 's5', name: 'e', devices: [{ deviceReference: 'b5', kind: 'battery' }] },
      ];
      const client = {
        listSites: () => {
          calls++;
          return answer();
        },
      } as unknown as EmsClient;
      const [m1, m2] = await Promise.all([batteryCapacities(client), batteryCapacities(client)]);
      assert.equal(m1, m2, 'the same pending request');
      assert.deepEqual([...m1], [['b1', 5000]]);
      assert.equal(calls, 1);
      clock.tick(CAPACITY_TTL_MS - 1);
      await batteryCapacities(client);
      assert.equal(calls, 1, 'kept for an hour');
      clock.tick(1);
      answer = () => {
        throw new Error('listSites threw');
      };
      assert.deepEqual([...(await batteryCapacities(client))], [], 'never rejects');
      assert.equal(calls, 2);
      clock.tick(CAPACITY_RETRY_MS - 1);
      await batteryCapacities(client);
      assert.equal(calls, 2, 'a failure is kept 5 min');
      clock.tick(1);
      answer = async () => [
        {
          siteReference: 's1',
          name: 'a',
          batteryCapacity: 9000,
          devices: [{ deviceReference: 'b1', kind: 'battery' }],
        },
      ];
      assert.deepEqual([...(await batteryCapacities(client))], [['b1', 9000]]);
      assert.equal(calls, 3);
    } finally {
      clock.uninstall();
    }
  });
});

/**
 * Fleet read: the aggregate (protocol/aggregate.ts: sums of power and energy per
 * property in W and Wh whatever the units, the SOC mean weighted by capacity or plain) and the
 * bounded fan-out of runtime/fleet-read.ts (at most so many reads in flight, every device ends).
 */
describe('fleet read: aggregate', () => {
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
