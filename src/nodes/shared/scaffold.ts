/**
 * What every flow node repeats, once: its saved properties upgraded (migrations.ts), the
 * Node-RED node created, its Status, the config node it uses (a red "no server configured"
 * ring when there is none; `ems-plan` uses none), registering with it to show its connection
 * state and its request budget's warning, an AbortSignal for the node's work, closing (abort,
 * deregister, clear the status, then the node's own close work, then done()), and the one input
 * pipeline (`onInput`), which ends each message exactly once (Node-RED ≥ 1.0 send/done).
 */
import { setMaxListeners } from 'node:events';
import { accepts, EmsError, INPUTS, LIMITS, numberOf, refusedProperties, ValidationError } from '../../protocol';
import type { Runtime } from '../../runtime';
import { upgrade } from './migrations';
import { type Answer, copyWith, fail, partsOf, sendAll } from './messages';
import { Status, translator } from './status';
import type { ConfigNode, UserNode } from './config-node';
import type { DoneFn, Node, NodeMessage, RED, SendFn } from './node-red-api';

/** What an input handler gets besides the message. */
export interface InputContext {
  /** Aborted when the node closes (the node's signal): hand it to requests. */
  signal: AbortSignal;
  /** An output message: a copy of the input with `fields` set (messages.ts copyWith). */
  copy(fields: NodeMessage): NodeMessage;
  /**
   * With `ordered`: lets the next message start before this one ends (e.g. once its request is
   * queued, so it cannot be overtaken). Ending releases too; a second call does nothing.
   */
  release(): void;
}

/** A node's work for one message: its answer (messages.ts `Answer`), or a throw/rejection: the message fails. */
type InputHandler = (msg: NodeMessage, ctx: InputContext) => Answer | Promise<Answer>;

interface InputOptions {
  /**
   * Messages are taken one at a time, in arrival order: each starts once the one before ended
   * or called `release()` (a stop after a schedule stops that schedule). Default: each at once.
   */
  ordered?: boolean;
}

export interface FlowNode<P> {
  node: Node;
  /** The node's properties, upgraded to the current version (also on the node as `props`). */
  props: P;
  status: Status;
  /** The config node, or null when none is configured. */
  server: ConfigNode | null;
  /** Aborted when the node closes. */
  signal: AbortSignal;
  /** The config node; throws a ValidationError naming `server` when none is configured. */
  configNode(): ConfigNode;
  /** The config node's shared runtime (rejects when there is none, or its settings are unusable). */
  runtime(): Promise<Runtime>;
  /** The node's own close work (may return a promise); runs after the common part, before done(). */
  onClose(work: (removed: boolean) => unknown): void;
  /**
   * The node's input: `handler` answers each message (synchronously or with a promise), in
   * arrival order where the node needs it. Its answer goes out from output 1 (unless the node
   * closed meanwhile), then done(); a throw or rejection becomes one done(err) (Catch nodes) and a
   * red status with its short reason (a ValidationError names its field). A handler that answers
   * synchronously is answered at once.
   */
  onInput(handler: InputHandler, options?: InputOptions): void;
  /**
   * A message of the node's own, without input (a timer): `work`'s answer is sent from output 1
   * unless the node closed; a failure shows red and reaches Catch nodes with `msg` ({} without).
   */
  emit(work: InputHandler, msg?: NodeMessage): void;
}

export interface FlowNodeOptions {
  /** false: the node uses no config node (no `server`, no "no server configured" ring), e.g. ems-plan. */
  configNode?: boolean;
}

/**
 * Sets up a flow node from its saved properties (upgraded in place to the current version of
 * its type): call it first in the node's constructor, instead of RED.nodes.createNode.
 */
export function flowNode<P extends object>(RED: RED, node: Node, props: P, options: FlowNodeOptions = {}): FlowNode<P> {
  const type = (props as { type?: string }).type ?? '';
  upgrade(props as Record<string, unknown>); // Node-RED hands each node its own copy of the saved config
  RED.nodes.createNode(node, props);
  (node as Node & { props: P }).props = props;
  const status = new Status(node, translator(RED, type));
  const closer = new AbortController();
  // Each read in flight listens on it until it settles (a poll of many devices: hundreds), so
  // Node.js' leak warning at 11 listeners would be a false alarm in the user's log.
  setMaxListeners(0, closer.signal);
  const uses = options.configNode !== false;
  const id = (props as { server?: string }).server;
  const server = (uses && id ? (RED.nodes.getNode(id) as ConfigNode | null) : null) ?? null;
  const user: UserNode = { onConnectionState: (s) => status.connection(s), onBudget: (w) => status.budget(w) };
  if (server) server.register(user);
  else if (uses) status.noServer();

  let own: ((removed: boolean) => unknown) | undefined;
  const common = () => {
    closer.abort();
    server?.deregister(user);
    status.close();
  };
  closeWith(node, common, () => own);
  const configNode = (): ConfigNode => {
    if (!server) throw new ValidationError('server', 'must be an ems-partner-config node');
    return server;
  };
  const ends = { node, status };
  return {
    node,
    props,
    status,
    server,
    signal: closer.signal,
    configNode,
    runtime: async () => configNode().runtime(),
    onClose: (work) => {
      own = work;
    },
    onInput: (handler, opts = {}) => listenInput(ends, closer.signal, server, handler, opts),
    emit: (work, msg = {}) => answer(ends, closer.signal, work, msg, (m) => node.send(m), undefined, noRelease),
  };
}

const noRelease = (): void => undefined;

/** Closing: the common part (`common`), then the node's own close work (`own()`, may return a promise), then done(). */
function closeWith(node: Node, common: () => void, own: () => ((removed: boolean) => unknown) | undefined): void {
  node.on('close', (removed, done) => {
    common();
    let work: unknown;
    try {
      work = own()?.(removed);
    } catch (err) {
      node.error(err);
    }
    Promise.resolve(work)
      .catch((err) => node.error(err))
      .finally(() => done());
  });
}

/** The node's input listener: the deep/huge check, the waiting limit, arrival order with `ordered`, then answer(). */
function listenInput(
  ends: { node: Node; status: Status },
  signal: AbortSignal,
  server: ConfigNode | null,
  handler: InputHandler,
  options: InputOptions,
): void {
  const { node, status } = ends;
  const turns = options.ordered ? new Turns() : undefined;
  const limit = waitingLimit(server);
  let waiting = 0;
  node.on('input', (msg: NodeMessage, send: SendFn | undefined, done: DoneFn | undefined) => {
    if (refusedDeep(ends, msg, done)) return;
    if (waiting >= limit) {
      status.dropped(limit);
      end(ends, done, new WaitingLimitError(limit, !!server), msg);
      return;
    }
    waiting++;
    let ended = false;
    // Counts the message out when it ends, whichever way (answer() ends it exactly once).
    const counted: DoneFn = (err) => {
      if (!ended) waiting--;
      ended = true;
      end(ends, done, err, msg);
    };
    const out: SendFn = send ?? ((m) => node.send(m)); // Node-RED before 1.0 passes neither
    if (!turns) return answer(ends, signal, handler, msg, out, counted, noRelease);
    turns.take((release) => answer(ends, signal, handler, msg, out, counted, release));
  });
}

/** The most messages a node holds at once: its config node's `maxWaiting` (the table's default without one, or for a value the runtime refuses at deploy). */
function waitingLimit(server: ConfigNode | null): number {
  const limit = LIMITS.maxWaiting;
  const configured = numberOf(server?.props?.maxWaiting, limit.dflt);
  return accepts(limit, configured) ? configured : limit.dflt;
}

/** A message refused because the node holds as many as its limit allows (the config node's `maxWaiting`). */
class WaitingLimitError extends EmsError {
  readonly code = 'EMS_TOO_MANY_WAITING';
  declare readonly field: string;
  constructor(limit: number, configurable: boolean) {
    super(
      `message refused: ${limit} messages are waiting in this node already (maxWaiting${configurable ? ' of the config node: raise it there' : ', the default'}); ` +
        'slow the flow down or raise the limit',
    );
    this.name = 'WaitingLimitError';
    (this as { field: string }).field = 'maxWaiting';
  }
}

/** Ends a message: done(err) or done(), or (Node-RED before 1.0, no done) node.error for an error. */
function end(f: Parameters<typeof fail>[0], done: DoneFn | undefined, err: Error | undefined, msg: NodeMessage): void {
  if (done) done(err);
  else if (err) f.node.error(err, msg);
}

/**
 * Refuses a message with a property nested deeper than INPUTS.maxDepth, or holding an array of
 * more than INPUTS.maxElements elements, before anything else: the error names the property,
 * and the property is replaced in the message (which Node-RED then copies for Catch and Complete
 * nodes, recursively: a deep value would overflow its stack, a huge one block it for seconds).
 */
function refusedDeep(f: Parameters<typeof fail>[0], msg: NodeMessage, done: DoneFn | undefined): boolean {
  if (!msg || typeof msg !== 'object') return false;
  if (flat(msg)) return false;
  const refused = refusedProperties(msg, INPUTS.maxDepth, INPUTS.maxElements);
  if (refused.length === 0) return false;
  for (const { key, problem } of refused) {
    msg[key] =
      problem.kind === 'deep'
        ? `[refused: nested deeper than ${INPUTS.maxDepth} levels]`
        : `[refused: an array of ${problem.length} elements]`;
  }
  const { key, problem } = refused[0];
  const err =
    problem.kind === 'deep'
      ? new ValidationError(
          `msg.${key}`,
          `is nested deeper than ${INPUTS.maxDepth} levels (objects and arrays; at most ${INPUTS.maxDepth}): refused before any other work`,
        )
      : new ValidationError(
          `msg.${key}`,
          `holds an array of ${problem.length} elements (at most ${INPUTS.maxElements} in one array of a message; no node of this package reads more): refused before any other work`,
        );
  fail(f, done, err, msg);
  return true;
}

/** Whether no property of `msg` holds an object (nothing to walk: the common message of a few plain values). */
function flat(msg: NodeMessage): boolean {
  for (const key in msg) {
    const value = msg[key];
    if (typeof value === 'object' && value !== null) return false;
  }
  return true;
}

/** Arrival order: one message at a time; the next starts (a microtask later) once the one before released its turn. */
class Turns {
  private busy = false;
  /** The jobs waiting, from `head` on: Array.shift moves every element, N² over a burst of N. */
  private waiting: Array<(() => void) | undefined> = [];
  private head = 0;

  take(job: (release: () => void) => void): void {
    let released = false;
    const run = () =>
      job(() => {
        if (released) return;
        released = true;
        this.next();
      });
    if (this.busy) this.waiting.push(run);
    else {
      this.busy = true;
      run();
    }
  }

  private next(): void {
    if (this.head === this.waiting.length) {
      this.busy = false;
      return;
    }
    const job = this.waiting[this.head];
    this.waiting[this.head++] = undefined;
    // Drops the taken part once it is half the array (each job is moved at most once more).
    if (this.head >= 1024 && this.head * 2 >= this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
    queueMicrotask(job!);
  }
}

/**
 * Runs `handler` on one message and ends it exactly once: its messages sent (none once
 * `signal` aborted), then done() or the reply's done(err); a throw, a rejection or a failing
 * send: fail() (red status, done(err)). The turn is released before anything is sent.
 */
function answer(
  f: Parameters<typeof fail>[0],
  signal: AbortSignal,
  handler: InputHandler,
  msg: NodeMessage,
  send: SendFn,
  done: DoneFn | undefined,
  release: () => void,
): void {
  const failed = (err: unknown) => {
    release();
    fail(f, done, err ?? new Error('failed'), msg);
  };
  const finish = (a: Answer) => {
    release();
    const { msgs, error } = partsOf(a);
    try {
      if (!signal.aborted) sendAll(send, msgs);
    } catch (err) {
      fail(f, done, err, msg);
      return;
    }
    if (!error) done?.();
    else if (done) done(error);
    else f.node.error(error, msg);
  };
  let outcome: Answer | Promise<Answer>;
  try {
    outcome = handler(msg, { signal, copy: (fields) => copyWith(msg, fields), release });
  } catch (err) {
    failed(err);
    return;
  }
  if (outcome instanceof Promise) outcome.then(finish, failed);
  else finish(outcome as Answer);
}
