/**
 * What every flow node repeats, once: its saved properties upgraded (migrations.ts), the
 * Node-RED node created, its Status, the config node it uses (a red "no server configured"
 * ring when there is none), registering with it to show its connection state and its request
 * budget's warning, an AbortSignal for the node's work, and closing: abort, deregister, clear
 * the status, then the node's own close work, then done().
 */
import { ValidationError } from '../../protocol';
import type { Runtime } from '../../runtime';
import { upgrade } from './migrations';
import { Status, translator } from './status';
import type { ConfigNode, UserNode } from './config-node';
import type { Node, RED } from './red';

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
}

/**
 * Sets up a flow node from its saved properties (upgraded in place to the current version of
 * its type): call it first in the node's constructor, instead of RED.nodes.createNode.
 */
export function flowNode<P extends { server?: string }>(RED: RED, node: Node, props: P): FlowNode<P> {
  const type = (props as { type?: string }).type ?? '';
  upgrade(props); // Node-RED hands each node its own copy of the saved config
  RED.nodes.createNode(node, props);
  (node as Node & { props: P }).props = props;
  const status = new Status(node, translator(RED, type));
  const closer = new AbortController();
  const server = (props.server ? RED.nodes.getNode(props.server) as ConfigNode | null : null) ?? null;
  const user: UserNode = { onConnectionState: (s) => status.connection(s), onBudget: (w) => status.budget(w) };
  if (server) server.register(user);
  else status.noServer();

  let own: ((removed: boolean) => unknown) | undefined;
  node.on('close', (removed, done) => {
    closer.abort();
    server?.deregister(user);
    status.close();
    let work: unknown;
    try {
      work = own?.(removed);
    } catch (err) {
      node.error(err);
    }
    Promise.resolve(work).catch((err) => node.error(err)).finally(() => done());
  });

  const configNode = (): ConfigNode => {
    if (!server) throw new ValidationError('server', 'must be an ems-partner-config node');
    return server;
  };
  return {
    node, props, status, server, signal: closer.signal, configNode,
    runtime: async () => configNode().runtime(),
    onClose: (work) => { own = work; },
  };
}
