/**
 * `ems-time-series`: reads the time series of one property over any range. Ranges over
 * 30 days are split by the core (getTimeSeriesRange) and merged in order.
 */
import type * as Shared from '../shared';
import type { Node, RED } from '../shared';
import type * as Controller from './controller';
import type { TimeSeriesProps } from './controller';

export = function (RED: RED): void {
  function EmsTimeSeriesNode(this: Node, saved: TimeSeriesProps) {
    // Loaded with the first node made, not when Node-RED registers the type (start-up).
    const { flowNode } = require('../shared') as typeof Shared;
    const { TimeSeriesController } = require('./controller') as typeof Controller;
    const flow = flowNode(RED, this, saved);
    const controller = new TimeSeriesController(RED, flow);
    flow.onInput((msg) => controller.onInput(msg));
  }

  RED.nodes.registerType('ems-time-series', EmsTimeSeriesNode);
};
