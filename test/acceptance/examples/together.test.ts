/**
 * All ten examples imported into one Node-RED (node-red-node-test-helper),
 * as the README invites, on one simulator (127.0.0.1, port 0, the built-in simulator's sites)
 * and one aedes broker. Every example that steers is set going at once (its buttons, its MQTT
 * commands); each steering example's site receives its own steering and nothing else, no error
 * fires anywhere, the four MQTT examples share one broker connection, and the Home Assistant
 * entities of 03, 04 and 10 sit on devices of their own with unique ids.
 */
import assert from 'node:assert/strict';
import { BUILT_IN_SITES, DEFAULT_SITES } from '../../../src/simulator/index';
import type { SteeringState } from '../../../src/protocol/types';
import { nodeRedVersion } from '../../helpers/node-red-path';
import {
  CORE_NODES,
  useBroker,
  builtInSite,
  exampleFile,
  exampleFiles,
  forTest,
  loadFlow,
  nodeIn,
  readExample,
  together,
} from '../../helpers/examples';
import { dashboardModules } from '../../helpers/examples-dashboard';
import { discoveries, violations } from '../../helpers/ha-rules';
import { INFLUX_NODES } from '../../helpers/influx';
import { Inbox, NODES, StatusLog, callsOf, helper, logged, until, useRuntime, useSimulator } from '../../helpers/red';

type SteeringComponents = SteeringState['components'];
const site = (name: string) => builtInSite(name).siteReference;
const SITES = {
  '04': site('Home (example 04)'),
  '05': site('Home (example 05)'),
  '06': site('Home (example 06)'),
  '07%': site('Commercial site (example 07)'),
  '07kW': site('Home (example 07)'),
  '08': DEFAULT_SITES[0].siteReference,
  '09': site('Home (example 09)'),
  '10': site('Home (example 10)'),
};
/** What each steering example leaves in force on its site (the components the simulator holds). */
const EXPECTED: Record<keyof typeof SITES, (c: SteeringComponents) => boolean> = {
  '04': (c) => c.energyStorageSetting?.value === -3 && c.energyStorageSetting.unit === 'kW',
  '05': (c) => c.maximizeGridImport?.value === true,
  '06': (c) => c.energyStorageSetting?.value === -5 && c.energyStorageSetting.unit === 'kW',
  '07%': (c) => c.productionCurtailment?.value === 600_000 && c.productionCurtailment.unit === 'W',
  '07kW': (c) => c.productionCurtailment?.unit === 'kW',
  '08': (c) => c.gridLimits?.upperW === 200_000 && c.gridLimits.lowerW === -300_000,
  '09': (c) => c.energyStorageSetting !== null && c.energyStorageSetting.unit === 'kW',
  '10': (c) => c.energyStorageSetting?.value === 4 && c.energyStorageSetting.unit === 'kW',
};
const hhmm = (t: number) => new Date(t).toTimeString().slice(0, 5);

describe(`examples: all ten in one Node-RED ${nodeRedVersion}`, function () {
  this.timeout(60_000);
  const mqtt = useBroker();
  const sim = useSimulator({ sites: [...BUILT_IN_SITES] });
  useRuntime();
  /** Resolves once `done()` holds, checked after every steering request the simulator takes (bounded). */
  function steered(done: () => boolean, what: () => string, ms = 30_000): Promise<void> {
    const box = new Inbox({ on: () => undefined });
    const steer = sim.sim.steer.bind(sim.sim);
    sim.sim.steer = ((...args: Parameters<typeof steer>) => {
      const result = steer(...args);
      setImmediate(() => {
        for (const fn of [...box.listeners]) fn();
      });
      return result;
    }) as typeof steer;
    return until([box], done, ms, what).finally(() => {
      sim.sim.steer = steer;
    });
  }

  it('steer each its own site; no error anywhere; one broker connection; Home Assistant devices of their own', async () => {
    // The examples numbered 01 to 10.
    const files = exampleFiles().filter((f) => /^(0[1-9]|10) /.test(f));
    assert.equal(files.length, 10);
    const flow = together(files, sim.url, mqtt.port);
    const brokers = flow.filter((n) => n.type === 'mqtt-broker');
    assert.equal(brokers.length, 1, 'one broker config node for 03, 04, 05 and 10');
    const ex = (nn: string) => exampleFile(nn);
    const subscribed = [
      mqtt.subscribed(`ems/${SITES['04']}/ess/set`),
      mqtt.subscribed(`ems/${SITES['10']}/+/set`),
      mqtt.subscribed('energy/price'),
    ];
    await loadFlow([...NODES, ...CORE_NODES, ...INFLUX_NODES, ...dashboardModules(flow)], flow);
    await Promise.all(subscribed);
    assert.equal(
      Object.keys(mqtt.broker.clients).length,
      1,
      'one connection to the broker, shared by the four examples',
    );
    const errors: string[] = [];
    for (const n of flow.filter((x) => x.z)) {
      const node = helper.getNode(n.id);
      node?.on('call:error', (c: any) => errors.push(`${n.name || n.type} (${n.id}): ${c.args[0]}`));
    }

    // Example 06: its deploy-time window (the next night) first, then one around now, so it steers at once.
    const night = new StatusLog(nodeIn(ex('06'), "tonight's window"));
    await night.wait(() => true);
    const now = Date.now();
    nodeIn(ex('06'), "tonight's window").receive({
      payload: { start: hhmm(now - 10 * 60_000), end: hhmm(now + 60 * 60_000), powerKw: 5 },
    });
    // Everything else that steers, at once, as a user would press and Home Assistant would command.
    await mqtt.publish(`ems/${SITES['04']}/ess/set`, '-3');
    nodeIn(ex('05'), 'price -0.05').receive({});
    nodeIn(ex('07'), 'Commercial: limit PV to 60 %').receive({});
    nodeIn(ex('07'), 'Home: every minute, 3 kW export').receive({});
    nodeIn(ex('08'), 'Commercial: import ≤ 200 kW, export ≤ 300 kW').receive({});
    await mqtt.publish(`ems/${SITES['10']}/ess_power/set`, '4');
    // Example 09 plans and plays on deploy (2 s on).

    const held = (key: keyof typeof SITES) => EXPECTED[key](sim.sim.steeringState(SITES[key]).components);
    const pending = () => (Object.keys(SITES) as Array<keyof typeof SITES>).filter((k) => !held(k));
    await steered(
      () => pending().length === 0,
      () => `signals in force on ${pending()}`,
    );

    // Each site received the steering of one example only: the request log by site.
    const steeringBySite = new Map<string, Set<string>>();
    for (const e of logged(sim, /^POST \/sites\/:ref\/steering/)) {
      const ref = decodeURIComponent(e.path.split('/')[2]);
      const parts = steeringBySite.get(ref) ?? new Set<string>();
      parts.add(e.path.split('/').slice(3).join('/'));
      steeringBySite.set(ref, parts);
    }
    const site07 = new Set([SITES['07%'], SITES['07kW']]);
    assert.deepEqual(
      [...steeringBySite.keys()].sort(),
      Object.values(SITES).sort(),
      "the steering examples' sites and no other",
    );
    assert.equal(
      steeringBySite.has(DEFAULT_SITES[1].siteReference),
      false,
      'no example steers the default Home (01-03 read it)',
    );
    for (const [ref, parts] of steeringBySite) {
      const want =
        ref === SITES['08']
          ? ['steering/grid-limits']
          : site07.has(ref)
            ? ['steering/curtailment']
            : ref === SITES['05'] || ref === SITES['10']
              ? null
              : ['steering/ess'];
      if (want) assert.deepEqual([...parts].sort(), want, `${ref}: ${[...parts]}`);
    }

    // No error: no node reported one, no error topic got a message, no Catch node caught anything.
    assert.deepEqual(errors, []);
    assert.deepEqual(
      mqtt.published.filter((p) => /\/error$/.test(p.topic)).map((p) => `${p.topic} ${p.payload}`),
      [],
    );
    const catches = flow.filter((n) => n.type === 'catch');
    assert.equal(catches.length, 6, 'the Catch nodes of 04, 06, 08, 09 and 10 (two)');
    for (const c of catches) assert.deepEqual(callsOf('send', c.id), [], `${c.name} (${c.id}) caught nothing`);

    // Home Assistant: every config valid, together (unique ids per component across examples), each device one example's.
    const configs = discoveries(mqtt.published);
    assert.equal(configs.length, 4 + 1 + 6, 'example 03: four sensors, 04: a number, 10: six entities');
    assert.deepEqual(violations(configs), []);
    const devices = new Map<string, Set<string>>();
    for (const c of configs) {
      for (const id of c.payload.device.identifiers)
        devices.set(id, (devices.get(id) ?? new Set()).add(c.payload.origin.name));
    }
    for (const [id, origins] of devices) assert.equal(origins.size, 1, `device ${id} announced by ${[...origins]}`);
    const numbers = configs.filter((c) => c.topic.startsWith('homeassistant/number/'));
    assert.equal(
      new Set(numbers.map((c) => c.payload.device.identifiers[0])).size,
      numbers.length,
      'one battery-power number per device',
    );
  });

  it("the checks can fail: 04 and 10 on one site (as both shipped before) set off 10's error path", async () => {
    const shared = (file: string, from: string) =>
      forTest(JSON.parse(JSON.stringify(readExample(file)).split(from).join(SITES['10'])), sim.url, mqtt.port);
    const seen = new Set<string>();
    const flow = [
      ...shared(exampleFile('04'), SITES['04']),
      ...forTest(readExample(exampleFile('10')), sim.url, mqtt.port),
    ].filter((n) => !seen.has(n.id) && Boolean(seen.add(n.id)));
    const subscribed = mqtt.subscribed(`ems/${SITES['10']}/+/set`);
    await loadFlow([...NODES, ...CORE_NODES], flow);
    await subscribed;
    mqtt.published.length = 0;
    await mqtt.publish(`ems/${SITES['10']}/ess/set`, '-3');
    const [error] = await mqtt.await((p) => p.topic === `ems/${SITES['10']}/error`);
    assert.equal(error.payload, `not a command topic of this flow: ems/${SITES['10']}/ess/set`);
  });
});
