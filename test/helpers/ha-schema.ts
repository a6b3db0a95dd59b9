/**
 * The parts of Home Assistant's MQTT discovery schema the rules in ha-rules.ts check against: the
 * discovery prefix and topic form, entity ids, units and state classes per device class, and the keys each
 * component's schema knows. Each constant cites where homeassistant/ (core) states it.
 */

export const DISCOVERY_PREFIX = 'homeassistant';
/** mqtt/discovery.py TOPIC_MATCHER, matched (re.match) on the topic after "<prefix>/". */
export const TOPIC_MATCHER = /^(\w+)\/(?:([a-zA-Z0-9_-]+)\/)?([a-zA-Z0-9_-]+)\/config/;
/** homeassistant/core.py: _OBJECT_ID = r"(?!_)[\da-z_]+(?<!_)", _DOMAIN = r"(?!.+__)" + _OBJECT_ID, VALID_ENTITY_ID. */
const OBJECT_ID = '(?!_)[\\da-z_]+(?<!_)';
export const VALID_ENTITY_ID = new RegExp(`^(?!.+__)${OBJECT_ID}\\.${OBJECT_ID}$`);

/** homeassistant/const.py UnitOfPower (the ones sensor/const.py and number/const.py allow for device class power). */
const POWER = ['mW', 'W', 'kW', 'MW', 'GW', 'TW'];
/** homeassistant/const.py UnitOfEnergy (set(UnitOfEnergy) for device class energy). */
const ENERGY = ['J', 'kJ', 'MJ', 'GJ', 'mWh', 'Wh', 'kWh', 'MWh', 'GWh', 'TWh', 'cal', 'kcal', 'Mcal', 'Gcal'];
/** sensor/const.py DEVICE_CLASS_UNITS, the device classes the examples use. */
export const SENSOR_UNITS: Record<string, string[]> = {
  battery: ['%'],
  power: POWER,
  energy: ENERGY,
  energy_storage: ENERGY,
};
/** sensor/const.py DEVICE_CLASS_STATE_CLASSES, the same device classes; timestamp and enum: none. */
export const SENSOR_STATE_CLASSES: Record<string, string[]> = {
  battery: ['measurement'],
  power: ['measurement'],
  energy: ['total', 'total_increasing'],
  energy_storage: ['measurement'],
  timestamp: [],
  enum: [],
  date: [],
};
/** sensor/const.py SensorStateClass. */
export const STATE_CLASSES = ['measurement', 'measurement_angle', 'total', 'total_increasing'];
/** sensor/const.py NON_NUMERIC_DEVICE_CLASSES. */
export const NON_NUMERIC = ['date', 'enum', 'timestamp'];
/** number/const.py DEVICE_CLASS_UNITS, the device classes the examples use. */
export const NUMBER_UNITS: Record<string, string[]> = { power: POWER, battery: ['%'], energy: ENERGY };

/** The keys each component's discovery schema knows (all else is dropped: ha-rules.ts says why). */
export const COMMON = [
  // mqtt/schemas.py MQTT_ENTITY_COMMON_SCHEMA and its availability schemas
  'availability',
  'availability_mode',
  'availability_template',
  'availability_topic',
  'payload_available',
  'payload_not_available',
  'device',
  'entity_picture',
  'origin',
  'enabled_by_default',
  'entity_category',
  'icon',
  'json_attributes_topic',
  'json_attributes_template',
  'default_entity_id',
  'message_expiry_interval',
  'unique_id',
  'visible_by_default',
  // mqtt/config.py SCHEMA_BASE
  'qos',
  'encoding',
];
export const KEYS: Record<string, string[]> = {
  // mqtt/config.py MQTT_RO_SCHEMA; mqtt/sensor.py _PLATFORM_SCHEMA_BASE
  sensor: [
    'state_topic',
    'value_template',
    'device_class',
    'expire_after',
    'force_update',
    'last_reset_value_template',
    'name',
    'options',
    'suggested_display_precision',
    'state_class',
    'unit_of_measurement',
  ],
  // mqtt/config.py MQTT_RW_SCHEMA; mqtt/number.py _PLATFORM_SCHEMA_BASE
  number: [
    'command_topic',
    'optimistic',
    'retain',
    'state_topic',
    'command_template',
    'device_class',
    'max',
    'min',
    'mode',
    'name',
    'payload_reset',
    'step',
    'unit_of_measurement',
    'value_template',
  ],
  // MQTT_RW_SCHEMA; mqtt/select.py PLATFORM_SCHEMA_MODERN
  select: [
    'command_topic',
    'optimistic',
    'retain',
    'state_topic',
    'command_template',
    'name',
    'options',
    'value_template',
  ],
  // MQTT_RW_SCHEMA; mqtt/switch.py PLATFORM_SCHEMA
  switch: [
    'command_topic',
    'optimistic',
    'retain',
    'state_topic',
    'name',
    'payload_off',
    'payload_on',
    'state_off',
    'state_on',
    'value_template',
  ],
};
