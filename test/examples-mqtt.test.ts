/**
 * Examples 3, 4 and 5, loaded as shipped, with Node-RED's own MQTT nodes on an in-process
 * aedes broker: Home Assistant discovery and states, steering from a command topic, and the
 * negative-price rule (from an inject and from MQTT).
 */
import assert from 'node:assert/strict';
import { quarterHourValidUntil } from '../src/protocol/time';
import { DEFAULT_SITES } from '../src/simulator/index';
import { nodeRedVersion } from './helpers/node-red-path';
import { loadExample, TestBroker, type Published } from './helpers/examples';
import { useRuntime, useSimulator } from './helpers/red';

const HOME = DEFAULT_SITES[1];
const BAT = HOME.battery.deviceReference;
const SITE = HOME.siteReference;

describe(`examples: MQTT (03, 04, 05) on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(30_000);
  const sim = useSimulator({ frozen: true });
  const mqtt = new TestBroker();
  before(async () => {
    await mqtt.start();
  });
  after(async () => {
    await mqtt.stop();
  });
  beforeEach(() => {
    mqtt.published.length = 0;
    sim.s.sim.reset();
  });
  useRuntime();
  const steering = () => sim.s.sim.steeringState(SITE).components;
  /** validUntil of a quarter-hour signal sent between t0 and now (the quarter may turn meanwhile). */
  const quarterEnds = (t0: number) => [quarterHourValidUntil(t0), quarterHourValidUntil(Date.now())];

  it('03 announces the battery to Home Assistant and publishes its states', async () => {
    const ex = await loadExample('03 Publish to MQTT with Home Assistant discovery.json', sim.s.url, mqtt.port);
    ex.fire('on start: announce');
    ex.fire('every minute');
    const isConfig = (p: Published) => p.topic.startsWith('homeassistant/');
    const configs = await mqtt.await(isConfig, 4);
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
      assert.equal(body.state_topic, `ems/${BAT}/${prop}`);
      assert.equal(body.unit_of_measurement, expected[prop][0]);
      assert.equal(body.device_class, expected[prop][1]);
      assert.equal(body.state_class, expected[prop][2]);
      assert.equal(typeof body.name, 'string');
      assert.deepEqual(body.device, { identifiers: [`ems_${BAT}`], name: 'Home battery', manufacturer: 'EMS partner', model: HOME.battery.name });
    }
    assert.deepEqual([...byProp.keys()].sort(), Object.keys(expected).sort());

    const states = await mqtt.await((p) => p.topic.startsWith('ems/'), 4);
    for (const s of states.slice(0, 4)) {
      const prop = s.topic.split('/').pop()!;
      assert.equal(s.topic, byProp.get(prop).state_topic);
      assert.equal(Number(s.payload), sim.s.sim.measure(BAT, prop).value, prop);
      assert.equal(s.retain, true);
    }
  });

  it('04 sets the ESS power from the command topic, valid to the quarter hour, and publishes the state', async () => {
    const subscribed = mqtt.subscribed(`ems/${SITE}/ess/set`);
    const ex = await loadExample('04 Steer the battery from MQTT.json', sim.s.url, mqtt.port);
    ex.fire('on start: announce');
    const [entity] = await mqtt.await((p) => p.topic === `homeassistant/number/ems_${SITE}_ess/config`);
    const body = JSON.parse(entity.payload);
    assert.equal(entity.retain, true);
    assert.equal(body.command_topic, `ems/${SITE}/ess/set`);
    assert.equal(body.state_topic, `ems/${SITE}/ess/state`);
    assert.deepEqual([body.min, body.max, body.unit_of_measurement], [-10, 10, 'kW']);

    await subscribed;
    const t0 = Date.now();
    await mqtt.publish(`ems/${SITE}/ess/set`, '-5');
    const [state] = await mqtt.await((p) => p.topic === `ems/${SITE}/ess/state`);
    assert.equal(state.payload, '-5');
    assert.equal(state.retain, true);
    const ess = steering().energyStorageSetting!;
    assert.deepEqual([ess.value, ess.unit], [-5, 'kW']);
    assert.ok(quarterEnds(t0).includes(ess.validUntil), `validUntil ${new Date(ess.validUntil).toISOString()}`);

    // Beyond the node's 10 kW limit: refused before sending, reported on the error topic.
    await mqtt.publish(`ems/${SITE}/ess/set`, '25');
    const [refused] = await mqtt.await((p) => p.topic === `ems/${SITE}/ess/error`);
    assert.match(refused.payload, /maxEssPower = 10000 W/);
    assert.equal(refused.retain, false);
    await mqtt.publish(`ems/${SITE}/ess/set`, 'full power');
    const errors = await mqtt.await((p) => p.topic === `ems/${SITE}/ess/error`, 2);
    assert.match(errors[1].payload, /energyStorage/);
    assert.deepEqual([steering().energyStorageSetting!.value, steering().energyStorageSetting!.unit], [-5, 'kW'], 'unchanged');
    assert.equal(mqtt.published.filter((p) => p.topic === `ems/${SITE}/ess/state`).length, 1);

    // "stop" ends renewing (off here): nothing is sent and no state is published; the next
    // number is published after it, so a state from "stop" would show up before it.
    const status = ex.status('Home battery (max 10 kW, to quarter end)');
    await mqtt.publish(`ems/${SITE}/ess/set`, 'stop');
    await status.wait((x) => x.text === 'stopped');
    assert.equal(steering().energyStorageSetting!.value, -5);
    await mqtt.publish(`ems/${SITE}/ess/set`, '2.5');
    const states = await mqtt.await((p) => p.topic === `ems/${SITE}/ess/state`, 2);
    assert.deepEqual(states.map((p) => p.payload), ['-5', '2.5']);
    assert.equal(steering().energyStorageSetting!.value, 2.5);
  });

  it('05 maximizes grid import on a negative price to the quarter hour, and stops on a positive one', async () => {
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

    const failed = new Promise<any>((resolve) => ex.node('price as number').once('call:error', (c: any) => resolve(c.args[0])));
    await mqtt.publish('energy/price', 'n/a');
    assert.match(String(await failed), /price must be a number .* got "n\/a"/);
    assert.equal(sent.msgs.length, 3);
    assert.equal(steering().maximizeGridImport!.value, true);
  });
});
