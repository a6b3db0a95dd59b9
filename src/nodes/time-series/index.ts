/**
 * `ems-time-series`: reads the time series of one property over any range. Ranges over
 * 30 days are split by the core (getTimeSeriesRange) and merged in order.
 */
import { flowNode, type Node, type RED } from '../shared';
import { TimeSeriesController, type TimeSeriesProps } from './controller';

export = function (RED: RED): void {
  function EmsTimeSeriesNode(this: Node, saved: TimeSeriesProps) {
    const flow = flowNode(RED, this, saved);
    const controller = new TimeSeriesController(RED, flow);
    flow.onInput((msg) => controller.onInput(msg));
  }

  RED.nodes.registerType('ems-time-series', EmsTimeSeriesNode);
};
