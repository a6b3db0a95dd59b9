/**
 * Example 10, loaded as shipped, on an in-process aedes broker and a simulator: the control
 * entities it announces to Home Assistant by MQTT discovery (number, select, switch, sensors;
 * the number's min/max from the site steer node's maxEssPower), the command round trip
 * (Home Assistant's command topic → site steer → simulator → state topic), refusals, the
 * 5-minute hold with the delivery verdict, and availability (Node-RED's connection: the shared
 * broker node's birth, last will and close on ems/node-red/availability; the service: the site's
 * topic after each read). The flow steers its own site, Home (example 10). The flow's timers (the
 * injects' intervals) and the delivery check's run on a @sinonjs/fake-timers clock, advanced in
 * step with the frozen simulator's.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { MINUTE_MS } from '../../../src/protocol/time';
import { setDeliveryClock } from '../../../src/runtime/delivery-check';
import { BUILT_IN_SITES, startSimulator, type StartedSimulator } from '../../../src/simulator/index';
import { CORE_NODES, useBroker, builtInSite, forTest, loadFlow, readExample, withoutDeployAnnounce, type Published } from '../../helpers/examples';
import { discoveries, violations } from '../../helpers/ha-rules';
import { matches } from '../../helpers/mqtt-topics';
import { nodeRedVersion } from '../../helpers/node-red-path';
import { NODES, helper, logged, turns, useRuntime } from '../../helpers/red';

const EX10 = '10 Home Assistant - steer the battery.json';
const HOME = builtInSite('Home (example 10)');
const SITE = HOME.siteReference;
const BAT = HOME.battery.deviceReference;
const BASE = `ems/${SITE}`;
const AVAILABILITY = `${BASE}/availability`;
/** Node-RED's connection to the broker: the shared broker node's birth, close and last-will topic. */
const BRIDGE = 'ems/node-red/availability';
const SHIPPED = readExample(EX10);
const STEER = SHIPPED.find((n) => n.type === 'ems-site-steer');

describe(`example 10: Home Assistant two-way control on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(30_000);
  const mqtt = useBroker();
  let simulator: StartedSimulator;
  let clock: ReturnType<typeof FakeTimers.install>;

  useRuntime(); // its afterEach (unload) runs before the one below: the flow closes on the fake clock
  beforeEach(async () => {
    mqtt.published.length = 0;
    const t0 = Date.now();
    simulator = await startSimulator({ port: 0, frozen: true, startTime: t0, sites: [...BUILT_IN_SITES] });
    // Only the intervals are fake (the injects' repeat); the delivery check's timers run on the same clock.
    clock = FakeTimers.install({ now: t0, toFake: ['setInterval', 'clearInterval'], shouldClearNativeTimers: true });
    setDeliveryClock({
      now: () => clock.now,
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
      clearTimeout: (t) => clock.clearTimeout(t as FakeTimers.TimerId),
    });
  });
  afterEach(async () => {
    setDeliveryClock();
    clock.uninstall();
    await simulator.close();
  });

  const on = (topic: string) => (p: Published) => p.topic === topic;
  /** What the flow announced once the broker node connected: the discovery configs and the first states. */
  let announced: Published[] = [];

  /**
   * Loads the example as shipped, except: the EMS config node on the test's simulator (retries 0),
   * the broker node on the test's broker with keepalive off (its timer is an interval, fake here),
   * and the announce on deploy off (its 1-s delay is real time and would race the tests' states).
   * The broker node's connect announces (configs, then the states auto, None, OFF): load awaits
   * that, keeps it in `announced` and starts the tests' record of publishes after it.
   */
  async function load(): Promise<{ node(name: string): any; fire(name: string, msg?: object): void }> {
    const subscribed = mqtt.subscribed(`${BASE}/+/set`);
    await loadFlow(
      [...NODES, ...CORE_NODES],
      forTest(withoutDeployAnnounce(SHIPPED), simulator.url, mqtt.port, { keepalive: '0' }),
    );
    await subscribed;
    await mqtt.await((p) => p.topic.startsWith('homeassistant/'), 6);
    await mqtt.await(on(`${BASE}/maximize_import/state`));
    const isAnnounce = (p: Published) =>
      p.topic.startsWith('homeassistant/') || (p.topic.startsWith(`${BASE}/`) && p.topic.endsWith('/state'));
    const all = mqtt.published.splice(0);
    announced = all.filter(isAnnounce);
    mqtt.published.push(...all.filter((p) => !isAnnounce(p)));
    const node = (name: string) => {
      const found = SHIPPED.filter((n) => n.name === name);
      assert.equal(found.length, 1, `one node named ${name}`);
      return helper.getNode(found[0].id);
    };
    return { node, fire: (name, msg = {}) => node(name).receive(msg) };
  }

  const steeringPosts = () => logged(simulator, /^POST \/sites\/:\w+\/steering/).length;

  it('announces a number, a select, a switch and three sensors by discovery when the broker node connects: retained, valid for Home Assistant; min/max from maxEssPower', async () => {
    await load();
    const configs = announced.filter((p) => p.topic.startsWith('homeassistant/'));
    assert.equal(configs.length, 6);
    const byKey = new Map<string, any>();
    for (const c of configs) {
      const body = JSON.parse(c.payload);
      const [, component, uid, last] = c.topic.split('/');
      assert.equal(last, 'config');
      assert.equal(uid, body.unique_id, 'homeassistant/<component>/<unique_id>/config');
      assert.equal(body.default_entity_id, `${component}.${uid.toLowerCase()}`);
      assert.equal(c.retain, true, `${c.topic} is retained`);
      assert.deepEqual(body.device, {
        identifiers: [`ems_${SITE}`],
        name: 'Home (example 10)',
        manufacturer: 'EMS partner',
      });
      // Unavailable when Node-RED is gone (the broker node's will and close) or the service is (a failed read).
      assert.deepEqual(body.availability, [
        { topic: BRIDGE, payload_available: 'online', payload_not_available: 'offline' },
        { topic: AVAILABILITY, payload_available: 'online', payload_not_available: 'offline' },
      ]);
      assert.equal(body.availability_mode, 'all');
      assert.equal(typeof body.name, 'string');
      assert.match(body.state_topic, new RegExp(`^${BASE}/`));
      if (body.command_topic)
        assert.ok(
          matches(SHIPPED.find((n) => n.type === 'mqtt in' && n.topic.endsWith('/set')).topic, body.command_topic),
          'the flow listens on it',
        );
      byKey.set(`${component} ${uid.replace(`ems_${SITE}_`, '')}`, body);
    }
    assert.deepEqual([...byKey.keys()].sort(), [
      'number ess_power',
      'select mode',
      'sensor delivery',
      'sensor sent_until',
      'sensor soc',
      'switch maximize_import',
    ]);
    assert.deepEqual(violations(discoveries(configs)), []);

    const number = byKey.get('number ess_power');
    const maxKw = STEER.maxEssPower / 1000;
    assert.equal(maxKw, 10);
    assert.deepEqual(
      [number.min, number.max, number.step, number.unit_of_measurement, number.device_class],
      [-maxKw, maxKw, 0.1, 'kW', 'power'],
    );
    assert.deepEqual([number.command_topic, number.state_topic], [`${BASE}/ess_power/set`, `${BASE}/ess_power/state`]);
    const select = byKey.get('select mode');
    assert.deepEqual(select.options, ['auto', 'charge', 'discharge', 'idle']);
    assert.deepEqual([select.command_topic, select.state_topic], [`${BASE}/mode/set`, `${BASE}/mode/state`]);
    const sw = byKey.get('switch maximize_import');
    assert.deepEqual(
      [sw.payload_on, sw.payload_off, sw.command_topic, sw.state_topic],
      ['ON', 'OFF', `${BASE}/maximize_import/set`, `${BASE}/maximize_import/state`],
    );
    assert.deepEqual(
      [byKey.get('sensor sent_until').device_class, byKey.get('sensor sent_until').state_topic],
      ['timestamp', `${BASE}/sent_until`],
    );
    const delivery = byKey.get('sensor delivery');
    assert.deepEqual(
      [delivery.device_class, delivery.options, delivery.json_attributes_topic],
      ['enum', ['yes', 'partly', 'no', 'no_data'], `${BASE}/delivery/attributes`],
    );
    assert.deepEqual(
      [byKey.get('sensor soc').device_class, byKey.get('sensor soc').unit_of_measurement],
      ['battery', '%'],
    );

    // The states after a start: auto, no power (None resets the number to unknown), maximize off; retained.
    const state = (entity: string) => announced.find(on(`${BASE}/${entity}/state`))!;
    assert.deepEqual(
      [state('mode').payload, state('ess_power').payload, state('maximize_import').payload],
      ['auto', 'None', 'OFF'],
    );
    assert.ok(['mode', 'ess_power', 'maximize_import'].every((e) => state(e).retain));
    assert.equal(steeringPosts(), 0, 'announcing sends nothing');

    // Home Assistant's birth message (after its restart) announces again; another payload does not.
    await mqtt.publish('homeassistant/status', 'offline');
    await mqtt.publish('homeassistant/status', 'online');
    const again = await mqtt.await((p) => p.topic.startsWith('homeassistant/'), 6);
    assert.equal(again.length, 6);
  });

  it('a delivery report without data ("unknown") is the verdict no_data: "unknown" is Home Assistant\'s own state', async () => {
    const ex = await load();
    ex.fire('delivery verdict', {
      payload: { site: SITE, component: 'energyStorage', followed: 'unknown', reason: 'a failed reading' },
    });
    const [verdict] = await mqtt.await(on(`${BASE}/delivery`));
    assert.deepEqual([verdict.payload, verdict.retain], ['no_data', true]);
    const [attrs] = await mqtt.await(on(`${BASE}/delivery/attributes`));
    assert.equal(JSON.parse(attrs.payload).followed, 'unknown', 'the report itself as it is');
  });

  it("availability: Node-RED online by the broker node's birth message; the site online after a read, offline once the service is lost (a read fails)", async () => {
    const ex = await load();
    const [birth] = await mqtt.await(on(BRIDGE));
    assert.deepEqual([birth.payload, birth.retain], ['online', true]);
    // The first read (1 s after the start): the state of charge, and the site online.
    const [soc] = await mqtt.await(on(`${BASE}/soc`));
    assert.equal(Number(soc.payload), simulator.sim.measure(BAT, 'soc').value);
    const [online] = await mqtt.await((p) => p.topic === AVAILABILITY && p.payload === 'online');
    assert.equal(online.retain, true);
    assert.ok(ex.node('every minute'));

    // The service is gone: the next read (one minute on) fails, and the site goes offline.
    await simulator.close();
    await clock.tickAsync(MINUTE_MS);
    const [offline] = await mqtt.await((p) => p.topic === AVAILABILITY && p.payload === 'offline');
    assert.equal(offline.retain, true);
    assert.deepEqual(
      mqtt.published.filter(on(BRIDGE)).map((p) => p.payload),
      ['online'],
      'Node-RED itself is still connected',
    );
  });

  it("availability: Node-RED offline by the broker node's close message when it stops", async () => {
    await load();
    await mqtt.await(on(BRIDGE));
    await helper.unload();
    const [closed] = await mqtt.await((p) => p.topic === BRIDGE && p.payload === 'offline');
    assert.equal(closed.retain, true);
  });

  it("availability: Node-RED offline by the broker node's last will when its connection dies without a goodbye", async () => {
    await load();
    await mqtt.await(on(BRIDGE));
    // Node-RED killed or the network gone: no DISCONNECT, so the broker publishes the will.
    const clients = Object.values(mqtt.broker.clients) as any[];
    assert.equal(clients.length, 1);
    clients[0].conn.destroy();
    const [will] = await mqtt.await((p) => p.topic === BRIDGE && p.payload === 'offline');
    assert.equal(will.retain, true);
    // Node-RED reconnects after mqttReconnectTime (5 s by default; an interval, on the fake clock): online again.
    const avail = () => mqtt.published.filter(on(BRIDGE)).map((p) => p.payload);
    const backOnline = () =>
      avail()
        .slice(avail().indexOf('offline') + 1)
        .includes('online');
    const isOnline = (p: { topic: string; payload: unknown }) => p.topic === BRIDGE && p.payload === 'online';
    const onlineBefore = mqtt.published.filter(isOnline).length;
    for (let i = 0; i < 20 && !backOnline(); i++) {
      await clock.tickAsync(1000); // the client may notice the loss after the will went out
      await turns();
    }
    // The reconnect itself is real I/O (TCP, CONNACK, the birth message): wait for it, not for a count of turns.
    if (!backOnline()) await mqtt.await(isOnline, onlineBefore + 1);
    assert.equal(avail()[0], 'online');
    assert.ok(backOnline(), `online again after the will: ${avail()}`);
  });
});
