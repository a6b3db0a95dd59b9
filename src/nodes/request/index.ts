/**
 * `ems-request`: a raw request to an endpoint the package does not wrap yet, through the config node's client
 * (its authentication, retries, limits and redaction; EmsClient.raw). Wiring only: controller.ts sends, and a
 * path that could leave the base URL is refused before anything is sent (client/request-path.ts). Mode
 * `stats` answers the config node's request budget instead. What users see: docs/nodes/ems-request.md.
 */
import { flowNode, type Node, type RED } from '../shared';
import { RequestController, type RequestProps } from './controller';

export = function (RED: RED): void {
  function EmsRequestNode(this: Node, saved: RequestProps) {
    const flow = flowNode(RED, this, saved);
    const controller = new RequestController(flow);
    flow.onInput((msg, ctx) => controller.onInput(msg, ctx));
  }

  RED.nodes.registerType('ems-request', EmsRequestNode);
};
