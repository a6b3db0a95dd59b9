/**
 * Fleet read in ems-device-read: a list of device references read into ONE message
 * (payload device -> values, errors per failed device, the aggregate), one request per device,
 * a partial failure sent AND reported to Catch, refusals before anything is sent, a polled list.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { SERVICE } from '../../../src/protocol/limits';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { callsOf, cfg, flow, loadFlow, logged, useRuntime, useSimulator } from '../../helpers/red';

const [COM, HOME] = DEFAULT_SITES;
const ALL = DEFAULT_SITES.flatMap((s) => [s.battery.deviceReference, s.pv.deviceReference, s.meter.deviceReference]);
const BATTERIES = DEFAULT_SITES.map((s) => s.battery.deviceReference);
const UNKNOWN = ['dvc_nosuchdevice1', 'dvc_nosuchdevice2'];
const T0 = Date.UTC(2026, 5, 21, 12, 0, 0); // midsummer noon UTC: the PV produces
const MAP = 'GET /devices/:ref/measurements/map';

const read = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-device-read',
  device: COM.battery.deviceReference,
  deviceType: 'str',
  mode: 'map',
  properties: 'power,totalEnergyProduced',
  propertiesType: 'str',
  ...extra,
});

describe('fleet read: ems-device-read with a list of devices', () => {
  // Frozen clock: the simulator's values are those the node read.
  const sim = useSimulator({ frozen: true, startTime: T0 });
  useRuntime();
  const now = (ref: string, prop: string) => sim.s.sim.measure(ref, prop).value;
  /** Requests of `route` per device path since `from` entries of the log. */
  const perDevice = (route: string, from: number) => {
    const counts: Record<string, number> = {};
    for (const e of logged(sim.s, route).slice(from)) {
      const ref = e.path.split('/')[2];
      counts[ref] = (counts[ref] ?? 0) + 1;
    }
    return counts;
  };

  it('msg.deviceReference an array: one message, payload per device, errors for the unknown ones, Catch gets one error listing them', async () => {
    const loaded = await loadFlow(flow(read(), cfg(sim.s.url)));
    const before = logged(sim.s, MAP).length;
    const list = [...ALL.slice(0, 3), UNKNOWN[0], ...ALL.slice(3), UNKNOWN[1]];
    loaded.send({ deviceReference: list, foo: 'kept' });
    const [m] = await loaded.out.count(1);
    const [c] = await loaded.caught.count(1);
    // One request per device, the unknown ones too; nothing else read (no SOC asked: no GET /sites).
    assert.deepEqual(perDevice(MAP, before), Object.fromEntries(list.map((r) => [r, 1])));
    assert.equal(logged(sim.s, /sites/).length, 0);
    // The payload: device -> {property: value}, in the order of the list; units likewise.
    assert.deepEqual(Object.keys(m.payload), ALL);
    for (const ref of ALL) {
      assert.deepEqual(m.payload[ref], {
        power: now(ref, 'power'),
        totalEnergyProduced: now(ref, 'totalEnergyProduced'),
      });
      assert.deepEqual(m.units[ref], { power: 'W', totalEnergyProduced: 'Wh' });
    }
    assert.deepEqual(Object.keys(m.errors), UNKNOWN);
    for (const ref of UNKNOWN) assert.match(m.errors[ref], new RegExp(`HTTP 404.*unknown device "${ref}"`));
    // The aggregate: sums over the devices that answered, checked against the simulator's own values.
    const sum = (prop: string) => ALL.reduce((s, r) => s + now(r, prop), 0);
    assert.equal(m.aggregate.devices, 8);
    assert.equal(m.aggregate.ok, 6);
    assert.equal(m.aggregate.failed, 2);
    assert.deepEqual(m.aggregate.power, { power: { value: sum('power'), unit: 'W', devices: 6 } });
    assert.equal(m.aggregate.energy.totalEnergyProduced.unit, 'Wh');
    assert.equal(m.aggregate.energy.totalEnergyProduced.devices, 6);
    assert.ok(Math.abs(m.aggregate.energy.totalEnergyProduced.value - sum('totalEnergyProduced')) < 1e-3);
    assert.equal(m.aggregate.soc, undefined);
    assert.deepEqual(m.deviceReference, list);
    assert.equal(m.foo, 'kept');
    // The Catch node: one error naming the field and the failed devices, for the same message.
    assert.match(
      c.error.message,
      /^FleetReadError: 2 of 8 devices failed \(msg\.deviceReference\): dvc_nosuchdevice1 \(HTTP 404 .*\), dvc_nosuchdevice2 \(HTTP 404/,
    );
    assert.equal(c.foo, 'kept');
    assert.equal(loaded.status.all.at(-1).fill, 'red');
    // A single reference afterwards is read as before.
    const one = await loaded.ask({ deviceReference: HOME.battery.deviceReference });
    assert.deepEqual(one.payload, {
      power: now(HOME.battery.deviceReference, 'power'),
      totalEnergyProduced: now(HOME.battery.deviceReference, 'totalEnergyProduced'),
    });
    assert.equal(one.errors, undefined);
    assert.equal(one.aggregate, undefined);
  });

  it('SOC of batteries: the mean weighted by capacity (GET /sites once), and a list read that passes the answers on', async () => {
    const loaded = await loadFlow(flow(read({ mode: 'list', properties: 'soc,power' }), cfg(sim.s.url)));
    const sites = logged(sim.s, 'GET /sites').length;
    const reply = await loaded.ask({ deviceReference: BATTERIES });
    const soc = BATTERIES.map((r) => now(r, 'soc'));
    const caps = DEFAULT_SITES.map((s) => s.battery.capacityWh);
    const weighted = (soc[0] * caps[0] + soc[1] * caps[1]) / (caps[0] + caps[1]);
    assert.ok(Math.abs(reply.aggregate.soc.value - weighted) < 1e-9, `${reply.aggregate.soc.value} vs ${weighted}`);
    assert.deepEqual(
      { ...reply.aggregate.soc, value: 0 },
      { value: 0, unit: '%', devices: 2, weighting: 'capacity', capacityWh: caps[0] + caps[1] },
    );
    assert.notEqual(soc[0], soc[1], 'the weighted mean differs from the plain one');
    assert.equal(reply.aggregate.power.power.value, now(BATTERIES[0], 'power') + now(BATTERIES[1], 'power'));
    assert.deepEqual(
      reply.payload[BATTERIES[1]].map((i: { property: string }) => i.property),
      ['soc', 'power'],
    );
    assert.equal(reply.payload[BATTERIES[1]][0].value, soc[1]);
    assert.equal(reply.units, undefined);
    assert.deepEqual(reply.errors, {});
    // The capacities are kept: a second read asks GET /sites no more.
    await loaded.ask({ deviceReference: BATTERIES });
    assert.equal(logged(sim.s, 'GET /sites').length, sites + 1);
    assert.equal(loaded.caught.msgs.length, 0);
  });

  it('single: payload device -> value, units device -> unit; the node configured with a JSON list', async () => {
    const loaded = await loadFlow(
      flow(
        read({ mode: 'single', properties: 'soc', device: JSON.stringify(BATTERIES), deviceType: 'json' }),
        cfg(sim.s.url),
      ),
    );
    const reply = await loaded.ask({});
    assert.deepEqual(reply.payload, Object.fromEntries(BATTERIES.map((r) => [r, now(r, 'soc')])));
    assert.deepEqual(reply.units, Object.fromEntries(BATTERIES.map((r) => [r, '%'])));
    assert.equal(reply.aggregate.soc.weighting, 'capacity');
    assert.match(loaded.status.all.at(-1).text, /^fleet of 2 devices · \d\d:\d\d$/);
    // A JSON string is one reference: a single read, as before.
    const jsonRead = await loadFlow(
      flow(
        read({ mode: 'single', properties: 'soc', device: JSON.stringify(BATTERIES[0]), deviceType: 'json' }),
        cfg(sim.s.url),
      ),
    );
    const one = await jsonRead.ask({});
    assert.equal(one.payload, now(BATTERIES[0], 'soc'));
    assert.equal(one.topic, `${BATTERIES[0]}/soc`);
  });

  it('every device failing: no message, one Catch-able error naming the devices', async () => {
    const loaded = await loadFlow(flow(read(), cfg(sim.s.url)));
    const failure = await loaded.fails({ deviceReference: UNKNOWN });
    assert.match(
      failure.error.message,
      /^FleetReadError: all 2 devices failed \(msg\.deviceReference\): dvc_nosuchdevice1 \(HTTP 404[^)]*\), dvc_nosuchdevice2 \(HTTP 404/,
    );
    assert.equal(failure.error.code, 'HTTP_404');
    assert.equal(loaded.out.msgs.length, 0);
  });

  it('refused before anything is sent: over the bound, an empty list, a non-string entry, split', async () => {
    const loaded = await loadFlow(flow(read(), cfg(sim.s.url)));
    const received = sim.s.sim.requestsReceived;
    const tooMany = Array.from({ length: SERVICE.maxFleetDevices + 1 }, (_, i) => `dvc_${i}`);
    for (const [msg, re] of [
      [
        { deviceReference: tooMany },
        new RegExp(
          `^ValidationError: msg\\.deviceReference must name at most ${SERVICE.maxFleetDevices} devices in one fleet read; got ${SERVICE.maxFleetDevices + 1}`,
        ),
      ],
      [
        { deviceReference: [] },
        /^ValidationError: msg\.deviceReference must name at least one device reference; got an empty list/,
      ],
      [
        { deviceReference: [ALL[0], 7] },
        /^ValidationError: msg\.deviceReference\[1\] must be a device reference string .*got 7/,
      ],
      [{ deviceReference: [ALL[0], 'bad ref'] }, /^ValidationError: msg\.deviceReference\[1\] must be a reference/],
    ] as Array<[Record<string, unknown>, RegExp]>) {
      const failure = await loaded.fails(msg);
      assert.match(failure.error.message, re);
    }
    const splitRead = await loadFlow(flow(read({ split: true }), cfg(sim.s.url)));
    const error = await splitRead.fails({ deviceReference: BATTERIES });
    assert.match(
      error.error.message,
      /^ValidationError: split applies to one device: a fleet read \(a list in msg\.deviceReference\) answers with one message/,
    );
    const badListRead = await loadFlow(flow(read({ device: `["${ALL[0]}", 5]`, deviceType: 'json' }), cfg(sim.s.url)));
    assert.match(
      (await badListRead.fails({})).error.message,
      /^ValidationError: device\[1\] must be a device reference string/,
    );
    assert.equal(sim.s.sim.requestsReceived, received, 'nothing was sent');
  });

  it('a duplicate is read once', async () => {
    const loaded = await loadFlow(flow(read(), cfg(sim.s.url)));
    const before = logged(sim.s, MAP).length;
    const reply = await loaded.ask({ deviceReference: [ALL[0], ALL[1], ALL[0]] });
    assert.deepEqual(Object.keys(reply.payload), [ALL[0], ALL[1]]);
    assert.deepEqual(reply.deviceReference, [ALL[0], ALL[1]]);
    assert.equal(logged(sim.s, MAP).length, before + 2);
  });

  describe('polled (fake timers)', () => {
    let clock: ReturnType<typeof FakeTimers.install> | undefined;
    afterEach(() => {
      clock?.uninstall();
      clock = undefined;
    });

    it('a polled list: one message per turn of the shared schedule, one request per device each', async () => {
      const before = logged(sim.s, MAP).length;
      clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
      const loaded = await loadFlow(
        flow(
          read({ device: JSON.stringify(ALL), deviceType: 'json', interval: 60 }),
          cfg(sim.s.url, { coalesceMs: 0 }),
        ),
      );
      // Turns of the fake clock, with real I/O (the simulator's answers) in between; bounded.
      const until = async (n: number) => {
        for (let i = 0; i < 2000 && loaded.out.msgs.length < n; i++) {
          await clock!.tickAsync(10);
          await new Promise((r) => setImmediate(r));
        }
      };
      await until(1);
      assert.equal(loaded.out.msgs.length, 1, 'the first poll');
      assert.deepEqual(perDevice(MAP, before), Object.fromEntries(ALL.map((r) => [r, 1])));
      await clock.tickAsync(30_000);
      assert.equal(loaded.out.msgs.length, 1, 'nothing before the interval');
      await clock.tickAsync(29_000);
      await until(2);
      assert.equal(loaded.out.msgs.length, 2, 'the second poll');
      assert.deepEqual(perDevice(MAP, before), Object.fromEntries(ALL.map((r) => [r, 2])));
      for (const m of loaded.out.msgs) assert.deepEqual(Object.keys(m.payload), ALL);
      assert.equal(loaded.caught.msgs.length, 0);
    });

    it('a polled list with an unknown device: every poll sends the message; the error is logged once, not every poll', async () => {
      clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
      const list = [...BATTERIES, UNKNOWN[0]];
      const loaded = await loadFlow(
        flow(
          read({ device: JSON.stringify(list), deviceType: 'json', interval: 10 }),
          cfg(sim.s.url, { coalesceMs: 0 }),
        ),
      );
      for (let i = 0; i < 4000 && loaded.out.msgs.length < 3; i++) {
        await clock.tickAsync(10);
        await new Promise((r) => setImmediate(r));
      }
      assert.equal(loaded.out.msgs.length, 3, 'three polls, three messages');
      for (const m of loaded.out.msgs) {
        assert.deepEqual(Object.keys(m.payload), BATTERIES);
        assert.deepEqual(Object.keys(m.errors), [UNKNOWN[0]]);
      }
      const errors = callsOf('error', 'n');
      assert.equal(errors.length, 1, 'the same error is logged once a minute');
      assert.match(String(errors[0][0]), /1 of 3 devices failed \(device\): dvc_nosuchdevice1 \(HTTP 404/);
      assert.equal(loaded.caught.msgs.length, 1);
    });
  });
});
