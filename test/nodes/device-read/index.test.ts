import assert from 'node:assert/strict';
import { HOUR_MS } from '../../../src/protocol/time';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { cfg, flow, loadFlow, logged, useRuntime, useSimulator } from '../../helpers/red';

const COM = DEFAULT_SITES[0];
const HOME = DEFAULT_SITES[1];
const BAT = COM.battery.deviceReference;
const PV = COM.pv.deviceReference;
const T0 = Date.UTC(2026, 5, 21, 12, 0, 0); // midsummer noon UTC: the PV produces

const read = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-device-read',
  device: BAT,
  deviceType: 'str',
  properties: 'soc',
  propertiesType: 'str',
  ...extra,
});

describe('nodes: ems-device-read', () => {
  // Frozen clock: values only change when a test advances it.
  const sim = useSimulator({ frozen: true, startTime: T0 });
  useRuntime();
  const now = (ref: string, prop: string) => sim.s.sim.measure(ref, prop);

  it('single: payload is the number, msg.measurement the whole measurement, topic <ref>/<prop>', async () => {
    const deployed = await loadFlow(flow(read({ mode: 'single' }), cfg(sim.s.url)));
    const reply = await deployed.ask({ foo: 'kept', topic: 'replaced' });
    const expected = now(BAT, 'soc');
    assert.equal(reply.payload, expected.value);
    assert.equal(typeof reply.payload, 'number');
    assert.deepEqual(reply.measurement, expected);
    assert.deepEqual(Object.keys(reply.measurement).sort(), ['property', 'reference', 'timestamp', 'unit', 'value']);
    assert.equal(reply.unit, '%');
    assert.equal(reply.topic, `${BAT}/soc`);
    assert.equal(reply.deviceReference, BAT);
    assert.equal(reply.foo, 'kept');
    assert.match(deployed.status.all.at(-1).text, /^soc \d+(\.\d+)? % · \d\d:\d\d$/);
    assert.equal(deployed.status.all.at(-1).fill, 'green');
    assert.equal(
      logged(sim.s, 'GET /devices/:ref/measurement').at(-1)!.path,
      `/devices/${BAT}/measurement?property=soc`,
    );
  });

  it('map: payload {prop: value}, msg.units {prop: unit}, on the map endpoint', async () => {
    const deployed = await loadFlow(flow(read({ mode: 'map', properties: 'soc,totalEnergyConsumed' }), cfg(sim.s.url)));
    const before = logged(sim.s, 'GET /devices/:ref/measurements/map').length;
    const reply = await deployed.ask({ foo: 1 });
    assert.deepEqual(reply.payload, {
      soc: now(BAT, 'soc').value,
      totalEnergyConsumed: now(BAT, 'totalEnergyConsumed').value,
    });
    assert.deepEqual(reply.units, { soc: '%', totalEnergyConsumed: 'Wh' });
    assert.equal(reply.deviceReference, BAT);
    assert.equal(reply.foo, 1);
    assert.equal(logged(sim.s, 'GET /devices/:ref/measurements/map').length, before + 1);
  });

  it('list: payload [{timestamp, property, value, unit}] in the order asked', async () => {
    const deployed = await loadFlow(
      flow(read({ mode: 'list', properties: 'totalEnergyProduced,soc' }), cfg(sim.s.url)),
    );
    const reply = await deployed.ask({ foo: 2 });
    assert.deepEqual(reply.payload, [
      {
        timestamp: sim.s.sim.clock.now(),
        property: 'totalEnergyProduced',
        value: now(BAT, 'totalEnergyProduced').value,
        unit: 'Wh',
      },
      { timestamp: sim.s.sim.clock.now(), property: 'soc', value: now(BAT, 'soc').value, unit: '%' },
    ]);
    assert.equal(reply.deviceReference, BAT);
    assert.equal(reply.foo, 2);
  });

  it('devices: payload is the normalised device list', async () => {
    const deployed = await loadFlow(flow(read({ mode: 'devices', device: '', properties: '' }), cfg(sim.s.url)));
    const reply = await deployed.ask({ foo: 3 });
    assert.equal(reply.payload.length, 6);
    const bat = reply.payload.find((d: { deviceReference: string }) => d.deviceReference === BAT);
    assert.equal(bat.kind, 'battery');
    assert.equal(bat.name, COM.battery.name);
    assert.deepEqual(bat.properties, [
      { name: 'soc', unit: '%' },
      { name: 'power', unit: 'W' },
      { name: 'totalEnergyConsumed', unit: 'Wh' },
      { name: 'totalEnergyProduced', unit: 'Wh' },
    ]);
    for (const d of reply.payload)
      assert.deepEqual(
        Object.keys(d).filter((k) => !['deviceReference', 'name', 'kind', 'properties', 'siteReference'].includes(k)),
        [],
      );
    assert.equal(reply.foo, 3);
    assert.match(deployed.status.all.at(-1).text, /^6 devices · /);
  });

  for (const mode of ['map', 'list'] as const) {
    it(`split (${mode}): one message per property with topic, payload value, msg.measurement`, async () => {
      const deployed = await loadFlow(
        flow(read({ mode, properties: 'soc,power,totalEnergyConsumed', split: true }), cfg(sim.s.url)),
      );
      deployed.send({ foo: mode });
      const msgs = await deployed.out.count(3);
      assert.deepEqual(
        msgs.map((m) => m.topic),
        [`${BAT}/soc`, `${BAT}/power`, `${BAT}/totalEnergyConsumed`],
      );
      for (const m of msgs) {
        const prop = m.topic.split('/')[1];
        const expected = now(BAT, prop);
        assert.equal(m.payload, expected.value);
        assert.equal(m.unit, expected.unit);
        assert.equal(m.measurement.property, prop);
        assert.equal(m.measurement.value, expected.value);
        assert.equal(m.measurement.unit, expected.unit);
        assert.equal(m.measurement.reference, BAT);
        assert.equal(typeof m.measurement.timestamp, 'number');
        assert.equal(m.deviceReference, BAT);
        assert.equal(m.foo, mode);
      }
      // Exactly the split set: a later message's output is the next one.
      const next = await deployed.ask({ properties: 'soc' });
      assert.equal(next.topic, `${BAT}/soc`);
      assert.equal(deployed.out.msgs.length, 4);
      assert.equal(deployed.caught.msgs.length, 0);
    });
  }

  it('overrides: msg.deviceReference, msg.property, msg.properties (array and csv)', async () => {
    const deployed = await loadFlow(flow(read({ mode: 'map' }), cfg(sim.s.url)));
    const byDevice = await deployed.ask({ deviceReference: HOME.battery.deviceReference });
    assert.equal(byDevice.deviceReference, HOME.battery.deviceReference);
    assert.deepEqual(byDevice.payload, { soc: now(HOME.battery.deviceReference, 'soc').value });
    assert.equal(
      logged(sim.s, 'GET /devices/:ref/measurements/map').at(-1)!.path,
      `/devices/${HOME.battery.deviceReference}/measurements/map?properties=soc`,
    );

    const byProperty = await deployed.ask({ property: 'power' });
    assert.deepEqual(Object.keys(byProperty.payload), ['power']);
    assert.deepEqual(byProperty.units, { power: 'W' });

    const byProperties = await deployed.ask({ properties: ['totalEnergyProduced', 'soc'] });
    assert.deepEqual(Object.keys(byProperties.payload), ['totalEnergyProduced', 'soc']);

    // msg.properties wins over msg.property.
    const both = await deployed.ask({
      properties: ' power , totalEnergyConsumed ',
      deviceReference: COM.meter.deviceReference,
      property: 'soc',
    });
    assert.deepEqual(both.units, { power: 'W', totalEnergyConsumed: 'Wh' });
    assert.equal(both.deviceReference, COM.meter.deviceReference);
    assert.equal(deployed.caught.msgs.length, 0);
  });

  it('overrides in mode single: msg.property picks the property, msg.deviceReference the device', async () => {
    const deployed = await loadFlow(flow(read({ mode: 'single' }), cfg(sim.s.url)));
    const reply = await deployed.ask({ property: 'power', deviceReference: PV });
    assert.equal(reply.topic, `${PV}/power`);
    assert.equal(reply.payload, now(PV, 'power').value);
    assert.ok(reply.payload > 0, 'PV produces at noon in June');
    assert.equal(reply.unit, 'W');
    const mapReply = await deployed.ask({ properties: ['totalEnergyProduced'] });
    assert.equal(mapReply.topic, `${BAT}/totalEnergyProduced`);
  });

  describe('device as TypedInput', () => {
    const cases: Array<[string, string, (n: any) => void, Record<string, unknown>]> = [
      ['str', HOME.pv.deviceReference, () => undefined, {}],
      ['msg', 'target.device', () => undefined, { target: { device: HOME.pv.deviceReference } }],
      ['flow', 'dev', (n) => n.context().flow.set('dev', HOME.pv.deviceReference), {}],
      ['global', 'dev', (n) => n.context().global.set('dev', HOME.pv.deviceReference), {}],
      [
        'env',
        'EMS_TEST_DEVICE',
        () => {
          process.env.EMS_TEST_DEVICE = HOME.pv.deviceReference;
        },
        {},
      ],
    ];
    after(() => {
      delete process.env.EMS_TEST_DEVICE;
    });
    for (const [type, value, prepare, msg] of cases) {
      it(`reads the device from ${type}`, async () => {
        const deployed = await loadFlow(
          flow(read({ mode: 'single', device: value, deviceType: type, properties: 'power' }), cfg(sim.s.url)),
        );
        prepare(deployed.node);
        const reply = await deployed.ask(msg);
        assert.equal(reply.deviceReference, HOME.pv.deviceReference);
        assert.equal(reply.topic, `${HOME.pv.deviceReference}/power`);
        assert.equal(reply.payload, now(HOME.pv.deviceReference, 'power').value);
      });
    }
  });

  it('properties as TypedInput json (an array) and msg', async () => {
    const deployed = await loadFlow(
      flow(read({ mode: 'map', properties: '["soc","power"]', propertiesType: 'json' }), cfg(sim.s.url)),
    );
    assert.deepEqual(Object.keys((await deployed.ask()).payload), ['soc', 'power']);
    const fromMsg = await loadFlow(
      flow(read({ mode: 'map', properties: 'props', propertiesType: 'msg' }), cfg(sim.s.url)),
    );
    assert.deepEqual(Object.keys((await fromMsg.ask({ props: 'totalEnergyConsumed' })).payload), [
      'totalEnergyConsumed',
    ]);
  });

  it('polls every `interval` seconds without input, each poll one message', async () => {
    const deployed = await loadFlow(flow(read({ mode: 'single', interval: 0.05 }), cfg(sim.s.url)));
    const msgs = await deployed.out.count(3);
    for (const m of msgs) {
      assert.equal(m.payload, now(BAT, 'soc').value);
      assert.equal(m.topic, `${BAT}/soc`);
      assert.equal(m.deviceReference, BAT);
    }
    assert.equal(deployed.caught.msgs.length, 0);
  });

  // The same poll error is logged once a minute, not on every poll.
  it('a failing poll gives a Catch-able error (there is no input message) and polling goes on', async () => {
    const route = 'GET /devices/:ref/measurements/map';
    const before = logged(sim.s, route).length;
    const deployed = await loadFlow(flow(read({ device: 'dvc_nosuchdevice', interval: 0.05 }), cfg(sim.s.url)));
    const [a] = await deployed.caught.count(1);
    assert.match(a.error.message, /HTTP 404 unknown device "dvc_nosuchdevice"/);
    assert.equal(a.error.source.id, 'n');
    // Three more polls (a 404 is the node's own fault: no backoff, one red status each) ...
    const red = (s: { fill?: string; text?: string }) => s.fill === 'red' && /^HTTP 404/.test(s.text ?? '');
    await deployed.status.count(red, 3, deployed.status.all.length);
    assert.ok(logged(sim.s, route).length >= before + 4, 'polling goes on');
    // ... and the same error is not logged again within the minute.
    assert.equal(deployed.caught.msgs.length, 1);
    assert.equal(deployed.out.msgs.length, 0);
    assert.match(deployed.status.all.at(-1).text, /^HTTP 404/);
  });

  it('onlyChanges: polls that read the same values send nothing; a change sends one message', async () => {
    const deployed = await loadFlow(
      flow(
        read({ device: PV, mode: 'map', properties: 'power,totalEnergyProduced', interval: 0.05, onlyChanges: true }),
        cfg(sim.s.url),
      ),
    );
    const [first] = await deployed.out.count(1);
    assert.deepEqual(first.payload, {
      power: now(PV, 'power').value,
      totalEnergyProduced: now(PV, 'totalEnergyProduced').value,
    });
    // Three more polls (each shows a green status) with the clock frozen: no message.
    const green = (s: { fill?: string }) => s.fill === 'green';
    await deployed.status.count(green, 3, deployed.status.all.length);
    assert.equal(deployed.out.msgs.length, 1);
    assert.ok(logged(sim.s, 'GET /devices/:ref/measurements/map').length >= 4);
    sim.s.sim.clock.advance(HOUR_MS);
    const [, second] = await deployed.out.count(2);
    assert.ok(second.payload.totalEnergyProduced > first.payload.totalEnergyProduced, 'an hour of PV production');
    assert.deepEqual(second.payload, {
      power: now(PV, 'power').value,
      totalEnergyProduced: now(PV, 'totalEnergyProduced').value,
    });
    await deployed.status.count(green, 3, deployed.status.all.length);
    assert.equal(deployed.out.msgs.length, 2);
    assert.equal(deployed.caught.msgs.length, 0);
  });

  it('onlyChanges on input: an unchanged read completes the message without output', async () => {
    const deployed = await loadFlow(
      flow(read({ device: PV, properties: 'totalEnergyProduced', mode: 'single', onlyChanges: true }), cfg(sim.s.url)),
    );
    await deployed.ask();
    const statuses = deployed.status.all.length;
    deployed.send({ again: true });
    await deployed.status.count((s) => s.fill === 'green', 1, statuses);
    assert.equal(deployed.out.msgs.length, 1);
    sim.s.sim.clock.advance(HOUR_MS);
    const changed = await deployed.ask({ again: 2 });
    assert.equal(changed.again, 2);
    assert.equal(changed.payload, now(PV, 'totalEnergyProduced').value);
    assert.ok(changed.payload > deployed.out.msgs[0].payload);
  });
});
