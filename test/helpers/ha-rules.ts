/**
 * Home Assistant's rules for an MQTT discovery message, as its source states them (read in the
 * home-assistant/core repository, not recalled): one row per rule, citing the file
 * (and the constant or function) it comes from: mqtt/, sensor/, number/ are under
 * homeassistant/components/, helpers/ under homeassistant/, core.py and const.py homeassistant/'s. `violations(all)` checks every retained config
 * an example published against every row that applies to its component.
 *
 * Home Assistant's discovery schemas drop keys they do not know (DISCOVERY_SCHEMA = …
 * .extend({}, extra=vol.REMOVE_EXTRA) in mqtt/sensor.py, number.py, select.py): a misspelt or
 * removed key is lost without a word, so the known keys are a rule of their own here.
 */

export interface Discovery {
  topic: string;
  /** The parsed payload (a JSON object). */
  payload: any;
}

export interface Rule {
  rule: string;
  /** Where Home Assistant says so: file (constant, function). */
  source: string;
  /** The components it applies to (undefined: every one). */
  components?: string[];
  /** What is wrong with `d` (undefined: nothing); `all` is every config checked together. */
  check(d: Discovery, component: string, all: Discovery[]): string | undefined;
}

import {
  DISCOVERY_PREFIX,
  TOPIC_MATCHER,
  VALID_ENTITY_ID,
  SENSOR_UNITS,
  SENSOR_STATE_CLASSES,
  STATE_CLASSES,
  NON_NUMERIC,
  NUMBER_UNITS,
  COMMON,
  KEYS,
} from './ha-schema';

const str = (v: unknown) => typeof v === 'string' && v.trim() !== '';
/** The payload when it is an object, else {} (the object rule reports the rest). */
const obj = (d: Discovery): Record<string, any> =>
  d.payload && typeof d.payload === 'object' && !Array.isArray(d.payload) ? d.payload : {};
/** mqtt/util.py valid_subscribe_topic: '+' a whole level, '#' last and after '/'; no NUL. */
function subscribeTopic(t: unknown): string | undefined {
  if (!str(t) || String(t).includes('\0')) return `${JSON.stringify(t)} is not a topic`;
  const levels = String(t).split('/');
  if (levels.some((l) => l.includes('+') && l !== '+')) return `${t}: "+" must be a whole level`;
  const hash = String(t).indexOf('#');
  if (hash !== -1 && (hash !== String(t).length - 1 || (hash > 0 && String(t)[hash - 1] !== '/')))
    return `${t}: "#" must be last, after "/"`;
  return undefined;
}
const componentOf = (d: Discovery) => TOPIC_MATCHER.exec(d.topic.slice(DISCOVERY_PREFIX.length + 1))?.[1] ?? '';

export const RULES: Rule[] = [
  {
    rule: 'topic <prefix>/<component>/[<node_id>/]<object_id>/config; component \\w+, ids [a-zA-Z0-9_-]+',
    source: 'mqtt/discovery.py TOPIC_MATCHER',
    check: (d) =>
      d.topic.startsWith(`${DISCOVERY_PREFIX}/`) &&
      TOPIC_MATCHER.test(d.topic.slice(DISCOVERY_PREFIX.length + 1)) &&
      d.topic.endsWith('/config')
        ? undefined
        : `topic ${d.topic} does not match`,
  },
  {
    rule: 'the component is one discovery supports',
    source: 'mqtt/const.py SUPPORTED_COMPONENTS (imported by mqtt/discovery.py)',
    check: (_d, c) =>
      ['sensor', 'number', 'select', 'switch'].includes(c)
        ? undefined
        : `component ${c} (the examples use sensor, number, select, switch)`,
  },
  {
    rule: 'the payload is a JSON object',
    source: 'mqtt/discovery.py (json_loads; a dict is required)',
    check: (d) =>
      d.payload && typeof d.payload === 'object' && !Array.isArray(d.payload) ? undefined : 'not an object',
  },
  {
    rule: "every key is one the component's discovery schema knows (the rest is dropped silently)",
    source:
      'mqtt/schemas.py MQTT_ENTITY_COMMON_SCHEMA; mqtt/config.py MQTT_RO_SCHEMA, MQTT_RW_SCHEMA; mqtt/sensor.py, number.py, select.py, switch.py',
    check: (d, c) => {
      const unknown = Object.keys(obj(d)).filter((k) => !COMMON.includes(k) && !(KEYS[c] ?? []).includes(k));
      return unknown.length ? `keys Home Assistant drops: ${unknown.join(', ')}` : undefined;
    },
  },
  {
    rule: 'no object_id (deprecated 2025.10, then removed): default_entity_id instead',
    source:
      'mqtt/schemas.py MQTT_ENTITY_COMMON_SCHEMA (default_entity_id, no object_id); mqtt/entity.py (the deprecation warning)',
    check: (d) => ('object_id' in obj(d) ? 'object_id' : undefined),
  },
  {
    rule: 'default_entity_id is <component>.<object id>, a valid entity id',
    source: 'homeassistant/core.py VALID_ENTITY_ID; mqtt/entity.py (default_entity_id "<component>.<object_id>")',
    check: (d, c) => {
      const entityId = d.payload?.default_entity_id;
      if (entityId === undefined) return undefined;
      return typeof entityId === 'string' && VALID_ENTITY_ID.test(entityId) && entityId.startsWith(`${c}.`)
        ? undefined
        : `default_entity_id ${JSON.stringify(entityId)}`;
    },
  },
  {
    rule: 'sensor: state_topic is required',
    source: 'mqtt/config.py MQTT_RO_SCHEMA (vol.Required(CONF_STATE_TOPIC))',
    components: ['sensor'],
    check: (d) => (str(d.payload?.state_topic) ? undefined : 'no state_topic'),
  },
  {
    rule: 'number, select, switch: command_topic is required, a publish topic (no + or #)',
    source: 'mqtt/config.py MQTT_RW_SCHEMA (vol.Required(CONF_COMMAND_TOPIC)); mqtt/util.py valid_publish_topic',
    components: ['number', 'select', 'switch'],
    check: (d) =>
      str(d.payload?.command_topic) && !/[+#]/.test(d.payload.command_topic)
        ? undefined
        : `command_topic ${JSON.stringify(d.payload?.command_topic)}`,
  },
  {
    rule: 'state_topic, json_attributes_topic: valid subscribe topics',
    source: 'mqtt/util.py valid_subscribe_topic',
    check: (d) =>
      ['state_topic', 'json_attributes_topic']
        .filter((k) => k in obj(d))
        .map((k) => subscribeTopic(obj(d)[k]))
        .find(Boolean),
  },
  {
    rule: 'unique_id: a string, unique per component (a second entity with it is refused)',
    source:
      'mqtt/schemas.py (unique_id cv.string); helpers/entity_platform.py ("Platform … does not generate unique IDs")',
    check: (d, c, all) => {
      if (!str(d.payload?.unique_id)) return 'no unique_id';
      const same = all.filter(
        (x) => componentOf(x) === c && x.payload?.unique_id === d.payload.unique_id && x.topic !== d.topic,
      );
      return same.length
        ? `unique_id ${d.payload.unique_id} also on ${same.map((x) => x.topic).join(', ')}`
        : undefined;
    },
  },
  {
    rule: 'device: at least one of identifiers, connections; identifiers a list of strings',
    source: 'mqtt/schemas.py MQTT_ENTITY_DEVICE_INFO_SCHEMA, validate_device_has_at_least_one_identifier',
    check: (d) => {
      const dev = d.payload?.device;
      if (dev === undefined) return 'no device (the examples attach every entity to one)';
      const ids = dev.identifiers === undefined ? [] : [dev.identifiers].flat();
      if (!ids.every(str)) return `identifiers ${JSON.stringify(dev.identifiers)}`;
      return ids.length || (Array.isArray(dev.connections) && dev.connections.length)
        ? undefined
        : 'a device without identifiers or connections';
    },
  },
  {
    rule: 'origin: name is required',
    source: 'mqtt/schemas.py MQTT_ORIGIN_INFO_SCHEMA',
    check: (d) => (d.payload?.origin === undefined || str(d.payload.origin.name) ? undefined : 'origin without name'),
  },
  {
    rule: 'availability: a list of {topic (required, a subscribe topic), payload_available, payload_not_available}; not with availability_topic; availability_mode all, any or latest. Without any, an entity stays available while Home Assistant is connected',
    source:
      'mqtt/schemas.py _MQTT_AVAILABILITY_LIST_SCHEMA (vol.Exclusive), mqtt/const.py AVAILABILITY_MODES; mqtt/entity.py MqttAvailabilityMixin.available',
    check: (d) => {
      const payload = obj(d);
      if (!Array.isArray(payload.availability) || payload.availability.length === 0)
        return 'no availability: the entity would stay available after Node-RED stops';
      if ('availability_topic' in payload) return 'availability and availability_topic';
      for (const a of payload.availability) {
        const bad = subscribeTopic(a?.topic);
        if (bad) return `availability: ${bad}`;
        if (!str(a.payload_available ?? 'online') || !str(a.payload_not_available ?? 'offline'))
          return 'availability payloads';
      }
      return payload.availability_mode === undefined || ['all', 'any', 'latest'].includes(payload.availability_mode)
        ? undefined
        : `availability_mode ${payload.availability_mode}`;
    },
  },
  {
    rule: 'icon: "prefix:name"',
    source: 'helpers/config_validation.py icon',
    check: (d) =>
      d.payload?.icon === undefined || String(d.payload.icon).includes(':') ? undefined : `icon ${d.payload.icon}`,
  },
  {
    rule: 'sensor options: only with device class enum, not empty, not with state_class or unit_of_measurement',
    source: 'mqtt/sensor.py validate_sensor_state_and_device_class_config',
    components: ['sensor'],
    check: (d) => {
      const payload = obj(d);
      if (payload.options === undefined)
        return payload.device_class === 'enum' ? 'device class enum without options' : undefined;
      if (!Array.isArray(payload.options) || payload.options.length === 0) return 'empty options';
      if (payload.state_class || payload.unit_of_measurement) return 'options with state_class or unit_of_measurement';
      return payload.device_class === 'enum' ? undefined : `options with device class ${payload.device_class}`;
    },
  },
  {
    rule: 'sensor: the unit is one its device class allows',
    source: 'sensor/const.py DEVICE_CLASS_UNITS (mqtt/sensor.py refuses another)',
    components: ['sensor'],
    check: (d) => {
      const { device_class: dc, unit_of_measurement: u } = obj(d);
      if (dc === undefined || u === undefined || !SENSOR_UNITS[dc]) return undefined;
      return SENSOR_UNITS[dc].includes(u) ? undefined : `unit ${u} for device class ${dc}`;
    },
  },
  {
    rule: 'sensor: a state class, and one its device class allows',
    source: 'sensor/const.py SensorStateClass, DEVICE_CLASS_STATE_CLASSES',
    components: ['sensor'],
    check: (d) => {
      const { device_class: dc, state_class: sc } = obj(d);
      if (sc === undefined) return undefined;
      if (!STATE_CLASSES.includes(sc)) return `state class ${sc}`;
      return dc === undefined || !SENSOR_STATE_CLASSES[dc] || SENSOR_STATE_CLASSES[dc].includes(sc)
        ? undefined
        : `state class ${sc} for device class ${dc}`;
    },
  },
  {
    rule: 'sensor: non-numeric device classes (date, enum, timestamp) take no unit and no state class',
    source:
      'sensor/const.py NON_NUMERIC_DEVICE_CLASSES; sensor/__init__.py ("has a unit of measurement … however, it has the non-numeric device class")',
    components: ['sensor'],
    check: (d) =>
      NON_NUMERIC.includes(obj(d).device_class) &&
      (obj(d).unit_of_measurement !== undefined || obj(d).state_class !== undefined)
        ? `unit or state class with device class ${obj(d).device_class}`
        : undefined,
  },
  {
    rule: 'number: min < max, step >= 0.001, mode auto, box or slider',
    source: 'mqtt/number.py validate_config, _PLATFORM_SCHEMA_BASE (vol.Range(min=1e-3)); number/const.py NumberMode',
    components: ['number'],
    check: (d) => {
      const { min = 0, max = 100, step = 1, mode = 'auto' } = obj(d);
      if (!(Number(min) < Number(max))) return `min ${min} not below max ${max}`;
      if (!(Number(step) >= 1e-3)) return `step ${step}`;
      return ['auto', 'box', 'slider'].includes(mode) ? undefined : `mode ${mode}`;
    },
  },
  {
    rule: 'number: the unit is one its device class allows',
    source: 'number/const.py DEVICE_CLASS_UNITS',
    components: ['number'],
    check: (d) => {
      const { device_class: dc, unit_of_measurement: u } = obj(d);
      if (dc === undefined || !NUMBER_UNITS[dc]) return undefined;
      return NUMBER_UNITS[dc].includes(u) ? undefined : `unit ${u} for device class ${dc}`;
    },
  },
  {
    rule: 'select: options are required and not empty',
    source: 'mqtt/select.py PLATFORM_SCHEMA_MODERN (vol.Required(CONF_OPTIONS))',
    components: ['select'],
    check: (d) => (Array.isArray(obj(d).options) && obj(d).options.length ? undefined : 'no options'),
  },
  {
    rule: 'options (select, enum sensor) are not Home Assistant\'s own states unknown / unavailable, nor "none" (a select reads it as no option)',
    source:
      'homeassistant/const.py STATE_UNKNOWN, STATE_UNAVAILABLE; mqtt/select.py (payload.lower() == "none" → None)',
    components: ['select', 'sensor'],
    check: (d) => {
      const bad = [obj(d).options ?? []]
        .flat()
        .filter((o: unknown) => ['unknown', 'unavailable', 'none'].includes(String(o).toLowerCase()));
      return bad.length ? `options ${bad.join(', ')}` : undefined;
    },
  },
];

/** Every rule each config breaks: "<topic>: <what> (<source>)". */
export function violations(all: Discovery[]): string[] {
  const out: string[] = [];
  for (const d of all) {
    const component = componentOf(d);
    for (const r of RULES) {
      if (r.components && !r.components.includes(component)) continue;
      const bad = r.check(d, component, all);
      if (bad) out.push(`${d.topic}: ${bad} (${r.source})`);
    }
  }
  return out;
}

/** The retained discovery configs among MQTT publishes (the last per topic), parsed. */
export function discoveries(published: Array<{ topic: string; payload: string; retain: boolean }>): Discovery[] {
  const last = new Map<string, string>();
  for (const p of published)
    if (p.retain && p.topic.startsWith(`${DISCOVERY_PREFIX}/`) && p.topic.endsWith('/config'))
      last.set(p.topic, p.payload);
  return [...last].map(([topic, payload]) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch {
      parsed = payload;
    }
    return { topic, payload: parsed };
  });
}
