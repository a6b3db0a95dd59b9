/**
 * Example 10, loaded as shipped, on an in-process aedes broker and a simulator: the control
 * entities it announces to Home Assistant by MQTT discovery (number, select, switch, sensors;
 * the number's min/max from the site steer node's maxEssPower), the command round trip
 * (Home Assistant's command topic → site steer → simulator → state topic), refusals, the
 * 5-minute hold with the delivery verdict, and availability (birth, service lost, last will,
 * close). The flow's timers (the injects' intervals) and the delivery check's run on a
 * @sinonjs/fake-timers clock, advanced in step with the frozen simulator's.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { MINUTE_MS } from '../src/protocol/time';
import { setDeliveryClock } from '../src/runtime/delivery-check';
import { DEFAULT_SITES, startSimulator, type StartedSimulator } from '../src/simulator/index';
import { CORE_NODES, TestBroker, readExample, type Published } from './helpers/examples';
import { nodeRedVersion } from './helpers/node-red-path';
import { NODES, callsOf, helper, logged, turns, useRuntime } from './helpers/red';

/* eslint-disable @typescript-eslint/no-explicit-any */
const EX10 = '10 Home Assistant - steer the battery.json';
const HOME = DEFAULT_SITES[1];
const SITE = HOME.siteReference;
const BAT = HOME.battery.deviceReference;
const BASE = `ems/${SITE}`;
const AVAILABILITY = `${BASE}/availability`;
const SHIPPED = readExample(EX10);
const STEER = SHIPPED.find((n) => n.type === 'ems-site-steer');

/** Whether an MQTT topic filter (with + and #) matches a topic. */
function matches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length || (f[i] !== '+' && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}

describe(`example 10: Home Assistant two-way control on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(30_000);
  const mqtt = new TestBroker();
  let s: StartedSimulator;
  let clock: ReturnType<typeof FakeTimers.install>;

  before(async () => {
    await mqtt.start();
  });
  after(async () => {
    await mqtt.stop();
  });
  useRuntime(); // its afterEach (unload) runs before the one below: the flow closes on the fake clock
  beforeEach(async () => {
    mqtt.published.length = 0;
    const t0 = Date.now();
    s = await startSimulator({ port: 0, frozen: true, startTime: t0 });
    // Only the intervals are fake (the injects' repeat); the delivery check's timers run on the same clock.
    clock = FakeTimers.install({ now: t0, toFake: ['setInterval', 'clearInterval'], shouldClearNativeTimers: true });
    setDeliveryClock({ now: () => clock.now, setTimeout: (fn, ms) => clock.setTimeout(fn, ms), clearTimeout: (t) => clock.clearTimeout(t as FakeTimers.TimerId) });
  });
  afterEach(async () => {
    setDeliveryClock();
    clock.uninstall();
    await s.close();
  });

  /**
   * Loads the example as shipped, except: the EMS config node on the test's simulator (retries 0),
   * the broker node on the test's broker with keepalive off (its timer is an interval, fake
   * here), and the announce inject without its start delay (fired by the tests).
   */
  async function load(): Promise<{ node(name: string): any; fire(name: string, msg?: object): void }> {
    const tabs = new Set(SHIPPED.map((n) => n.z).filter(Boolean));
    const nodes = SHIPPED.map((n) => {
      if (n.type === 'ems-partner-config') return { ...n, simulator: false, baseUrl: s.url, retries: 0 };
      if (n.type === 'mqtt-broker') return { ...n, broker: '127.0.0.1', port: String(mqtt.port), keepalive: '0' };
      // The tests announce when they choose (its 2-s start delay is real time and would race their states).
      if (n.type === 'inject' && n.name === 'on start: announce') return { ...n, once: false };
      return n;
    });
    const subscribed = mqtt.subscribed(`${BASE}/+/set`);
    // node-red-node-test-helper 0.3 runs its own Catch module once per Catch node of the flow, and
    // this flow has two: the module registers its type once per load here, and is not passed again.
    const h = helper as any;
    const catchModule = h._nodeModules.catch;
    let registered = false;
    h._nodeModules.catch = (red: unknown) => (registered ? undefined : ((registered = true), catchModule(red)));
    try {
      const modules = [...new Set([...NODES, ...CORE_NODES])].filter((m) => m !== catchModule);
      await helper.load(modules, [...[...tabs].map((id) => ({ id, type: 'tab', label: EX10 })), ...nodes], {});
    } finally {
      h._nodeModules.catch = catchModule;
    }
    await subscribed;
    const node = (name: string) => {
      const found = SHIPPED.filter((n) => n.name === name);
      assert.equal(found.length, 1, `one node named ${name}`);
      return helper.getNode(found[0].id);
    };
    return { node, fire: (name, msg = {}) => node(name).receive(msg) };
  }

  const on = (topic: string) => (p: Published) => p.topic === topic;
  const steeringPosts = () => logged(s, /^POST \/sites\/:\w+\/steering/).length;
  const components = () => s.sim.steeringState(SITE).components;
  /** Publishes a command as Home Assistant does and awaits the `n`-th message on `topic`. */
  async function command(entity: string, payload: string, topic: string, n: number): Promise<Published> {
    await mqtt.publish(`${BASE}/${entity}/set`, payload);
    return (await mqtt.await(on(topic), n))[n - 1];
  }

  it('announces a number, a select, a switch and three sensors by discovery: retained, with the keys Home Assistant documents; min/max from maxEssPower', async () => {
    const ex = await load();
    ex.fire('on start: announce');
    const configs = await mqtt.await((p) => p.topic.startsWith('homeassistant/'), 6);
    const byKey = new Map<string, any>();
    for (const c of configs.slice(0, 6)) {
      const body = JSON.parse(c.payload);
      const [, component, uid, last] = c.topic.split('/');
      assert.equal(last, 'config');
      assert.equal(uid, body.unique_id, 'homeassistant/<component>/<unique_id>/config');
      assert.equal(c.retain, true, `${c.topic} is retained`);
      assert.deepEqual(body.device, { identifiers: [`ems_${SITE}`], name: 'Home', manufacturer: 'EMS partner' });
      assert.deepEqual(body.availability, [{ topic: AVAILABILITY, payload_available: 'online', payload_not_available: 'offline' }]);
      assert.equal(typeof body.name, 'string');
      assert.match(body.state_topic, new RegExp(`^${BASE}/`));
      if (body.command_topic) assert.ok(matches(SHIPPED.find((n) => n.type === 'mqtt in' && n.topic.endsWith('/set')).topic, body.command_topic), 'the flow listens on it');
      byKey.set(`${component} ${uid.replace(`ems_${SITE}_`, '')}`, body);
    }
    assert.deepEqual([...byKey.keys()].sort(), ['number ess_power', 'select mode', 'sensor delivery', 'sensor sent_until', 'sensor soc', 'switch maximize_import']);

    const number = byKey.get('number ess_power');
    const maxKw = STEER.maxEssPower / 1000;
    assert.equal(maxKw, 10);
    assert.deepEqual([number.min, number.max, number.step, number.unit_of_measurement, number.device_class], [-maxKw, maxKw, 0.1, 'kW', 'power']);
    assert.deepEqual([number.command_topic, number.state_topic], [`${BASE}/ess_power/set`, `${BASE}/ess_power/state`]);
    const select = byKey.get('select mode');
    assert.deepEqual(select.options, ['auto', 'charge', 'discharge', 'idle']);
    assert.deepEqual([select.command_topic, select.state_topic], [`${BASE}/mode/set`, `${BASE}/mode/state`]);
    const sw = byKey.get('switch maximize_import');
    assert.deepEqual([sw.payload_on, sw.payload_off, sw.command_topic, sw.state_topic], ['ON', 'OFF', `${BASE}/maximize_import/set`, `${BASE}/maximize_import/state`]);
    assert.deepEqual([byKey.get('sensor sent_until').device_class, byKey.get('sensor sent_until').state_topic], ['timestamp', `${BASE}/sent_until`]);
    const delivery = byKey.get('sensor delivery');
    assert.deepEqual([delivery.device_class, delivery.options, delivery.json_attributes_topic], ['enum', ['yes', 'partly', 'no', 'unknown'], `${BASE}/delivery/attributes`]);
    assert.deepEqual([byKey.get('sensor soc').device_class, byKey.get('sensor soc').unit_of_measurement], ['battery', '%']);

    // The states after a start: auto, no power (None resets the number to unknown), maximize off; retained.
    const [mode] = await mqtt.await(on(`${BASE}/mode/state`));
    const [power] = await mqtt.await(on(`${BASE}/ess_power/state`));
    const [max] = await mqtt.await(on(`${BASE}/maximize_import/state`));
    assert.deepEqual([mode.payload, power.payload, max.payload], ['auto', 'None', 'OFF']);
    assert.ok([mode, power, max].every((p) => p.retain));
    assert.equal(steeringPosts(), 0, 'announcing sends nothing');

    // Home Assistant's birth message (after its restart) announces again; another payload does not.
    const before = mqtt.published.filter((p) => p.topic.startsWith('homeassistant/')).length;
    await mqtt.publish('homeassistant/status', 'offline');
    await mqtt.publish('homeassistant/status', 'online');
    const again = await mqtt.await((p) => p.topic.startsWith('homeassistant/'), before + 6);
    assert.equal(again.length, before + 6);
  });

  it('steers from Home Assistant: number, select and switch reach the simulator through the site steer node; the states show what was accepted', async () => {
    await load();
    const t0 = Date.now();
    const state = (entity: string, n: number) => mqtt.await(on(`${BASE}/${entity}/state`), n).then((a) => a[n - 1].payload);

    // The number: −5 kW charges, for 15 minutes (the node's duration); "sent until" is that validUntil.
    await command('ess_power', '-5', `${BASE}/ess_power/state`, 1);
    let ess = components().energyStorageSetting!;
    assert.deepEqual([ess.value, ess.unit], [-5, 'kW']);
    assert.ok(ess.validUntil >= t0 + 15 * MINUTE_MS && ess.validUntil <= Date.now() + 15 * MINUTE_MS, 'valid for 15 minutes');
    assert.deepEqual([await state('ess_power', 1), await state('mode', 1), await state('maximize_import', 1)], ['-5', 'charge', 'OFF']);
    const [until] = await mqtt.await(on(`${BASE}/sent_until`));
    assert.equal(until.payload, new Date(ess.validUntil).toISOString());
    assert.equal(until.retain, true);

    // The select: discharge at the number's power, idle = 0 W, charge from idle at 5 kW.
    await command('mode', 'discharge', `${BASE}/mode/state`, 2);
    assert.equal(components().energyStorageSetting!.value, 5);
    assert.deepEqual([await state('mode', 2), await state('ess_power', 2)], ['discharge', '5']);
    await command('mode', 'idle', `${BASE}/mode/state`, 3);
    assert.equal(components().energyStorageSetting!.value, 0);
    assert.equal(await state('ess_power', 3), '0');
    await command('mode', 'charge', `${BASE}/mode/state`, 4);
    assert.equal(components().energyStorageSetting!.value, -5);

    // The switch: maximize grid import on and off, the battery's setting left as it is.
    await command('maximize_import', 'ON', `${BASE}/maximize_import/state`, 5);
    assert.equal(components().maximizeGridImport!.value, true);
    assert.equal(await state('maximize_import', 5), 'ON');
    assert.equal(components().energyStorageSetting!.value, -5);
    const onBody = logged(s, /steering/).at(-1)!.body as any;
    assert.deepEqual(Object.keys(onBody).sort(), ['maximizeGridImport', 'validUntil']);
    await command('maximize_import', 'OFF', `${BASE}/maximize_import/state`, 6);
    assert.equal(components().maximizeGridImport!.value, false);
    assert.equal(await state('maximize_import', 6), 'OFF');
    assert.equal(steeringPosts(), 6, 'one request per command');

    // auto: the node stops; nothing is sent, the last signal lapses at "sent until".
    await command('mode', 'auto', `${BASE}/mode/state`, 7);
    assert.deepEqual([await state('mode', 7), await state('ess_power', 7)], ['auto', 'None']);
    assert.equal(steeringPosts(), 6, 'auto sends nothing');
    assert.equal(components().energyStorageSetting!.value, -5, 'in force until it lapses');
  });

  it('refuses an over-limit number in the site steer node (nothing sent) and reports every refusal on the error topic', async () => {
    await load();
    await command('ess_power', '10', `${BASE}/ess_power/state`, 1);
    assert.equal(components().energyStorageSetting!.value, 10, 'the limit itself is allowed');
    const posts = steeringPosts();
    const error = (n: number) => mqtt.await(on(`${BASE}/error`), n).then((a) => a[n - 1]);

    await mqtt.publish(`${BASE}/ess_power/set`, '10.5');
    const refused = await error(1);
    assert.match(refused.payload, /energyStorage must be within the node's limit maxEssPower = 10000 W .*got 10\.5 kW; nothing was sent/);
    assert.equal(refused.retain, false);
    await mqtt.publish(`${BASE}/ess_power/set`, '-25');
    assert.match((await error(2)).payload, /maxEssPower = 10000 W/);
    await mqtt.publish(`${BASE}/ess_power/set`, 'full power');
    assert.equal((await error(3)).payload, 'ess_power must be a number of kW (positive discharges, negative charges); got "full power"');
    await mqtt.publish(`${BASE}/mode/set`, 'turbo');
    assert.equal((await error(4)).payload, 'mode must be one of auto, charge, discharge, idle; got "turbo"');
    await mqtt.publish(`${BASE}/maximize_import/set`, 'on');
    assert.equal((await error(5)).payload, 'maximize_import must be ON or OFF; got "on"');

    assert.equal(steeringPosts(), posts, 'nothing was sent');
    assert.equal(components().energyStorageSetting!.value, 10, 'unchanged');
    assert.deepEqual(mqtt.published.filter(on(`${BASE}/ess_power/state`)).map((p) => p.payload), ['10'], 'the state keeps the accepted value');
  });

  it('holds what was asked every 5 minutes (fake clock) and publishes the battery\'s delivery verdict; auto stops the hold', async () => {
    const ex = await load();
    const steer = ex.node(STEER.name);
    await command('ess_power', '-5', `${BASE}/ess_power/state`, 1);
    await steer.delivery.settled(); // the window took its first reading
    const first = components().energyStorageSetting!.validUntil;
    assert.equal(steeringPosts(), 1);

    // 5 minutes: the hold sends −5 kW again (a later validUntil); that ends the first window: its verdict.
    s.sim.clock.advance(5 * MINUTE_MS);
    await clock.tickAsync(5 * MINUTE_MS);
    const [verdict] = await mqtt.await(on(`${BASE}/delivery`));
    assert.equal(verdict.payload, 'yes');
    assert.equal(verdict.retain, true);
    const [attrs] = await mqtt.await(on(`${BASE}/delivery/attributes`));
    const report = JSON.parse(attrs.payload);
    assert.deepEqual([report.site, report.component, report.asked, report.measured, report.followed, report.device], [SITE, 'energyStorage', { value: -5, unit: 'kW' }, { value: -5, unit: 'kW' }, 'yes', BAT]);
    assert.equal(report.until - report.from, 5 * MINUTE_MS);
    assert.equal(steeringPosts(), 2, 'the hold sent once');
    const held = components().energyStorageSetting!;
    assert.deepEqual([held.value, held.unit], [-5, 'kW']);
    assert.ok(held.validUntil >= first, 'renewed');
    const untils = await mqtt.await(on(`${BASE}/sent_until`), 2);
    assert.equal(untils[1].payload, new Date(held.validUntil).toISOString(), '"sent until" follows the hold');

    // auto: the hold fires, and the command node sends nothing on.
    await command('mode', 'auto', `${BASE}/mode/state`, 3);
    const [holds, sends] = [callsOf('send', ex.node('every 5 minutes: hold').id).length, callsOf('send', ex.node('command → steering').id).length];
    await clock.tickAsync(5 * MINUTE_MS);
    await turns();
    assert.equal(callsOf('send', ex.node('every 5 minutes: hold').id).length, holds + 1, 'the hold fired');
    assert.equal(callsOf('send', ex.node('command → steering').id).length, sends, 'nothing to hold in auto');
    assert.equal(steeringPosts(), 2);
  });

  it('availability: online by the birth message and after a read; offline once the service is lost (a read fails)', async () => {
    const ex = await load();
    const [birth] = await mqtt.await(on(AVAILABILITY));
    assert.deepEqual([birth.payload, birth.retain], ['online', true]);
    // The first read (1 s after the start): the state of charge, and online.
    const [soc] = await mqtt.await(on(`${BASE}/soc`));
    assert.equal(Number(soc.payload), s.sim.measure(BAT, 'soc').value);
    await mqtt.await((p) => p.topic === AVAILABILITY && p.payload === 'online', 2);
    assert.ok(ex.node('every minute'));

    // The service is gone: the next read (one minute on) fails, and the site goes offline.
    await s.close();
    await clock.tickAsync(MINUTE_MS);
    const [offline] = await mqtt.await((p) => p.topic === AVAILABILITY && p.payload === 'offline');
    assert.equal(offline.retain, true);
  });

  it('availability: offline by the broker node\'s close message when Node-RED stops', async () => {
    await load();
    await mqtt.await(on(AVAILABILITY));
    await helper.unload();
    const [closed] = await mqtt.await((p) => p.topic === AVAILABILITY && p.payload === 'offline');
    assert.equal(closed.retain, true);
  });

  it('availability: offline by the broker node\'s last will when its connection dies without a goodbye', async () => {
    await load();
    await mqtt.await(on(AVAILABILITY));
    // Node-RED killed or the network gone: no DISCONNECT, so the broker publishes the will.
    const clients = Object.values(mqtt.broker.clients) as any[];
    assert.equal(clients.length, 1);
    clients[0].conn.destroy();
    const [will] = await mqtt.await((p) => p.topic === AVAILABILITY && p.payload === 'offline');
    assert.equal(will.retain, true);
    // Node-RED reconnects after mqttReconnectTime (5 s by default; an interval, on the fake clock): online again.
    const avail = () => mqtt.published.filter(on(AVAILABILITY)).map((p) => p.payload);
    const backOnline = () => avail().slice(avail().indexOf('offline') + 1).includes('online');
    const isOnline = (p: { topic: string; payload: unknown }) => p.topic === AVAILABILITY && p.payload === 'online';
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
