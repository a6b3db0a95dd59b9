/**
 * `ems-request`: a raw request to an endpoint the package does not wrap yet, through the config node's client
 * (its authentication, retries, limits and redaction; EmsClient.raw). Wiring only: controller.ts sends, and a
 * path that could leave the base URL is refused before anything is sent (client/request-path.ts). Mode
 * `stats` answers the config node's request budget instead. What users see: docs/nodes/ems-request.md.
 */
import type * as Shared from '../shared';
import type { Node, RED } from '../shared';
import type * as Controller from './controller';
import type { RequestProps } from './controller';

export = function (RED: RED): void {
  function EmsRequestNode(this: Node, saved: RequestProps) {
    // Loaded with the first node made, not when Node-RED registers the type (start-up).
    const { flowNode } = require('../shared') as typeof Shared;
    const { RequestController } = require('./controller') as typeof Controller;
    const flow = flowNode(RED, this, saved);
    const controller = new RequestController(flow);
    flow.onInput((msg, ctx) => controller.onInput(msg, ctx));
  }

  RED.nodes.registerType('ems-request', EmsRequestNode);
};
