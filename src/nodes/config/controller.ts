/**
 * What an `ems-partner-config` node holds (index.ts wires it): its runtime, made once from its
 * settings; the user nodes registered with it, told of the connection state and the request
 * budget's warning; and closing, which waits (bounded) for the runtime to close.
 */
import {
  budgets,
  type BudgetStats,
  type BudgetWarning,
  type ConfigProps,
  createRuntime,
  isInsecureRemote,
  type Runtime,
  usesSimulator,
} from '../../runtime';
import type { ConfigNode, UserNode } from '../shared';

/** How long closing waits for the runtime to close (its group to leave, leases released). */
const CLOSE_WAIT_MS = 5000;

export class ConfigController {
  /** The nodes that use this config node (told of the connection state and the budget's warning). */
  private readonly users = new Set<UserNode>();
  /** Set when the node closes: a runtime made after that is closed at once. */
  private closed = false;
  private unsubscribe: (() => void) | undefined;
  private unwarn: (() => void) | undefined;
  /** The budget's warning in force, handed to each node that registers. */
  private warning: BudgetWarning | null = null;
  /** The runtime once made (for its budget's stats). */
  private made: Runtime | undefined;
  /** The runtime, or why the settings are unusable. */
  private readonly ready: Promise<Runtime>;

  constructor(
    private readonly node: ConfigNode,
    private readonly config: ConfigProps & { id: string },
  ) {
    if (!usesSimulator(config) && isInsecureRemote(config.baseUrl)) {
      node.warn(`baseUrl uses http:// to a remote host: keys and steering travel in clear text. Use https://.`);
    }
    this.ready = createRuntime(config, node.credentials ?? {}, (err) => node.error(err), {
      budgetId: config.id,
    }).then((runtime) => this.started(runtime));
    // A setting the runtime refuses (e.g. a bad path): reported at deploy, and to each user node when it asks.
    this.ready.catch((err) => {
      if (!this.closed) node.error(err);
    });
  }

  runtime(): Promise<Runtime> {
    return this.ready;
  }

  register(user: UserNode): void {
    this.users.add(user);
    if (this.warning) user.onBudget?.(this.warning);
  }

  deregister(user: UserNode): void {
    this.users.delete(user);
  }

  budgetStats(): BudgetStats | undefined {
    return this.made?.budget.stats();
  }

  onClose(removed: boolean, done: () => void): void {
    this.closed = true;
    this.unsubscribe?.();
    this.unwarn?.();
    // Counts and caps survive a redeploy; a removed config node's are forgotten.
    if (removed) budgets.forget(this.config.id);
    // Waits for the group to leave (its leases released, bounded by the connection's deadlines, at most 5 s),
    // so the flow deployed next takes the sites over at once instead of after the lease runs out.
    this.ready
      .then(
        (runtime) => bounded(runtime.close()),
        () => undefined,
      )
      .finally(() => done());
  }

  /** The runtime made: the users told of its connection state and budget warnings from now on. */
  private started(runtime: Runtime): Runtime {
    if (this.closed) {
      void runtime.close();
      throw new Error('config node closed');
    }
    this.made = runtime;
    this.unsubscribe = runtime.client.onState((s) => this.users.forEach((u) => u.onConnectionState(s)));
    const warn = (warning: BudgetWarning | null) => {
      this.warning = warning;
      this.users.forEach((user) => user.onBudget?.(warning));
    };
    this.unwarn = runtime.budget.onWarning(warn);
    if (runtime.budget.currentWarning) warn(runtime.budget.currentWarning);
    return runtime;
  }
}

/** Settles when `work` does, or after CLOSE_WAIT_MS at most. */
function bounded(work: Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, CLOSE_WAIT_MS);
    void work.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
