/**
 * Every Home Assistant discovery config the examples publish, checked against Home
 * Assistant's rules for its component (test/helpers/ha-rules.ts: one row per rule, each citing the
 * home-assistant/core file it comes from). The configs are not read from the JSON files: examples
 * 03, 04 and 10 run together in Node-RED on an aedes broker and the simulator, and what the broker
 * then retains under homeassistant/# (what Home Assistant reads when it starts) is checked. Each
 * rule also rejects a config broken in its way, so no row passes by having nothing to check.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { BUILT_IN_SITES } from '../../../src/simulator/index';
import { nodeRedVersion } from '../../helpers/node-red-path';
import { CORE_NODES, useBroker, exampleFile, loadFlow, together } from '../../helpers/examples';
import { RULES, violations, type Discovery } from '../../helpers/ha-rules';
import { NODES, useRuntime, useSimulator } from '../../helpers/red';

/** The MQTT client Node-RED's own MQTT nodes use (a dependency of node-red, not of this package). */
const mqttLib = require(require.resolve('mqtt', { paths: [path.dirname(require.resolve('node-red/package.json'))] }));

/** What the broker retains under `filter`, read as a client that subscribes late does (Home Assistant after a restart). */
async function retained(port: number, filter: string, n: number): Promise<Discovery[]> {
  const client = mqttLib.connect(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 0, connectTimeout: 5000 });
  try {
    const got = new Map<string, any>();
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${got.size} of ${n} retained configs`)), 10_000);
      client.on('message', (topic: string, payload: Buffer, packet: any) => {
        if (!packet.retain) return;
        got.set(topic, JSON.parse(payload.toString()));
        if (got.size === n) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('error', reject);
    });
    await client.subscribeAsync(filter);
    await done;
    return [...got].map(([topic, payload]) => ({ topic, payload }));
  } finally {
    await client.endAsync();
  }
}

/** A config broken in the way each rule forbids (by the rule's source and text), from one of the real ones. */
const BREAK: Array<[RegExp, string, (d: Discovery, all: Discovery[]) => Discovery]> = [
  [
    /TOPIC_MATCHER/,
    'sensor',
    (d) => ({ ...d, topic: d.topic.replace(/\/([^/]+)\/config$/, '/ems_dvc.home:1_soc/config') }),
  ],
  [
    /SUPPORTED_COMPONENTS/,
    'sensor',
    (d) => ({ ...d, topic: d.topic.replace('homeassistant/sensor/', 'homeassistant/gauge/') }),
  ],
  [/json_loads/, 'sensor', (d) => ({ ...d, payload: 'soc' })],
  [/every key/, 'sensor', (d) => ({ ...d, payload: { ...d.payload, unit_of_meassurement: '%' } })],
  [/no object_id/, 'number', (d) => ({ ...d, payload: { ...d.payload, object_id: d.payload.unique_id } })],
  [
    /VALID_ENTITY_ID/,
    'select',
    (d) => ({ ...d, payload: { ...d.payload, default_entity_id: `sensor.${d.payload.unique_id.toLowerCase()}` } }),
  ],
  [/vol.Required\(CONF_STATE_TOPIC\)/, 'sensor', (d) => ({ ...d, payload: { ...d.payload, state_topic: undefined } })],
  [
    /valid_publish_topic/,
    'switch',
    (d) => ({ ...d, payload: { ...d.payload, command_topic: 'ems/+/maximize_import/set' } }),
  ],
  [/valid_subscribe_topic$/, 'sensor', (d) => ({ ...d, payload: { ...d.payload, state_topic: 'ems/a+b/soc' } })],
  [
    /unique IDs/,
    'sensor',
    (d, all) => ({
      ...d,
      payload: {
        ...d.payload,
        unique_id: all.find((x) => x.topic !== d.topic && x.topic.startsWith('homeassistant/sensor/'))!.payload
          .unique_id,
      },
    }),
  ],
  [/MQTT_ENTITY_DEVICE_INFO_SCHEMA/, 'number', (d) => ({ ...d, payload: { ...d.payload, device: { name: 'Home' } } })],
  [/MQTT_ORIGIN_INFO_SCHEMA/, 'select', (d) => ({ ...d, payload: { ...d.payload, origin: { sw_version: '1' } } })],
  [/AVAILABILITY_MODES/, 'sensor', (d) => ({ ...d, payload: { ...d.payload, availability: undefined } })],
  [/icon$/, 'switch', (d) => ({ ...d, payload: { ...d.payload, icon: 'transmission-tower-import' } })],
  [
    /validate_sensor_state_and_device_class_config/,
    'sensor',
    (d) => ({ ...d, payload: { ...d.payload, device_class: 'power', options: ['yes', 'no'] } }),
  ],
  [
    /sensor\/const.py DEVICE_CLASS_UNITS/,
    'sensor',
    (d) => ({
      ...d,
      payload: { ...d.payload, device_class: 'battery', unit_of_measurement: 'Wh', state_class: 'measurement' },
    }),
  ],
  [
    /DEVICE_CLASS_STATE_CLASSES/,
    'sensor',
    (d) => ({
      ...d,
      payload: { ...d.payload, device_class: 'energy', unit_of_measurement: 'Wh', state_class: 'measurement' },
    }),
  ],
  [
    /NON_NUMERIC_DEVICE_CLASSES/,
    'sensor',
    (d) => ({
      ...d,
      payload: { ...d.payload, device_class: 'timestamp', unit_of_measurement: 's', state_class: undefined },
    }),
  ],
  [/mqtt\/number.py validate_config/, 'number', (d) => ({ ...d, payload: { ...d.payload, min: 10, max: -10 } })],
  [
    /number\/const.py DEVICE_CLASS_UNITS/,
    'number',
    (d) => ({ ...d, payload: { ...d.payload, unit_of_measurement: '%' } }),
  ],
  [/mqtt\/select.py PLATFORM_SCHEMA_MODERN/, 'select', (d) => ({ ...d, payload: { ...d.payload, options: [] } })],
  [/STATE_UNKNOWN/, 'select', (d) => ({ ...d, payload: { ...d.payload, options: ['auto', 'unknown'] } })],
];

describe(`examples: Home Assistant discovery against Home Assistant's rules, on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(30_000);
  const sim = useSimulator({ frozen: true, sites: [...BUILT_IN_SITES] });
  const mqtt = useBroker();
  useRuntime();

  beforeEach(() => {
    mqtt.published.length = 0;
  });

  /** Runs 03, 04 and 10 together; once they announced (4 + 1 + 6 configs), what the broker retains. */
  async function announced(): Promise<Discovery[]> {
    await loadFlow([...NODES, ...CORE_NODES], together(['03', '04', '10'].map(exampleFile), sim.s.url, mqtt.port));
    await mqtt.await((p) => p.topic.startsWith('homeassistant/') && p.retain, 11);
    return retained(mqtt.port, 'homeassistant/#', 11);
  }

  it('the table: every row cites a home-assistant/core file', () => {
    assert.ok(RULES.length >= 20, `${RULES.length} rules`);
    for (const r of RULES) {
      assert.match(
        r.source,
        /(mqtt|sensor|number|helpers|homeassistant)\/[\w/]*\.py|homeassistant\/(core|const)\.py/,
        r.rule,
      );
    }
  });

  it('every config examples 03, 04 and 10 publish (retained on the broker) follows every rule of its component', async () => {
    const configs = await announced();
    assert.deepEqual(configs.map((c) => c.topic.split('/')[1]).sort(), [
      'number',
      'number',
      'select',
      'sensor',
      'sensor',
      'sensor',
      'sensor',
      'sensor',
      'sensor',
      'sensor',
      'switch',
    ]);
    assert.deepEqual(violations(configs), []);
    // Every rule applied to at least one config.
    for (const r of RULES) {
      assert.ok(
        configs.some((c) => !r.components || r.components.includes(c.topic.split('/')[1])),
        `no config to check against: ${r.rule}`,
      );
    }
  });

  it('each rule rejects a config broken in its way (from the real ones)', async () => {
    const configs = await announced();
    const unbroken = new Set(RULES.map((r) => r.source));
    for (const [source, component, breakIt] of BREAK) {
      const rule = RULES.find((r) => source.test(r.source) || source.test(r.rule));
      assert.ok(rule, `a rule for ${source}`);
      const victim = configs.find((c) => c.topic.startsWith(`homeassistant/${component}/`))!;
      const broken = breakIt(structuredClone(victim), configs);
      const others = configs.filter((c) => c !== victim);
      const found = violations([...others, broken]).filter((v) => v.endsWith(`(${rule.source})`));
      assert.ok(found.length > 0, `${rule.rule}: not caught`);
      unbroken.delete(rule.source);
    }
    assert.deepEqual([...unbroken], [], 'every rule has a broken config it rejects');
  });
});
