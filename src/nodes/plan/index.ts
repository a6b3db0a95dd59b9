/**
 * `ems-plan` ("price plan"): the battery planner (src/plan, planBattery) as a node. Prices alone
 * go to the price-only planner, as before byte for byte; anything of the site model (import and
 * export prices or formulas, PV and load forecasts, grid limits, efficiencies, wear, a SOC target,
 * an end value, a peak cost: from the message or the node's settings) to the site planner. Pure:
 * no config node (the scaffold's `configNode: false`: no `server`), no I/O. A message of
 * prices and the current SOC becomes ONE message: `payload` the plan's slots as `ems-schedule`
 * takes them, `plan` the whole plan, `chart` series for a Dashboard 2 chart. `now` is the clock:
 * slots that ended are dropped, the one in progress starts now. Where each setting comes from:
 * message.ts; how a refusal names it: located.ts. What the node does per message: controller.ts.
 *
 * With `replan` on (replan.ts) the node keeps the last prices and plans again at each
 * quarter hour, on a fresh SOC and on a delivery report that says no or partly, and sends only
 * what changed (`msg.replan` says what). One timer per node, cleared on close.
 */
import type * as Shared from '../shared';
import type { Node, RED } from '../shared';
import type * as Controller from './controller';
import type { PlanProps } from './fields';

export = function (RED: RED): void {
  function EmsPlanNode(this: Node, saved: PlanProps) {
    // Loaded with the first node made, not when Node-RED registers the type (start-up).
    const { flowNode } = require('../shared') as typeof Shared;
    const { PlanController } = require('./controller') as typeof Controller;
    // Its saved properties upgraded in place (version 2: the site model's settings and re-planning; 3: idle; 4: grid charge and discharge); no config node.
    const flow = flowNode(RED, this, saved, { configNode: false });
    const controller = new PlanController(flow);
    // Synchronous: each message is answered (or refused) before the next one is taken.
    flow.onInput((msg) => controller.onInput(msg));
    flow.onClose(() => controller.onClose());
  }

  RED.nodes.registerType('ems-plan', EmsPlanNode);
};
