/**
 * The Node-RED runtime the runtime tests load: the devDependency (4.1), or the package
 * directory in NODE_RED_PATH (scripts/test-node-red-5.js sets it to Node-RED 5). Init the test
 * helper with `nodeRedPath` and load core nodes with `coreNode()`, so one suite runs on both.
 */
import path from 'node:path';

/** The node-red package directory. */
export const nodeRedDir: string = process.env.NODE_RED_PATH
  ? path.resolve(process.env.NODE_RED_PATH)
  : path.dirname(require.resolve('node-red/package.json'));

/** Its main file: what `helper.init()` takes. */
export const nodeRedPath: string = require.resolve(nodeRedDir);

/** Its version, e.g. "4.1.15" or "5.0.7". */
export const nodeRedVersion: string = require(path.join(nodeRedDir, 'package.json')).version;

/** The @node-red/nodes directory that belongs to that runtime. */
export const coreNodesDir: string = path.dirname(
  require.resolve('@node-red/nodes/package.json', { paths: [nodeRedDir] }),
);

/** A core node module of that runtime, e.g. `coreNode('common/20-inject.js')`. */
export function coreNode(file: string): unknown {
  return require(path.join(coreNodesDir, 'core', file));
}
