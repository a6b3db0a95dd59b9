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
import { ConfigController } from './controller';
import { type ConfigProps, setSimulatorLog } from '../../runtime';
import { type ConfigNode, CREDENTIALS, type RED, upgrade, useSharedTexts } from '../shared';

export = function (RED: RED): void {
  useSharedTexts(RED);

  function EmsPartnerConfigNode(this: ConfigNode, config: ConfigProps & { id: string }) {
    upgrade(config); // Node-RED hands each node its own copy of the saved config
    RED.nodes.createNode(this, config);
    this.props = config;
    const controller = new ConfigController(this, config);
    this.runtime = () => controller.runtime();
    this.register = (user) => controller.register(user);
    this.deregister = (user) => controller.deregister(user);
    this.budgetStats = () => controller.budgetStats();
    this.on('close', (removed, done) => controller.onClose(removed, done));
  }

  RED.nodes.registerType('ems-partner-config', EmsPartnerConfigNode, { credentials: CREDENTIALS });
  registerAdminRoutes(RED);
  // The built-in simulator's URL, logged once when it starts (npm start shows it from this line).
  setSimulatorLog((text) => RED.log.info(text));
};
