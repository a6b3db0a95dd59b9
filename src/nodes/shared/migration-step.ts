/**
 * What an upgrade step is, and the helper every step uses: the leaf that each node folder's
 * migrations.ts and ./migrations.ts (the machinery and the one table) import. It imports
 * nothing, so resources/migrations.js (bundled for the editor) needs no Node module.
 */

/** A node's saved properties, as in a flow file. */
export type NodeConfig = Record<string, unknown>;

/**
 * One upgrade: `up` turns a config of version `version - 1` into one of `version`. Every property
 * added gets a step that gives it its default explicitly, so a flow saved before it existed
 * behaves as before; a step never changes a value the flow already holds.
 */
export interface Migration {
  readonly version: number;
  up(config: NodeConfig): NodeConfig;
}

/** `config` with `defaults` for the properties it does not hold (undefined or null). */
export function withDefaults(config: NodeConfig, defaults: NodeConfig): NodeConfig {
  const out: NodeConfig = { ...config };
  for (const key of Object.keys(defaults)) {
    if (out[key] === undefined || out[key] === null) out[key] = defaults[key];
  }
  return out;
}

/** The power limits of the steering nodes (site steer, schedule). */
const POWER_LIMITS = ['maxEssPower', 'maxCurtailment', 'maxGridPower', 'maxGridLimit'];

/**
 * `config` with each power limit that a flow saved before limits were on by default held as
 * "no limit" (not set, empty or 0) turned into "none", which keeps it off: an empty limit now
 * means the site's rating. The node warns at deploy that it steers without a limit.
 */
export function keepNoLimit(config: NodeConfig): NodeConfig {
  const out: NodeConfig = { ...config };
  for (const key of POWER_LIMITS) {
    const limit = out[key];
    if (
      limit === undefined ||
      limit === null ||
      (typeof limit === 'string' && limit.trim() === '') ||
      Number(limit) === 0
    )
      out[key] = 'none';
  }
  return out;
}
