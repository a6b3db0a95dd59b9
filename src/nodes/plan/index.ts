/**
 * `ems-plan` ("price plan"): the battery planner (src/plan, planBattery) as a node, wiring only: no config
 * node, no I/O. What it does per message is in controller.ts, where each setting comes from in message.ts,
 * re-planning in replan.ts; what users see: docs/nodes/ems-plan.md.
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
