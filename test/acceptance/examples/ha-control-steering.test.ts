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
import { nodeRedVersion } from '../../helpers/node-red-path';
import { NODES, callsOf, helper, logged, turns, useRuntime } from '../../helpers/red';

const EX10 = '10 Home Assistant - steer the battery.json';
const HOME = builtInSite('Home (example 10)');
const SITE = HOME.siteReference;
const BAT = HOME.battery.deviceReference;
const BASE = `ems/${SITE}`;

const SHIPPED = readExample(EX10);

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

  /**
   * Loads the example as shipped, except: the EMS config node on the test's simulator (retries 0),
   * the broker node on the test's broker with keepalive off (its timer is an interval, fake here),
   * and the announce on deploy off (its 1-s delay is real time and would race the tests' states).
   * The broker node's connect announces (configs, then the states auto, None, OFF): load awaits
   * that and starts the tests' record of publishes after it.
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
    mqtt.published.push(...all.filter((p) => !isAnnounce(p)));
    const node = (name: string) => {
      const found = SHIPPED.filter((n) => n.name === name);
      assert.equal(found.length, 1, `one node named ${name}`);
      return helper.getNode(found[0].id);
    };
    return { node, fire: (name, msg = {}) => node(name).receive(msg) };
  }

  const steeringPosts = () => logged(simulator, /^POST \/sites\/:\w+\/steering/).length;
  /** The delivery check's readings of the battery answered by the simulator (its energy counters). */
  const checkReads = () =>
    logged(simulator, 'GET /devices/:ref/measurements').filter(
      (e) => e.path.includes(BAT) && e.path.includes('totalEnergy'),
    ).length;
  const components = () => simulator.sim.steeringState(SITE).components;
  /** Publishes a command as Home Assistant does and awaits the `n`-th message on `topic`. */
  async function command(entity: string, payload: string, topic: string, n: number): Promise<Published> {
    await mqtt.publish(`${BASE}/${entity}/set`, payload);
    return (await mqtt.await(on(topic), n))[n - 1];
  }

  it('steers from Home Assistant: number, select and switch reach the simulator through the site steer node; the states show what was accepted', async () => {
    await load();
    const t0 = Date.now();
    const state = (entity: string, n: number) =>
      mqtt.await(on(`${BASE}/${entity}/state`), n).then((a) => a[n - 1].payload);

    // The number: −5 kW charges, for 15 minutes (the node's duration); "sent until" is that validUntil.
    await command('ess_power', '-5', `${BASE}/ess_power/state`, 1);
    const ess = components().energyStorageSetting!;
    assert.deepEqual([ess.value, ess.unit], [-5, 'kW']);
    assert.ok(
      ess.validUntil >= t0 + 15 * MINUTE_MS && ess.validUntil <= Date.now() + 15 * MINUTE_MS,
      'valid for 15 minutes',
    );
    assert.deepEqual(
      [await state('ess_power', 1), await state('mode', 1), await state('maximize_import', 1)],
      ['-5', 'charge', 'OFF'],
    );
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
    const onBody = logged(simulator, /steering/).at(-1)!.body as any;
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
    assert.match(
      refused.payload,
      /energyStorage must be within the node's limit maxEssPower = 10000 W .*got 10\.5 kW; nothing was sent/,
    );
    assert.equal(refused.retain, false);
    await mqtt.publish(`${BASE}/ess_power/set`, '-25');
    assert.match((await error(2)).payload, /maxEssPower = 10000 W/);
    await mqtt.publish(`${BASE}/ess_power/set`, 'full power');
    assert.equal(
      (await error(3)).payload,
      'ess_power must be a number of kW (positive discharges, negative charges); got "full power"',
    );
    await mqtt.publish(`${BASE}/mode/set`, 'turbo');
    assert.equal((await error(4)).payload, 'mode must be one of auto, charge, discharge, idle; got "turbo"');
    await mqtt.publish(`${BASE}/maximize_import/set`, 'on');
    assert.equal((await error(5)).payload, 'maximize_import must be ON or OFF; got "on"');

    assert.equal(steeringPosts(), posts, 'nothing was sent');
    assert.equal(components().energyStorageSetting!.value, 10, 'unchanged');
    assert.deepEqual(
      mqtt.published.filter(on(`${BASE}/ess_power/state`)).map((p) => p.payload),
      ['10'],
      'the state keeps the accepted value',
    );
  });

  it("holds what was asked every 5 minutes (fake clock) and publishes the battery's delivery verdict; auto stops the hold", async () => {
    const ex = await load();
    const readsBefore = checkReads();
    await command('ess_power', '-5', `${BASE}/ess_power/state`, 1);
    // The window took its first reading (event-loop turns, bounded; no sleeping).
    for (let turn = 0; turn < 10_000 && checkReads() === readsBefore; turn++) await new Promise(setImmediate);
    assert.equal(checkReads(), readsBefore + 1, 'the window read the battery once');
    const first = components().energyStorageSetting!.validUntil;
    assert.equal(steeringPosts(), 1);

    // 5 minutes: the hold sends −5 kW again (a later validUntil); that ends the first window: its verdict.
    simulator.sim.clock.advance(5 * MINUTE_MS);
    await clock.tickAsync(5 * MINUTE_MS);
    const [verdict] = await mqtt.await(on(`${BASE}/delivery`));
    assert.equal(verdict.payload, 'yes');
    assert.equal(verdict.retain, true);
    const [attrs] = await mqtt.await(on(`${BASE}/delivery/attributes`));
    const report = JSON.parse(attrs.payload);
    assert.deepEqual(
      [report.site, report.component, report.asked, report.measured, report.followed, report.device],
      [SITE, 'energyStorage', { value: -5, unit: 'kW' }, { value: -5, unit: 'kW' }, 'yes', BAT],
    );
    assert.equal(report.until - report.from, 5 * MINUTE_MS);
    assert.equal(steeringPosts(), 2, 'the hold sent once');
    const held = components().energyStorageSetting!;
    assert.deepEqual([held.value, held.unit], [-5, 'kW']);
    assert.ok(held.validUntil >= first, 'renewed');
    const untils = await mqtt.await(on(`${BASE}/sent_until`), 2);
    assert.equal(untils[1].payload, new Date(held.validUntil).toISOString(), '"sent until" follows the hold');

    // auto: the hold fires, and the command node sends nothing on.
    await command('mode', 'auto', `${BASE}/mode/state`, 3);
    const [holds, sends] = [
      callsOf('send', ex.node('every 5 minutes: hold').id).length,
      callsOf('send', ex.node('command → steering').id).length,
    ];
    await clock.tickAsync(5 * MINUTE_MS);
    await turns();
    assert.equal(callsOf('send', ex.node('every 5 minutes: hold').id).length, holds + 1, 'the hold fired');
    assert.equal(callsOf('send', ex.node('command → steering').id).length, sends, 'nothing to hold in auto');
    assert.equal(steeringPosts(), 2);
  });
});
