/**
 * `ems-schedule`: plays a schedule of time slots on a site. The whole schedule is checked first
 * (protocol/schedule.ts; nothing of a refused one is sent, and a schedule playing goes on); the
 * player (runtime/schedule-player.ts) sends each run at its start through the config node's
 * SteeringQueue. What the node does: controller.ts; outputs, the kept state and the delivery
 * check in users' words: docs/nodes/ems-schedule.md.
 */
import type * as Shared from '../shared';
import type { RED } from '../shared';
import type * as Controller from './controller';
import type { ScheduleProps } from './controller';
import type { ContextNode } from './state-writer';

export = function (RED: RED): void {
  function EmsScheduleNode(this: ContextNode, saved: ScheduleProps) {
    // Loaded with the first node made, not when Node-RED registers the type (start-up).
    const { flowNode } = require('../shared') as typeof Shared;
    const { ScheduleController } = require('./controller') as typeof Controller;
    const flow = flowNode(RED, this, saved);
    const controller = new ScheduleController(RED, flow);
    // Arrival order: a stop after a schedule stops that schedule.
    flow.onInput((msg, ctx) => controller.onInput(msg, ctx), { ordered: true });
    flow.onClose((removed) => controller.onClose(removed));
  }

  RED.nodes.registerType('ems-schedule', EmsScheduleNode);
};
