/**
 * `ems-plan` ("price plan"): the battery planner (src/plan, planBattery) as a node, wiring only: no config
 * node, no I/O. What it does per message is in controller.ts, where each setting comes from in message.ts,
 * re-planning in replan.ts; what users see: docs/nodes/ems-plan.md.
 */
import { flowNode, type Node, type RED } from '../shared';
import { PlanController } from './controller';
import type { PlanProps } from './fields';

export = function (RED: RED): void {
  function EmsPlanNode(this: Node, saved: PlanProps) {
    // Its saved properties upgraded in place (version 2: the site model's settings and re-planning; 3: idle; 4: grid charge and discharge); no config node.
    const flow = flowNode(RED, this, saved, { configNode: false });
    const controller = new PlanController(flow);
    // Synchronous: each message is answered (or refused) before the next one is taken.
    flow.onInput((msg) => controller.onInput(msg));
    flow.onClose(() => controller.onClose());
  }

  RED.nodes.registerType('ems-plan', EmsPlanNode);
};
