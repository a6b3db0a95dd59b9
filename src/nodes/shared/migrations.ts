/**
 * Upgrades of saved node properties (HA-websocket style). Each node type has an ordered list
 * of steps `{ version, up(config) }`; `migrate(type, config)` applies, in order, every step
 * above the config's `version`. A config without a version is version 1 (release 0.1.0).
 *
 * Runs at load in the runtime (first thing in each node's constructor) and in the editor:
 * this file imports nothing, so the build serves the same table to the browser as
 * resources/migrations.js (window.EmsPartnerMigrations), which each panel applies when a node
 * is added to the workspace (load, import, paste) and when its edit dialog opens.
 *
 * Every property added from now on gets a step here that gives it its default explicitly, so
 * a flow saved before it existed behaves as before. A step never changes a value the flow
 * already holds, and never runs twice (it is skipped once the config carries its version).
 */

/** A node's saved properties, as in a flow file. */
export type NodeConfig = Record<string, unknown>;

/** One upgrade: `up` turns a config of version `version - 1` into one of `version`. */
export interface Migration {
  readonly version: number;
  up(config: NodeConfig): NodeConfig;
}

export type MigrationTable = Readonly<Record<string, readonly Migration[]>>;

/** `config` with `defaults` for the properties it does not hold (undefined or null). */
function withDefaults(config: NodeConfig, defaults: NodeConfig): NodeConfig {
  const out: NodeConfig = { ...config };
  for (const key of Object.keys(defaults)) {
    if (out[key] === undefined || out[key] === null) out[key] = defaults[key];
  }
  return out;
}

/** The upgrade steps of every node type, in order of version. */
export const MIGRATIONS: MigrationTable = {
  'ems-partner-config': [
    // 0.2.0 (issue 10): answer size and steering validity limits.
    { version: 2, up: (c) => withDefaults(c, { maxBodyMB: 10, maxValidity: 1440 }) },
    // 0.3.0 (issue 12): the paths the specification does not show ('' = the assumed default),
    // and how a % curtailment goes out. A config saved before sent `%` as it is, so it keeps
    // 'send'; a new config node starts at 'convert' (the published type has no %).
    { version: 3, up: (c) => withDefaults(c, { pathDevices: '', pathSites: '', pathCurtailment: '', pathGridLimits: '', percentCurtailment: 'send' }) },
    // 0.3.0 (issue 14): the request budget: caps per minute and per day (0 = none), and what a
    // read does at a cap (refused, as a new config node starts).
    { version: 4, up: (c) => withDefaults(c, { maxPerMinute: 0, maxPerDay: 0, budgetMode: 'refuse' }) },
  ],
  'ems-device-read': [
    // 0.2.0 (issue 10): messages per split.
    { version: 2, up: (c) => withDefaults(c, { maxSplit: 1000 }) },
  ],
  'ems-time-series': [
    // 0.2.0 (issue 10): messages per split.
    { version: 2, up: (c) => withDefaults(c, { maxSplit: 1000 }) },
  ],
  'ems-site-steer': [
    // 0.2.0 (issue 10): grid limit ('' = none, as the panel's default), maximize grid import
    // allowed, what stop does, the PV peak power a 'lift' stop sends ('' = unknown).
    { version: 2, up: (c) => withDefaults(c, { maxGridPower: '', allowMaximizeGridImport: true, stopAction: 'expire', pvPeakPower: '' }) },
    // 0.3.0 (issue 12): grid-limits mode (its values, '' = from msg.payload) and its node limit ('' = none).
    {
      version: 3,
      up: (c) => withDefaults(c, {
        upperLimitValue: '', upperLimitValueType: 'num', upperLimitUnit: 'kW',
        lowerLimitValue: '', lowerLimitValueType: 'num', lowerLimitUnit: 'kW',
        maxGridLimit: '',
      }),
    },
    // 0.3.0 (issue 13): the delivery check (off), the devices it measures with ('' = none),
    // how often while a signal lasts (0 = only when it ends) and its tolerance (% of the asked
    // power, at least toleranceMin W).
    {
      version: 4,
      up: (c) => withDefaults(c, {
        verify: false, batteryDevice: '', batteryDeviceType: 'str', pvDevice: '', pvDeviceType: 'str', meterDevice: '', meterDeviceType: 'str',
        verifyEvery: 0, tolerance: 10, toleranceMin: 1000,
      }),
    },
    // 0.3.0 (issue 14): fleets: the node's site list ('' = the one site of `site`, or msg.sites)
    // and how portfolio mode splits the fleet's power (by battery rating).
    { version: 5, up: (c) => withDefaults(c, { sites: '', portfolioSplit: 'rating' }) },
  ],
  'ems-request': [
    // 0.3.0 (issue 14): a raw request (as before), or the config node's request counts ('stats').
    { version: 2, up: (c) => withDefaults(c, { mode: 'request' }) },
  ],
  'ems-plan': [
    // issue 20: the site model's settings ('' = the planner's default: √efficiency each way, no
    // wear, no SOC target, no end value, prices as given, no limit, no peak cost) and
    // re-planning (off: one plan per message, all its slots, as before).
    {
      version: 2,
      up: (c) => withDefaults(c, {
        chargeEfficiency: '', dischargeEfficiency: '', cycleCost: '', endValue: '', socTarget: '', socTargetTime: '',
        importMultiplier: '', importFee: '', importVat: '', exportMultiplier: '', exportFee: '', exportVat: '',
        importLimitKW: '', exportLimitKW: '', peakCost: '', replan: false,
      }),
    },
    // issue 20 (re-planning that loses against no control): slots whose battery just follows PV
    // and load are left to the site's own control ('self-consumption', a new node's default) or
    // steered like every other ('steer': what a saved node did before).
    { version: 3, up: (c) => withDefaults(c, { idle: 'steer' }) },
  ],
};

/** The version a config of `type` has after every step (1 for a type without steps). */
export function currentVersion(type: string, table: MigrationTable = MIGRATIONS): number {
  return (table[type] ?? []).reduce((v, m) => Math.max(v, m.version), 1);
}

/** The version a saved config is at: its `version` (a number or a numeric string), else 1. */
export function versionOf(config: NodeConfig): number {
  const v = typeof config.version === 'string' && config.version.trim() !== '' ? Number(config.version) : config.version;
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : 1;
}

/**
 * The config upgraded to the current version of its type: a new object (the argument is not
 * changed). A config already at (or above, from a newer release) the current version is
 * returned as it is; so is one of a type without steps.
 */
export function migrate<T extends object>(type: string, config: T, table: MigrationTable = MIGRATIONS): T {
  const steps = table[type];
  if (!steps || !config || typeof config !== 'object') return config;
  let out = config as NodeConfig;
  let version = versionOf(out);
  for (const step of [...steps].sort((a, b) => a.version - b.version)) {
    if (step.version <= version) continue;
    out = { ...step.up({ ...out }), version: step.version };
    version = step.version;
  }
  return out as T;
}

/**
 * Upgrades a node's config in place, by its `type` (properties a step removed are deleted,
 * properties it does not enumerate are kept): the runtime's copy of a node's config (which
 * carries Node-RED's hidden `_flow`) and the editor's node objects. Calls `changed(key, value)`
 * for each property whose value changed (e.g. to update the open edit dialog's input).
 * Returns the changed keys (none when it was current).
 */
export function upgrade(target: object, changed?: (key: string, value: unknown) => void, table: MigrationTable = MIGRATIONS): string[] {
  const node = target as NodeConfig;
  if (!node || typeof node.type !== 'string') return [];
  const next = migrate(node.type, node, table);
  if (next === node) return [];
  const keys: string[] = [];
  for (const key of Object.keys(node)) {
    if (!(key in next)) {
      delete node[key];
      keys.push(key);
    }
  }
  for (const key of Object.keys(next)) {
    if (node[key] !== next[key]) {
      node[key] = next[key];
      keys.push(key);
    }
  }
  if (changed) for (const key of keys) changed(key, node[key]);
  return keys;
}
