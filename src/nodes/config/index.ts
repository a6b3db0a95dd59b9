/**
 * Config node `ems-partner-config`: one API runtime (client, coalescer, steering queue,
 * poll scheduler) shared by every node that uses it; what it holds and tells its user nodes
 * (connection state, refused settings, the request budget kept across redeploys): controller.ts.
 * Registering it loads only this file, the admin routes' registration and the credentials' declaration;
 * the rest (code.ts) loads with the first node made or admin request.
 */
import type { ConfigProps } from '../../runtime';
import { CREDENTIALS } from '../shared/config-node';
import type { ConfigNode, RED } from '../shared';
import { registerAdminRoutes } from './admin-routes';
import { configCode } from './code';
import type * as Controller from './controller';

/** Node-RED's runtime events, which the node API carries (not in the typed subset of shared/red.ts). */
type Events = { on(event: string, fn: (payload: { config?: { flows?: unknown } }) => void): void };

/** Event emitters already listened to, and the RED to bind on each (a test brings a new RED each time). */
const listened = new WeakMap<object, RED>();

/** Whether a flow configuration holds a node of this package (its types all start with `ems-`). */
function holdsOurNodes(flows: unknown): boolean {
  return Array.isArray(flows) && flows.some((node) => /^ems-/.test(String((node as { type?: unknown })?.type)));
}

export = function (RED: RED): void {
  function EmsPartnerConfigNode(this: ConfigNode, config: ConfigProps & { id: string }) {
    const { shared } = configCode(RED);
    const { ConfigController } = require('./controller') as typeof Controller;
    shared.upgrade(config); // Node-RED hands each node its own copy of the saved config
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
  // Flows with nodes of this package: the shared texts (the status texts every node shares, status.ts)
  // bound before any of them is made (a flow of nodes without a config node, ems-plan say, shows them in
  // the runtime's language too).
  const events = (RED as RED & { events?: Events }).events;
  if (events && typeof events.on === 'function') {
    if (!listened.has(events))
      events.on('flows:starting', (payload) => {
        const latest = listened.get(events);
        if (latest && holdsOurNodes(payload?.config?.flows)) configCode(latest);
      });
    listened.set(events, RED);
  }
};
