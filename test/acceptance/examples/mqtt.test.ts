/**
 * Examples 3, 4 and 5, loaded as shipped, with Node-RED's own MQTT nodes on an in-process
 * aedes broker: Home Assistant discovery (announced when the shared broker node connects and
 * when Home Assistant comes online) and states, steering from a command topic (state in the
 * entity's unit), and the negative-price rule (from an inject and from MQTT). 04 and 05 steer
 * sites of their own; 03 only reads the default Home battery.
 */
import assert from 'node:assert/strict';
import { quarterHourValidUntil } from '../../../src/protocol/time';
import { BUILT_IN_SITES, DEFAULT_SITES, startSimulator, type SiteDefinition } from '../../../src/simulator/index';
import { nodeRedVersion } from '../../helpers/node-red-path';
import { builtInSite, loadExample, useBroker, withoutDeployAnnounce, type Published } from '../../helpers/examples';
import { discoveries, violations } from '../../helpers/ha-rules';
import { helper, useRuntime, useSimulator } from '../../helpers/red';

const HOME = DEFAULT_SITES[1];
const BAT = HOME.battery.deviceReference;
const BRIDGE = 'ems/node-red/availability';
const EX03 = '03 Publish to MQTT with Home Assistant discovery.json';
const EX04 = '04 Steer the battery from MQTT.json';
const isConfig = (p: Published) => p.topic.startsWith('homeassistant/');

describe(`examples: MQTT (03, 04, 05) on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(30_000);
  const sim = useSimulator({ frozen: true, sites: [...BUILT_IN_SITES] });
  const mqtt = useBroker();
  beforeEach(() => {
    mqtt.published.length = 0;
    sim.s.sim.reset();
  });
  useRuntime();
  /** validUntil of a quarter-hour signal sent between t0 and now (the quarter may turn meanwhile). */
  const quarterEnds = (t0: number) => [quarterHourValidUntil(t0), quarterHourValidUntil(Date.now())];

  it('03 announces the battery to Home Assistant when the broker node connects, and publishes its states', async () => {
    // Without the announce on deploy: the broker node's connect (the Status node) announces alone.
    const ex = await loadExample(EX03, sim.s.url, mqtt.port, withoutDeployAnnounce);
    const [birth] = await mqtt.await((p) => p.topic === BRIDGE);
    assert.deepEqual([birth.payload, birth.retain], ['online', true], "the broker node's birth: Node-RED is connected");
    const configs = await mqtt.await(isConfig, 4);
    ex.fire('every minute');
    const expected: Record<string, [string, string, string?]> = {
      soc: ['%', 'battery', 'measurement'],
      power: ['W', 'power', 'measurement'],
      totalEnergyConsumed: ['Wh', 'energy', 'total_increasing'],
      totalEnergyProduced: ['Wh', 'energy', 'total_increasing'],
    };
    const byProp = new Map<string, any>();
    for (const c of configs.slice(0, 4)) {
      const body = JSON.parse(c.payload);
      const prop = body.state_topic.split('/').pop();
      byProp.set(prop, body);
      const id = `ems_${BAT}_${prop}`;
      assert.equal(c.topic, `homeassistant/sensor/${id}/config`);
      assert.equal(c.retain, true, 'discovery messages are retained');
      assert.equal(body.unique_id, id);
      assert.equal(body.default_entity_id, `sensor.${id.toLowerCase()}`);
      assert.equal('object_id' in body, false, 'object_id is gone from Home Assistant');
      assert.equal(body.state_topic, `ems/${BAT}/${prop}`);
      assert.deepEqual([body.unit_of_measurement, body.device_class, body.state_class], expected[prop]);
      assert.equal(typeof body.name, 'string');
      assert.deepEqual(body.device, {
        identifiers: [`ems_${BAT}`],
        name: 'Home battery',
        manufacturer: 'EMS partner',
        model: HOME.battery.name,
      });
      assert.deepEqual(body.availability, [
        { topic: BRIDGE, payload_available: 'online', payload_not_available: 'offline' },
      ]);
    }
    assert.deepEqual([...byProp.keys()].sort(), Object.keys(expected).sort());
    assert.deepEqual(violations(discoveries(mqtt.published)), []);

    const states = await mqtt.await((p) => p.topic.startsWith(`ems/${BAT}/`), 4);
    for (const s of states.slice(0, 4)) {
      const prop = s.topic.split('/').pop()!;
      assert.equal(s.topic, byProp.get(prop).state_topic);
      assert.equal(Number(s.payload), sim.s.sim.measure(BAT, prop).value, prop);
      assert.equal(s.retain, true);
    }

    // Home Assistant's birth message (after its restart) announces again; another payload does not.
    const before = mqtt.published.filter(isConfig).length;
    await mqtt.publish('homeassistant/status', 'offline');
    await mqtt.publish('homeassistant/status', 'online');
    assert.equal((await mqtt.await(isConfig, before + 4)).length, before + 4);
  });

  it('03 with a reference Home Assistant\'s topic pattern does not take ("." and ":"): safe ids, a valid discovery', async () => {
    const odd = 'dvc.home:battery-1';
    const other = 'dvc.home.battery-1'; // differs from odd only where the pattern does not reach
    const site = (ref: string, key: string): SiteDefinition => ({
      ...HOME,
      siteReference: `ste_${key}`,
      battery: { ...HOME.battery, deviceReference: ref },
      pv: { ...HOME.pv, deviceReference: `dvc_pv_${key}` },
      meter: { ...HOME.meter, deviceReference: `dvc_meter_${key}` },
    });
    const simulator = await startSimulator({ port: 0, frozen: true, sites: [site(odd, 'odd'), site(other, 'other')] });
    try {
      const topics: string[] = [];
      for (const ref of [odd, other]) {
        mqtt.published.length = 0;
        await loadExample(EX03, simulator.url, mqtt.port, (nodes) =>
          withoutDeployAnnounce(JSON.parse(JSON.stringify(nodes).split(BAT).join(ref))),
        );
        const configs = await mqtt.await(isConfig, 4);
        const found = discoveries(configs);
        assert.deepEqual(violations(found), []);
        for (const d of found) {
          assert.match(d.topic, /^homeassistant\/sensor\/[a-zA-Z0-9_-]+\/config$/);
          assert.equal(
            d.payload.state_topic.startsWith(`ems/${ref}/`),
            true,
            'the state topic keeps the reference (MQTT takes it)',
          );
        }
        topics.push(...found.map((d) => d.topic));
        if (ref === odd) await helper.unload(); // the next load is a fresh runtime (the last one: afterEach)
      }
      assert.equal(new Set(topics).size, 8, `two references, four sensors each, eight topics: ${topics}`);
    } finally {
      await simulator.close();
    }
  });

  it('04 sets the ESS power of its own site from the command topic, valid to the quarter hour, and publishes the state in kW', async () => {
    const SITE = builtInSite('Home (example 04)').siteReference;
    const steering = () => sim.s.sim.steeringState(SITE).components;
    const subscribed = mqtt.subscribed(`ems/${SITE}/ess/set`);
    const ex = await loadExample(EX04, sim.s.url, mqtt.port);
    const [entity] = await mqtt.await((p) => p.topic === `homeassistant/number/ems_${SITE}_ess/config`);
    const body = JSON.parse(entity.payload);
    assert.equal(entity.retain, true);
    assert.equal(body.command_topic, `ems/${SITE}/ess/set`);
    assert.equal(body.state_topic, `ems/${SITE}/ess/state`);
    assert.deepEqual([body.min, body.max, body.unit_of_measurement], [-10, 10, 'kW']);
    assert.deepEqual([body.default_entity_id, 'object_id' in body], [`number.ems_${SITE.toLowerCase()}_ess`, false]);
    assert.deepEqual(body.device, {
      identifiers: [`ems_${SITE}`],
      name: 'Home (example 04)',
      manufacturer: 'EMS partner',
    });
    assert.deepEqual(body.availability, [
      { topic: BRIDGE, payload_available: 'online', payload_not_available: 'offline' },
    ]);
    assert.deepEqual(violations(discoveries(mqtt.published)), []);

    await subscribed;
    const t0 = Date.now();
    await mqtt.publish(`ems/${SITE}/ess/set`, '-5');
    const [state] = await mqtt.await((p) => p.topic === `ems/${SITE}/ess/state`);
    assert.equal(state.payload, '-5');
    assert.equal(state.retain, true);
    const ess = steering().energyStorageSetting!;
    assert.deepEqual([ess.value, ess.unit], [-5, 'kW']);
    assert.ok(quarterEnds(t0).includes(ess.validUntil), `validUntil ${new Date(ess.validUntil).toISOString()}`);
    assert.equal(
      sim.s.sim.steeringState(HOME.siteReference).components.energyStorageSetting,
      null,
      'the default Home is not touched',
    );

    // Beyond the node's 10 kW limit: refused before sending, reported on the error topic.
    await mqtt.publish(`ems/${SITE}/ess/set`, '25');
    const [refused] = await mqtt.await((p) => p.topic === `ems/${SITE}/ess/error`);
    assert.match(refused.payload, /maxEssPower = 10000 W/);
    assert.equal(refused.retain, false);
    await mqtt.publish(`ems/${SITE}/ess/set`, 'full power');
    const errors = await mqtt.await((p) => p.topic === `ems/${SITE}/ess/error`, 2);
    assert.match(errors[1].payload, /energyStorage/);
    assert.deepEqual(
      [steering().energyStorageSetting!.value, steering().energyStorageSetting!.unit],
      [-5, 'kW'],
      'unchanged',
    );
    assert.equal(mqtt.published.filter((p) => p.topic === `ems/${SITE}/ess/state`).length, 1);

    // "stop" ends renewing (off here): nothing is sent and no state is published; the next
    // number is published after it, so a state from "stop" would show up before it.
    const status = ex.status('Home battery (max 10 kW, to quarter end)');
    await mqtt.publish(`ems/${SITE}/ess/set`, 'stop');
    await status.wait((x) => x.text === 'stopped');
    assert.equal(steering().energyStorageSetting!.value, -5);
    await mqtt.publish(`ems/${SITE}/ess/set`, '2.5');
    const states = await mqtt.await((p) => p.topic === `ems/${SITE}/ess/state`, 2);
    assert.deepEqual(
      states.map((p) => p.payload),
      ['-5', '2.5'],
    );
    assert.equal(steering().energyStorageSetting!.value, 2.5);
  });

  it("04 with the node's ESS unit set to W: the state is still in kW, within the number's min/max", async () => {
    const SITE = builtInSite('Home (example 04)').siteReference;
    const subscribed = mqtt.subscribed(`ems/${SITE}/ess/set`);
    await loadExample(EX04, sim.s.url, mqtt.port, (nodes) =>
      nodes.map((n) => (n.type === 'ems-site-steer' ? { ...n, essUnit: 'W' } : n)),
    );
    const [entity] = await mqtt.await((p) => p.topic === `homeassistant/number/ems_${SITE}_ess/config`);
    const { min, max } = JSON.parse(entity.payload);
    await subscribed;
    await mqtt.publish(`ems/${SITE}/ess/set`, '-7500');
    const [state] = await mqtt.await((p) => p.topic === `ems/${SITE}/ess/state`);
    assert.deepEqual(sim.s.sim.steeringState(SITE).components.energyStorageSetting!.unit, 'W');
    assert.equal(state.payload, '-7.5');
    assert.ok(Number(state.payload) >= min && Number(state.payload) <= max, `${state.payload} within ${min} … ${max}`);
  });

  it('05 maximizes grid import on its own site on a negative price to the quarter hour, and stops on a positive one', async () => {
    const SITE = builtInSite('Home (example 05)').siteReference;
    const steering = () => sim.s.sim.steeringState(SITE).components;
    const subscribed = mqtt.subscribed('energy/price');
    const ex = await loadExample('05 Negative price - maximize grid import.json', sim.s.url, mqtt.port);
    const sent = ex.inbox('sent');
    const t0 = Date.now();
    ex.fire('price -0.05');
    const [on] = await sent.count(1);
    assert.equal(on.request.path, `/sites/${SITE}/steering`);
    let mgi = steering().maximizeGridImport!;
    assert.equal(mgi.value, true);
    assert.ok(quarterEnds(t0).includes(mgi.validUntil));
    assert.equal(steering().energyStorageSetting, null, 'only maximizeGridImport is sent');

    ex.fire('price 0.12');
    await sent.count(2);
    assert.equal(steering().maximizeGridImport!.value, false);

    await subscribed;
    await mqtt.publish('energy/price', '-0.2');
    await sent.count(3);
    mgi = steering().maximizeGridImport!;
    assert.equal(mgi.value, true);
    assert.deepEqual(Object.keys(sent.msgs[2].request.body).sort(), ['maximizeGridImport', 'validUntil']);

    const failed = new Promise<any>((resolve) =>
      ex.node('price as number').once('call:error', (c: any) => resolve(c.args[0])),
    );
    await mqtt.publish('energy/price', 'n/a');
    assert.match(String(await failed), /price must be a number .* got "n\/a"/);
    assert.equal(sent.msgs.length, 3);
    assert.equal(steering().maximizeGridImport!.value, true);
  });
});
