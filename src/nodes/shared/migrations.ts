/**
 * Upgrades of saved node properties (HA-websocket style): the machinery, and the one table
 * assembled from each node's steps (src/nodes/<node>/migrations.ts). Runs in the runtime (first
 * thing in each node's constructor) and in the editor: this file and the step files import no
 * Node module, so the build serves the same table to the browser as resources/migrations.js
 * (docs/architecture.md, Migrations).
 */

import type { Migration, NodeConfig } from './migration-step';
// Each node's steps live in its folder; the one table is assembled here.
import { STEPS as CONFIG_STEPS } from '../config/migrations';
import { STEPS as DEVICE_READ_STEPS } from '../device-read/migrations';
import { STEPS as TIME_SERIES_STEPS } from '../time-series/migrations';
import { STEPS as SITE_STEER_STEPS } from '../site-steer/migrations';
import { STEPS as REQUEST_STEPS } from '../request/migrations';
import { STEPS as PLAN_STEPS } from '../plan/migrations';
import { STEPS as SCHEDULE_STEPS } from '../schedule/migrations';

export type { NodeConfig } from './migration-step';

export type MigrationTable = Readonly<Record<string, readonly Migration[]>>;

/** The upgrade steps of every node type, in order of version. */
export const MIGRATIONS: MigrationTable = {
  'ems-partner-config': CONFIG_STEPS,
  'ems-device-read': DEVICE_READ_STEPS,
  'ems-time-series': TIME_SERIES_STEPS,
  'ems-site-steer': SITE_STEER_STEPS,
  'ems-request': REQUEST_STEPS,
  'ems-plan': PLAN_STEPS,
  'ems-schedule': SCHEDULE_STEPS,
};

/** The version a config of `type` has after every step (1 for a type without steps). */
export function currentVersion(type: string, table: MigrationTable = MIGRATIONS): number {
  return (table[type] ?? []).reduce((v, m) => Math.max(v, m.version), 1);
}

/** The version a saved config is at: its `version` (a number or a numeric string), else 1. */
export function versionOf(config: NodeConfig): number {
  const version =
    typeof config.version === 'string' && config.version.trim() !== '' ? Number(config.version) : config.version;
  return typeof version === 'number' && Number.isInteger(version) && version >= 1 ? version : 1;
}

/**
 * The config upgraded to the current version of its type: a new object (the argument is not
 * changed). Applies, in order, every step above the config's `version` (none: version 1,
 * release 0.1.0), so a step never runs twice. A config already at (or above, from a newer
 * release) the current version is returned as it is; so is one of a type without steps.
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
 * carries Node-RED's hidden `_flow`) and the editor's node objects (each panel applies it when a
 * node is added to the workspace: load, import, paste; and when its edit dialog opens). Calls `changed(key, value)`
 * for each property whose value changed (e.g. to update the open edit dialog's input).
 * Returns the changed keys (none when it was current).
 */
export function upgrade(
  target: object,
  changed?: (key: string, value: unknown) => void,
  table: MigrationTable = MIGRATIONS,
): string[] {
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
