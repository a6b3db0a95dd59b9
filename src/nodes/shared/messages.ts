/**
 * How a flow node ends each message: exactly once, with its output(s) or with one error a
 * Catch node sees (done(err)) and a red status naming the reason. Refusals by the service
 * are attributed to the node field the refused value came from. The input pipeline that
 * does it for every node is the scaffold's `onInput`; here are its answers and its parts.
 */
import { refusedField, type ApiError } from '../../client';
import type { Status } from './status';
import type { DoneFn, Node, NodeMessage, SendFn } from './node-red-api';

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
  const error = err instanceof Error ? err : new Error(String(err));
  f.status.error(error);
  if (done) done(error);
  else f.node.error(error, msg);
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

const REPLY = Symbol('reply');

/**
 * An answer that sends its messages AND ends the message in an error a Catch node sees (a
 * fleet of which some members failed). The status is the handler's to set: the error is not
 * shown by the pipeline. Made by `reply`; a plain message can never look like one.
 */
export interface Reply {
  readonly [REPLY]: true;
  readonly msgs: NodeMessage[];
  readonly error?: Error;
}

/** Messages to send, and the error the message then ends with (none: done()). */
export function reply(msgs: NodeMessage | NodeMessage[], error?: Error): Reply {
  return { [REPLY]: true, msgs: Array.isArray(msgs) ? msgs : [msgs], error };
}

/**
 * What an input handler answers a message with, all from output 1: a message, several (sent in
 * sequence), nothing (undefined: the message ends with done()), or a `reply`.
 */
export type Answer = NodeMessage | NodeMessage[] | Reply | undefined | void;

/** The messages of an answer and the error it ends with. */
export function partsOf(answer: Answer): { msgs: NodeMessage[]; error?: Error } {
  if (answer === undefined || answer === null) return { msgs: [] };
  if (Array.isArray(answer)) return { msgs: answer };
  if ((answer as Reply)[REPLY] === true) return answer as Reply;
  return { msgs: [answer as NodeMessage] };
}
