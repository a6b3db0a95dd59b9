/**
 * `ems-site-steer`: turns messages into steering requests for a site, a fleet of sites or a
 * portfolio. This file wires the node into Node-RED; what it does is controller.ts.
 */
import { flowNode, type Node, type RED } from '../shared';
import { SiteSteerController } from './controller';
import type { SteerProps } from './sender';

export = function (RED: RED): void {
  function EmsSiteSteerNode(this: Node, saved: SteerProps) {
    const wrapper = flowNode(RED, this, saved);
    const controller = new SiteSteerController(RED, wrapper);
    wrapper.onInput((msg, ctx) => controller.onInput(msg, ctx), { ordered: true });
    wrapper.onClose(() => controller.onClose());
  }

  RED.nodes.registerType('ems-site-steer', EmsSiteSteerNode);
};
