/** The interface flow nodes see of an `ems-partner-config` node. */
import type { ConnectionState } from '../client';
import type { ConfigProps, Runtime } from '../runtime/runtime';
import type { Node } from './red';

export interface UserNode {
  onConnectionState(s: ConnectionState): void;
}

export interface ConfigNode extends Node {
  props: ConfigProps;
  /** The shared runtime; rejects with a ValidationError if the configuration is unusable. */
  runtime(): Promise<Runtime>;
  register(user: UserNode): void;
  deregister(user: UserNode): void;
}

export const CREDENTIALS = { apiKey: { type: 'password' }, clientSecret: { type: 'password' } };

