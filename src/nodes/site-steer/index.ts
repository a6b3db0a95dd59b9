/**
 * `ems-site-steer`: turns messages into steering requests for a site, a fleet of sites or a
 * portfolio. This file wires the node into Node-RED; what it does is controller.ts.
 */
import type * as Shared from '../shared';
import type { Node, RED } from '../shared';
import type * as Controller from './controller';
import type { SteerProps } from './sender';

export = function (RED: RED): void {
  function EmsSiteSteerNode(this: Node, saved: SteerProps) {
    // Loaded with the first node made, not when Node-RED registers the type (start-up).
    const { flowNode } = require('../shared') as typeof Shared;
    const { SiteSteerController } = require('./controller') as typeof Controller;
    const flow = flowNode(RED, this, saved);
    const controller = new SiteSteerController(RED, flow);
    flow.onInput((msg, ctx) => controller.onInput(msg, ctx), { ordered: true });
    flow.onClose(() => controller.onClose());
  }

  RED.nodes.registerType('ems-site-steer', EmsSiteSteerNode);
};
