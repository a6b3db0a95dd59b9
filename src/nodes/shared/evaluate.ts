/** Evaluation of a node's TypedInput properties. */
import type { Node, NodeMessage, RED } from './node-red-api';

/** Evaluates a TypedInput (str, num, msg, flow, global, env, json, jsonata); a failure rejects. */
export function evaluate(
  RED: RED,
  node: Node,
  value: unknown,
  type: string | undefined,
  msg: NodeMessage,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    try {
      RED.util.evaluateNodeProperty(value, type || 'str', node, msg, (err, v) => (err ? reject(err) : resolve(v)));
    } catch (err) {
      reject(err);
    }
  });
}
