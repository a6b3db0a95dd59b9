/**
 * `ems-device-read`: reads measurements of a device (single, map, list) or lists devices,
 * on input or by polling. Thin wiring: the node's state and work are its controller's
 * (controller.ts); the reading is done by the shared ReadCoalescer. A list of devices
 * (msg.deviceReference an array, or the device setting a JSON array) is a fleet read: one
 * message for the whole list (fleet.ts).
 */
import type * as Shared from '../shared';
import type { Node, RED } from '../shared';
import type * as Controller from './controller';
import type { DeviceReadProps } from './controller';

export = function (RED: RED): void {
  function EmsDeviceReadNode(this: Node, saved: DeviceReadProps) {
    // Loaded with the first node made, not when Node-RED registers the type (start-up).
    const { flowNode } = require('../shared') as typeof Shared;
    const { DeviceReadController } = require('./controller') as typeof Controller;
    const flow = flowNode(RED, this, saved);
    const controller = new DeviceReadController(RED, flow);
    flow.onInput((msg) => controller.onInput(msg));
    flow.onClose(() => controller.onClose());
  }

  RED.nodes.registerType('ems-device-read', EmsDeviceReadNode);
};
