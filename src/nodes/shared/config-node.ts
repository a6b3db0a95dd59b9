/** The interface flow nodes see of an `ems-partner-config` node. */
import type { ConnectionState } from '../../client';
import type { BudgetStats, BudgetWarning, ConfigProps, Runtime } from '../../runtime';
import type { Node } from './node-red-api';

export interface UserNode {
  onConnectionState(s: ConnectionState): void;
  /** The request budget's warning (80 % of a cap or more), or null when it ends. */
  onBudget?(w: BudgetWarning | null): void;
}

export interface ConfigNode extends Node {
  props: ConfigProps;
  /** The shared runtime; rejects with a ValidationError if the configuration is unusable. */
  runtime(): Promise<Runtime>;
  register(user: UserNode): void;
  deregister(user: UserNode): void;
  /** The request budget's counts and caps (undefined before the runtime is made, or when the settings are unusable). */
  budgetStats?(): BudgetStats | undefined;
}

export const CREDENTIALS = {
  apiKey: { type: 'password' },
  clientSecret: { type: 'password' },
  redisPassword: { type: 'password' },
};
