/**
 * How a flow node ends each message: exactly once, with its output(s) or with one error a
 * Catch node sees (done(err)) and a red status naming the reason. Refusals by the service
 * are attributed to the node field the refused value came from.
 */
import { refusedField, type ApiError } from '../../client';
import type { Status } from './status';
import type { DoneFn, Node, NodeMessage, SendFn } from './red';

/** The node and its status: what ending a message needs. */
export interface Ends {
  node: Pick<Node, 'error'>;
  status: Pick<Status, 'error'>;
}

/**
 * Awaits a request and attributes a refusal by the service to the field the refused value
 * came from; `pick` chooses the field from the service's message.
 */
export function attributed<T>(p: Promise<T>, pick: (serviceMessage: string) => string): Promise<T> {
  return p.then(undefined, (err: unknown) => {
    throw refusedField(err, pick((err as ApiError)?.serviceMessage ?? ''));
  });
}

/** Ends a message with an error a Catch node sees (node.error without `done`); status shows the reason. */
export function fail(f: Ends, done: DoneFn | undefined, err: unknown, msg?: NodeMessage): void {
  const e = err instanceof Error ? err : new Error(String(err));
  f.status.error(e);
  if (done) done(e);
  else f.node.error(e, msg);
}

/**
 * Runs a message's work and ends the message exactly once: `deliver` sends the result and
 * done() follows; a rejection, or a throw from `deliver`, becomes one done(err) with a red
 * status. Nothing escapes as an unhandled rejection.
 */
export function complete<T>(f: Ends, work: Promise<T>, deliver: (v: T) => void, done: DoneFn, msg: NodeMessage): void {
  let ended = false;
  const end = (err?: unknown) => {
    if (ended) return;
    ended = true;
    if (err === undefined) done();
    else fail(f, done, err, msg);
  };
  work.then((v) => {
    deliver(v);
    end();
  }).catch((err) => end(err ?? new Error('failed')));
}

/**
 * An output message: a copy of `msg` with `fields` set, as `{ ...msg, ...fields }` gives it
 * (same keys, same order). Object.assign makes it: V8 makes a spread followed by more
 * properties more than ten times slower (about 0.7 µs a message). A message with an own
 * "__proto__" key is copied by spread, so that key stays a plain property of the copy.
 */
export function copyWith(msg: NodeMessage, fields: NodeMessage): NodeMessage {
  if (Object.prototype.hasOwnProperty.call(msg, '__proto__')) return { ...msg, ...fields };
  return Object.assign({}, msg, fields);
}

/** Sends a list of messages from one output: one as itself, several in sequence, none as nothing. */
export function sendAll(send: SendFn, msgs: NodeMessage[]): void {
  if (msgs.length === 1) send(msgs[0]);
  else if (msgs.length > 1) send([msgs]);
}
