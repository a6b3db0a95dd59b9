/**
 * `ems-device-read`: reads measurements of a device (single, map, list) or lists devices,
 * on input or by polling. Thin adapter: the reading is done by the shared ReadCoalescer.
 * A list of devices (msg.deviceReference an array, or the device setting a JSON array) is a
 * fleet read: one message for the whole list (fleet.ts).
 */
import {
  type Device,
  limited,
  LIMITS,
  type MeasurementListItem,
  show,
  validateProperties,
  validateReference,
  ValidationError,
} from '../../protocol';
import { type PollOutcome, type Runtime } from '../../runtime';
import {
  attributed,
  checkSplit,
  copyWith,
  evaluate,
  fail,
  flowNode,
  fmt,
  maxSplitOf,
  type Node,
  type NodeMessage,
  PollBackoff,
  type RED,
  reply,
  sendAll,
} from '../shared';
import { fleetList, fleetRead, ownJson } from './fleet';

interface Props {
  server: string;
  device?: string;
  deviceType?: string;
  mode?: 'single' | 'map' | 'list' | 'devices';
  properties?: string;
  propertiesType?: string;
  split?: boolean;
  interval?: number | string;
  onlyChanges?: boolean;
  /** Most messages one split may send (default 1000). */
  maxSplit?: number | string;
}

const MODES = ['single', 'map', 'list', 'devices'];

export = function (RED: RED): void {
  function EmsDeviceReadNode(this: Node, saved: Props) {
    const f = flowNode(RED, this, saved);
    const { node, props: config, server, status } = f;
    const mode = config.mode ?? 'map';
    const last = new Map<string, string>();
    let stopPolling: (() => void) | undefined;
    const splits = !!config.split && (mode === 'map' || mode === 'list');
    let maxSplit: number | Error = 0;
    try {
      maxSplit = maxSplitOf(config.maxSplit);
    } catch (err) {
      maxSplit = err as Error;
      if (splits) fail(f, undefined, err); // reported at deploy; each split read is refused with it
    }

    /** The node's own device (str or json) and properties (str TypedInputs) once checked: the same for every message. */
    let ownDevice: string | string[] | undefined;
    let ownProperties: { props: string[]; field: string } | undefined;
    const constant = (type: string | undefined) => type === undefined || type === '' || type === 'str';

    /** The device reference, or a list of them (a fleet read), checked here so the error names where it came from. */
    function device(msg: NodeMessage): string | string[] | Promise<string | string[]> {
      if (msg.deviceReference !== undefined) return reference(msg.deviceReference, 'msg.deviceReference');
      if (ownDevice !== undefined) return ownDevice;
      if (constant(config.deviceType)) return (ownDevice = reference(`${config.device ?? ''}`, 'device'));
      if (config.deviceType === 'json') return (ownDevice = ownJson(`${config.device ?? ''}`));
      return evaluate(RED, node, config.device ?? '', config.deviceType, msg).then((v) => reference(v, 'device'));
    }

    function reference(v: unknown, field: string): string | string[] {
      if (Array.isArray(v)) return fleetList(v, field);
      return validateReference(typeof v === 'number' && Number.isFinite(v) ? String(v) : v, field);
    }

    /** The property names and the field they came from. */
    function properties(
      msg: NodeMessage,
    ): { props: string[]; field: string } | Promise<{ props: string[]; field: string }> {
      if (msg.properties !== undefined)
        return { props: validateProperties(msg.properties, 'msg.properties'), field: 'msg.properties' };
      if (msg.property !== undefined)
        return { props: validateProperties(msg.property, 'msg.property'), field: 'msg.property' };
      if (ownProperties) return ownProperties;
      if (constant(config.propertiesType)) return (ownProperties = ownList(`${config.properties ?? ''}`));
      return evaluate(RED, node, config.properties ?? '', config.propertiesType, msg).then(ownList);
    }

    /** The node's properties field: names separated by commas, or a JSON array of names. */
    function ownList(value: unknown): { props: string[]; field: string } {
      let v = value;
      if (typeof v === 'string' && v.trim().startsWith('[')) {
        try {
          v = JSON.parse(v);
        } catch {
          /* validated below */
        }
      }
      return { props: validateProperties(v, 'properties'), field: 'properties' };
    }

    const reads = { signal: f.signal };
    /** The config node's runtime once it resolved (it never changes while the node lives): no await per message. */
    let known: Runtime | undefined;

    /** One read: the messages to send (none when onlyChanges suppresses them); `partial`: some devices of a fleet failed. */
    async function read(msg: NodeMessage, poll = false): Promise<{ msgs: NodeMessage[]; partial?: Error }> {
      const cfg = f.configNode();
      if (!MODES.includes(mode))
        throw new ValidationError('mode', `must be one of ${MODES.join(', ')}; got ${show(mode)}`);
      const rt = known ?? (known = await cfg.runtime());
      // In a group, a poll reads only this instance's share of the devices (rendezvous over the live members).
      const share = poll ? rt.group?.members : undefined;
      if (mode === 'devices') {
        if (share && share.mine([node.id]).length === 0) return { msgs: [] };
        const devices: Device[] = await rt.client.listDevices({ signal: f.signal });
        status.ok(status.t('devices', { count: devices.length }));
        return { msgs: changed('devices', devices) ? [copyWith(msg, { payload: devices })] : [] };
      }
      const d = device(msg);
      let ref = typeof d === 'string' || Array.isArray(d) ? d : await d;
      if (share) {
        ref = Array.isArray(ref) ? share.mine(ref) : ref;
        if (ref.length === 0 || (typeof ref === 'string' && share.mine([ref]).length === 0)) return { msgs: [] };
      }
      const p = properties(msg);
      const { props, field } = 'props' in p ? p : await p;
      if (Array.isArray(ref)) return fleet(rt, msg, ref, props, field);
      return { msgs: await readOne(rt, msg, ref, props, field) };
    }

    /** A fleet read: one message for the whole list (fleet.ts). */
    async function fleet(rt: Runtime, msg: NodeMessage, devices: string[], props: string[], field: string) {
      const from = msg.deviceReference !== undefined ? 'msg.deviceReference' : 'device';
      if (splits)
        throw new ValidationError(
          'split',
          `applies to one device: a fleet read (a list in ${from}) answers with one message; turn split off`,
          'unprocessable',
        );
      if (mode === 'single' && props.length !== 1)
        throw new ValidationError(field, `must name exactly one property in mode single; got ${props.length}`);
      const r = await fleetRead({
        rt,
        msg,
        devices,
        field: from,
        mode: mode as 'single' | 'map' | 'list',
        properties: props,
        signal: f.signal,
      });
      if (!r.partial) status.ok(status.t('fleet', { ok: r.ok, total: r.total }));
      const fresh = changed(`fleet|${devices.join(',')}|${props.join(',')}`, r.msg.payload);
      return { msgs: fresh ? [r.msg] : [], partial: r.partial };
    }

    /** A read of one device. */
    async function readOne(
      rt: Runtime,
      msg: NodeMessage,
      ref: string,
      props: string[],
      field: string,
    ): Promise<NodeMessage[]> {
      const limit = () => {
        if (maxSplit instanceof Error) throw maxSplit;
        return maxSplit;
      };
      // A split of more properties than maxSplit is refused before anything is asked.
      if (splits) checkSplit(props.length, limit(), 'messages (one per property)');
      // A refusal by the service names the field: the properties if it speaks of them, else the device.
      const pick = (svc: string) =>
        /propert/i.test(svc) ? field : msg.deviceReference !== undefined ? 'msg.deviceReference' : 'device';
      let items: MeasurementListItem[];
      let out: NodeMessage;
      if (mode === 'single') {
        if (props.length !== 1)
          throw new ValidationError(field, `must name exactly one property in mode single; got ${props.length}`);
        // Validated above (naming the msg field): the coalescer and the client trust the typed request.
        const m = await attributed(rt.reads.read({ device: ref, shape: 'single', properties: props }, reads), pick);
        items = [m];
        out = copyWith(msg, {
          payload: m.value,
          measurement: m,
          unit: m.unit,
          topic: `${ref}/${m.property}`,
          deviceReference: ref,
        });
      } else if (mode === 'map') {
        const m = await attributed(rt.reads.read({ device: ref, shape: 'map', properties: props }, reads), pick);
        if (!splits && !config.onlyChanges) {
          // The common case in one pass: payload, units and the status text, without a list of items.
          const payload: Record<string, number> = {};
          const units: Record<string, string> = {};
          let text = '';
          for (const property of Object.keys(m.measurements)) {
            const v = m.measurements[property];
            payload[property] = v.value;
            units[property] = v.unit;
            text += `${text === '' ? '' : ', '}${property} ${fmt(v.value)} ${v.unit}`;
          }
          status.ok(text);
          return [copyWith(msg, { payload, units, deviceReference: ref })];
        }
        items = Object.entries(m.measurements).map(([property, v]) => ({
          property,
          value: v.value,
          unit: v.unit,
          timestamp: Date.now(),
        }));
        const payload: Record<string, number> = {};
        const units: Record<string, string> = {};
        for (const i of items) {
          payload[i.property] = i.value;
          units[i.property] = i.unit;
        }
        out = copyWith(msg, { payload, units, deviceReference: ref });
      } else {
        const l = await attributed(rt.reads.read({ device: ref, shape: 'list', properties: props }, reads), pick);
        items = l.measurements;
        out = copyWith(msg, { payload: l.measurements, deviceReference: ref });
      }
      if (splits) checkSplit(items.length, limit());
      status.ok(items.map((i) => `${i.property} ${fmt(i.value)} ${i.unit}`).join(', '));
      if (
        config.onlyChanges &&
        !changed(
          `${ref}|${props.join(',')}`,
          items.map((i) => [i.property, i.value]),
        )
      )
        return [];
      if (splits) {
        return items.map((i) =>
          copyWith(msg, {
            topic: `${ref}/${i.property}`,
            payload: i.value,
            unit: i.unit,
            measurement: { ...i, reference: ref },
            deviceReference: ref,
          }),
        );
      }
      return [out];
    }

    function changed(key: string, value: unknown): boolean {
      if (!config.onlyChanges) return true;
      const s = JSON.stringify(value);
      if (last.get(key) === s) return false;
      last.set(key, s);
      return true;
    }

    f.onInput(async (msg) => {
      status.busy();
      const r = await read(msg);
      if (!r.partial) return r.msgs;
      // A fleet read with some devices failed: the message goes out, then a Catch node gets the error listing them.
      status.error(r.partial);
      return reply(r.msgs, r.partial);
    });

    // Seconds; range and default from the table of limits. A bad one is reported at deploy, and the node reads on input only.
    let interval = 0;
    try {
      interval = limited(config.interval, LIMITS.interval, 'interval');
    } catch (err) {
      fail(f, undefined, err);
    }
    if (server && interval > 0) {
      server.runtime().then(
        (rt) => {
          if (f.signal.aborted) return;
          const backoff = new PollBackoff(interval * 1000);
          stopPolling = rt.polls.add(interval * 1000, () => {
            backoff.started();
            // Resolves to the turns to wait before the next try (more while backing off).
            return read({}, true)
              .then(
                (r) => {
                  backoff.success();
                  if (!f.signal.aborted) sendAll((m) => node.send(m), r.msgs);
                  // Some devices of a fleet failed: the message went out; the error is logged as a failed poll's is.
                  return r.partial && !f.signal.aborted ? pollFailed(backoff, r.partial) : undefined;
                },
                (err) => (f.signal.aborted ? undefined : pollFailed(backoff, err)),
              )
              .catch((err) => {
                if (!f.signal.aborted) fail(f, undefined, err, {});
              });
          });
        },
        (err) => fail(f, undefined, err),
      );
    }

    /** A failed poll: backs off while the service fails; logs the same error once a minute. */
    function pollFailed(backoff: PollBackoff, err: unknown): PollOutcome {
      const e = err instanceof Error ? err : new Error(String(err));
      const advice = backoff.failure(e);
      if (advice.backingOff) status.backingOff(e, advice.nextInMs);
      else status.error(e);
      // A poll has no input message: an empty one lets Catch nodes see the error.
      if (advice.log) node.error(e, {});
      return { nextInTurns: advice.nextInTurns };
    }

    f.onClose(() => stopPolling?.());
  }

  RED.nodes.registerType('ems-device-read', EmsDeviceReadNode);
};
