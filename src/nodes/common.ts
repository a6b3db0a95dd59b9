/**
 * Helpers shared by the flow nodes: typed-input evaluation, status texts, and turning any
 * failure into one Catch-able error (done(err)) with a short red status.
 */
import { ApiError, ValidationError, refusedField, formatClock } from '../api';
import type { Node, NodeMessage, NodeStatus, RED, DoneFn } from './red';

/** Evaluates a TypedInput (str, num, msg, flow, global, env, json, jsonata). */
export function evaluate(RED: RED, node: Node, value: unknown, type: string | undefined, msg: NodeMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    try {
      RED.util.evaluateNodeProperty(value, type || 'str', node, msg, (err, v) => (err ? reject(err) : resolve(v)));
    } catch (err) {
      reject(err);
    }
  });
}

/**
 * Awaits a request and attributes a refusal by the service to the field the refused value
 * came from; `pick` chooses the field from the service's message.
 */
export async function attributed<T>(p: Promise<T>, pick: (serviceMessage: string) => string): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw refusedField(err, pick((err as ApiError)?.serviceMessage ?? ''));
  }
}

/** A short reason for a red status ring (at most 40 characters). */
export function shortReason(err: unknown): string {
  let text: string;
  if (err instanceof ValidationError) text = `bad ${err.field}`;
  else if (err instanceof ApiError) text = err.status ? `HTTP ${err.status}${err.serviceMessage ? ` ${err.serviceMessage}` : ''}` : err.code;
  else text = err instanceof Error ? err.message : String(err);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** Ends a message with an error a Catch node sees; status shows the reason. */
export function fail(node: Node, done: DoneFn | undefined, err: unknown, msg?: NodeMessage): void {
  const e = err instanceof Error ? err : new Error(String(err));
  node.status({ fill: 'red', shape: 'ring', text: shortReason(e) });
  if (done) done(e);
  else node.error(e, msg);
}

export function okStatus(text: string, at = Date.now()): NodeStatus {
  const full = `${text} · ${formatClock(at)}`;
  return { fill: 'green', shape: 'dot', text: full.length > 60 ? `${full.slice(0, 59)}…` : full };
}

export function busyStatus(text = 'requesting'): NodeStatus {
  return { fill: 'blue', shape: 'dot', text };
}

/** The part of a connection state worth showing on a node, or undefined when all is well. */
export function connectionStatus(s: { state: string; until?: number; reason?: string }): NodeStatus | undefined {
  if (s.state === 'rate-limited' && s.until) return { fill: 'yellow', shape: 'ring', text: `rate limited until ${new Date(s.until).toLocaleTimeString()}` };
  if (s.state === 'error') return { fill: 'red', shape: 'ring', text: s.reason ?? 'connection error' };
  return undefined;
}

/** Rounds a value for a status text. */
export function fmt(v: unknown): string {
  return typeof v === 'number' ? String(Math.round(v * 100) / 100) : String(v);
}
