/**
 * Config node `ems-partner-config`: one API runtime (client, coalescer, steering queue,
 * poll scheduler) shared by every node that uses it. Pushes its connection state to each
 * user node, and closes everything on redeploy. Settings the runtime refuses (a number out of
 * range, a bad path, …) are reported at deploy (node.error) and to every node that uses it.
 * Its catalog holds the status texts every node shares (status.ts).
 *
 * Its request budget (runtime/budget.ts) is kept by its id across redeploys; removing the node
 * forgets it. The budget's warning (80 % of a cap) goes to every user node, as the connection
 * state does.
 */
import { registerAdminRoutes } from './admin-routes';
import {
  budgets,
  type BudgetWarning,
  type ConfigProps,
  createRuntime,
  isInsecureRemote,
  type Runtime,
  setSimulatorLog,
  usesSimulator,
} from '../../runtime';
import { type ConfigNode, CREDENTIALS, type RED, upgrade, type UserNode, useSharedTexts } from '../shared';

export = function (RED: RED): void {
  useSharedTexts(RED);

  function EmsPartnerConfigNode(this: ConfigNode, config: ConfigProps & { id: string }) {
    upgrade(config); // Node-RED hands each node its own copy of the saved config
    RED.nodes.createNode(this, config);
    const node = this;
    node.props = config;
    const users = new Set<UserNode>();
    let closed = false;
    let unsubscribe: (() => void) | undefined;
    let unwarn: (() => void) | undefined;
    let warning: BudgetWarning | null = null;
    let runtime: Runtime | undefined;

    if (!usesSimulator(config) && isInsecureRemote(config.baseUrl)) {
      node.warn(`baseUrl uses http:// to a remote host: keys and steering travel in clear text. Use https://.`);
    }

    const ready: Promise<Runtime> = createRuntime(config, node.credentials ?? {}, (err) => node.error(err), {
      budgetId: config.id,
    }).then((rt) => {
      if (closed) {
        void rt.close();
        throw new Error('config node closed');
      }
      runtime = rt;
      unsubscribe = rt.client.onState((s) => users.forEach((u) => u.onConnectionState(s)));
      const warn = (w: BudgetWarning | null) => {
        warning = w;
        users.forEach((u) => u.onBudget?.(w));
      };
      unwarn = rt.budget.onWarning(warn);
      if (rt.budget.currentWarning) warn(rt.budget.currentWarning);
      return rt;
    });
    // A setting the runtime refuses (e.g. a bad path): reported at deploy, and to each user node when it asks.
    ready.catch((err) => {
      if (!closed) node.error(err);
    });

    node.runtime = () => ready;
    node.register = (u) => {
      users.add(u);
      if (warning) u.onBudget?.(warning);
    };
    node.deregister = (u) => users.delete(u);
    node.budgetStats = () => runtime?.budget.stats();

    node.on('close', (removed, done) => {
      closed = true;
      unsubscribe?.();
      unwarn?.();
      // Counts and caps survive a redeploy; a removed config node's are forgotten.
      if (removed) budgets.forget(config.id);
      // Waits for the group to leave (its leases released, bounded by the connection's deadlines, at most 5 s),
      // so the flow deployed next takes the sites over at once instead of after the lease runs out.
      const bound = (p: Promise<void>) =>
        new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 5000);
          void p.finally(() => {
            clearTimeout(t);
            resolve();
          });
        });
      ready
        .then(
          (rt) => bound(rt.close()),
          () => undefined,
        )
        .finally(() => done());
    });
  }

  RED.nodes.registerType('ems-partner-config', EmsPartnerConfigNode, { credentials: CREDENTIALS });
  registerAdminRoutes(RED);
  // The built-in simulator's URL, logged once when it starts (npm start shows it from this line).
  setSimulatorLog((text) => RED.log.info(text));
};
