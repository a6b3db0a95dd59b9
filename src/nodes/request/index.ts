/**
 * `ems-request`: a raw request to an endpoint the package does not wrap yet, through the
 * config node's client (its authentication, retries, limits and redaction; EmsClient.raw).
 * `msg.method`, `msg.path` and `msg.body` say what to send; the node's `method` and `path`
 * are the defaults when the message does not set them. The path is relative to the base URL:
 * a form that could leave it is refused before anything is sent (client/request-path.ts).
 *
 * A 2xx answer is the output (payload, statusCode, selected headers). Any other answer, and
 * every failure, ends the message in one Catch-able error; for an HTTP answer the message that
 * reaches the Catch node also carries its statusCode, headers and payload.
 *
 * Mode `stats` sends nothing: any input gives msg.payload = the config node's request
 * budget, its counts per last minute, hour and day and its caps (runtime/budget.ts), for a dashboard.
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
