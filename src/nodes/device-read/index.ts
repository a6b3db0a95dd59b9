/**
 * `ems-device-read`: reads measurements of a device (single, map, list) or lists devices,
 * on input or by polling. Thin wiring: the node's state and work are its controller's
 * (controller.ts); the reading is done by the shared ReadCoalescer. A list of devices
 * (msg.deviceReference an array, or the device setting a JSON array) is a fleet read: one
 * message for the whole list (fleet.ts).
 */
import { flowNode, type Node, type RED } from '../shared';
import { DeviceReadController, type DeviceReadProps } from './controller';

export = function (RED: RED): void {
  function EmsDeviceReadNode(this: Node, saved: DeviceReadProps) {
    const flow = flowNode(RED, this, saved);
    const controller = new DeviceReadController(RED, flow);
    flow.onInput((msg) => controller.onInput(msg));
    flow.onClose(() => controller.onClose());
  }

  RED.nodes.registerType('ems-device-read', EmsDeviceReadNode);
};
