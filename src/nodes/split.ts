/**
 * Helpers shared by the flow nodes: typed-input evaluation, status texts, and turning any
 * failure into one Catch-able error (done(err)) with a short red status.
 */
import { ValidationError, formatClock } from '../protocol';
import { ApiError, refusedField } from '../client';
import type { Node, NodeMessage, NodeStatus, RED, DoneFn, SendFn } from './red';

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

/** Status texts of the client's own error codes (others show their code, e.g. ECONNREFUSED). */
const CODE_TEXT: Record<string, string> = { EMS_BAD_RESPONSE: 'bad answer', EMS_TOO_LARGE: 'answer too large', ETIMEDOUT: 'timed out' };

/** A short reason for a red status ring (at most 40 characters). */
export function shortReason(err: unknown): string {
  let text: string;
  if (err instanceof ValidationError) text = `bad ${err.field}`;
  else if (err instanceof ApiError) text = err.status ? `HTTP ${err.status}${err.serviceMessage ? ` ${err.serviceMessage}` : ''}` : (CODE_TEXT[err.code] ?? err.code);
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

/**
 * Runs a message's work and ends the message exactly once: `deliver` sends the result and
 * done() follows; a rejection, or a throw from `deliver`, becomes one done(err) with a red
 * status. Nothing escapes as an unhandled rejection.
 */
export function complete<T>(node: Node, work: Promise<T>, deliver: (v: T) => void, done: DoneFn, msg: NodeMessage): void {
  let ended = false;
  const end = (err?: unknown) => {
    if (ended) return;
    ended = true;
    if (err === undefined) done();
    else fail(node, done, err, msg);
  };
  work.then((v) => {
    deliver(v);
    end();
  }).catch((err) => end(err ?? new Error('failed')));
}

/** Sends a list of messages from one output: one as itself, several in sequence, none as nothing. */
export function sendAll(send: SendFn, msgs: NodeMessage[]): void {
  if (msgs.length === 1) send(msgs[0]);
  else if (msgs.length > 1) send([msgs]);
}

/** Default and range of the `maxSplit` node property (messages per split). */
export const MAX_SPLIT = { dflt: 1000, min: 1, max: 100_000 };

/**
 * The `maxSplit` node property: a whole number 1..100000, default 1000 when not set (flows
 * saved before it existed). Throws a ValidationError naming it for any other value.
 */
export function maxSplitOf(v: unknown): number {
  if (v === undefined || v === null || v === '') return MAX_SPLIT.dflt;
  const n = typeof v === 'number' || typeof v === 'string' ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < MAX_SPLIT.min || n > MAX_SPLIT.max) {
    throw new ValidationError('maxSplit', `must be a whole number of messages from ${MAX_SPLIT.min} to ${MAX_SPLIT.max} (default ${MAX_SPLIT.dflt}); got ${JSON.stringify(v) ?? String(v)}`);
  }
  return n;
}

/** Refuses a split into more than `max` messages (nothing is sent), naming maxSplit and the count. */
export function checkSplit(count: number, max: number, what = 'messages'): void {
  if (count > max) {
    throw new ValidationError('maxSplit', `exceeded: the read would split into ${count} ${what}; the node's maxSplit is ${max} (raise it up to ${MAX_SPLIT.max}, or choose an output that is not split)`, 'unprocessable');
  }
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
