/**
 * The Home Assistant discovery configs of examples 03, 04 and 10 appear after a
 * deploy of modified nodes, not only after a (re)start. They announce on deploy (an inject) and
 * whenever their MQTT in node turns connected (a Status node watches it: every connect of the
 * shared broker node):
 * - the broker node edited (another broker) and deployed as "Modified nodes": it and the MQTT
 *   nodes restart, nothing else; the configs go to the new broker;
 * - another example deployed next to a running one ("Modified nodes", the broker node as it
 *   was, still connected): its configs appear too.
 */
import assert from 'node:assert/strict';
import { BUILT_IN_SITES } from '../../../src/simulator/index';
import { nodeRedVersion } from '../../helpers/node-red-path';
import {
  CORE_NODES,
  useBroker,
  exampleFile,
  loadFlow,
  together,
  withoutDeployAnnounce,
  type Published,
} from '../../helpers/examples';
import { discoveries, violations } from '../../helpers/ha-rules';
import { NODES, helper, useRuntime, useSimulator } from '../../helpers/red';

const isConfig = (p: Published) => p.topic.startsWith('homeassistant/') && p.retain;
/** A deploy of `flow` as the editor's "Modified nodes" does it (the runtime's setFlows, type "nodes"). */
const deployModified = (flow: object[]) => (helper as any)._redNodes.setFlows(flow, {}, 'nodes');

describe(`examples: Home Assistant discovery after a deploy of modified nodes, on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(30_000);
  const sim = useSimulator({ frozen: true, sites: [...BUILT_IN_SITES] });
  const first = useBroker();
  const second = useBroker();
  beforeEach(() => {
    first.published.length = 0;
    second.published.length = 0;
  });
  useRuntime();
  const files = ['03', '04', '10'].map(exampleFile);

  it('the broker node pointed at another broker, deployed as modified nodes: 03, 04 and 10 announce there, nothing else restarted', async () => {
    // Without the announce on deploy (its 1-s delay is real time): the connect alone announces here.
    const flow = withoutDeployAnnounce(together(files, sim.s.url, first.port));
    await loadFlow([...NODES, ...CORE_NODES], flow);
    await first.await(isConfig, 11);
    const running = flow.filter((n) => n.z && n.type !== 'comment').map((n) => [n, helper.getNode(n.id)] as const);

    const edited = flow.map((n) => (n.type === 'mqtt-broker' ? { ...n, port: String(second.port) } : n));
    await deployModified(edited);
    const configs = await second.await(isConfig, 11);
    assert.deepEqual(
      discoveries(configs)
        .map((d) => d.topic.split('/')[1])
        .sort(),
      ['number', 'number', 'select', 'sensor', 'sensor', 'sensor', 'sensor', 'sensor', 'sensor', 'sensor', 'switch'],
    );
    assert.deepEqual(violations(discoveries(configs)), []);
    // A deploy of modified nodes: the broker node's users (MQTT in and out) and the Status nodes watching them restarted, nothing else.
    const restarted = running.filter(([n, node]) => helper.getNode(n.id) !== node).map(([n]) => n.type);
    assert.deepEqual([...new Set(restarted)].sort(), ['mqtt in', 'mqtt out', 'status']);
    assert.ok(running.length - restarted.length > 30, `${running.length - restarted.length} nodes kept running`);
  });

  it('example 04 deployed next to a running 03 (modified nodes, the broker node as it was): 04 announces too', async () => {
    const [ex03, ex04] = files;
    await loadFlow([...NODES, ...CORE_NODES], together([ex03], sim.s.url, first.port));
    await first.await(isConfig, 4);
    const broker = helper.getNode(together([ex03], sim.s.url, first.port).find((n) => n.type === 'mqtt-broker').id);
    await deployModified(together([ex03, ex04], sim.s.url, first.port));
    const [number] = await first.await((p) => isConfig(p) && p.topic.startsWith('homeassistant/number/'));
    assert.equal(JSON.parse(number.payload).device.name, 'Home (example 04)');
    assert.equal(helper.getNode(broker.id), broker, 'the broker node kept running (and connected)');
    assert.equal(
      first.published.filter((p) => p.topic === 'ems/node-red/availability').length,
      1,
      'no reconnect (one birth message): 04 announced on deploy',
    );
  });
});
