/**
 * The state and work of one `ems-device-read` node: what it reads (device, properties, mode),
 * on input or by polling through the config node's shared PollScheduler. The reading is done by
 * the runtime's ReadCoalescer; the answer's messages are made in answers.ts, a fleet read in fleet.ts.
 */
import {
  type Device,
  limited,
  LIMITS,
  show,
  validateProperties,
  validateReference,
  ValidationError,
} from '../../protocol';
import { type PollOutcome, type Runtime } from '../../runtime';
import {
  type Answer,
  copyWith,
  evaluate,
  fail,
  type FlowNode,
  maxSplitOf,
  type NodeMessage,
  PollBackoff,
  type RED,
  reply,
  sendAll,
  type SendFn,
} from '../shared';
import { changed, type ReadMode, type ReadOutcome, readDevice, type ReadSettings } from './answers';
import { fleetList, fleetRead, ownJson } from './fleet';

export interface DeviceReadProps {
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

/** Property names and the field they came from (named by errors). */
interface Properties {
  props: string[];
  field: string;
}

const MODES = ['single', 'map', 'list', 'devices'];
const constant = (type: string | undefined) => type === undefined || type === '' || type === 'str';

export class DeviceReadController {
  private readonly config: DeviceReadProps;
  private readonly mode: string;
  /** What a read of one device needs besides the request (answers.ts). */
  private readonly settings: ReadSettings;
  /** The node's own device (str or json), once checked: the same for every message. */
  private ownDevice: string | string[] | undefined;
  /** The node's own properties (str), once checked. */
  private ownProperties: Properties | undefined;
  /** The config node's runtime once it resolved (it never changes while the node lives): no await per message. */
  private runtime: Runtime | undefined;
  private stopPolling: (() => void) | undefined;
  private backoff: PollBackoff | undefined;
  /** The node closed (its signal aborted): nothing more is sent. */
  private closed = false;
  /** Input messages under way: while several overlap, "requesting" shows once and results are held back (Status.okLater). */
  private inFlight = 0;
  private readonly send: SendFn = (m) => this.f.node.send(m);

  constructor(
    private readonly RED: RED,
    private readonly f: FlowNode<DeviceReadProps>,
  ) {
    const config = f.props;
    this.config = config;
    this.mode = config.mode ?? 'map';
    const splits = !!config.split && (this.mode === 'map' || this.mode === 'list');
    let maxSplit: number | Error;
    try {
      maxSplit = maxSplitOf(config.maxSplit);
    } catch (err) {
      maxSplit = err as Error;
      if (splits) fail(f, undefined, err); // reported at deploy; each split read is refused with it
    }
    this.settings = {
      mode: this.mode as ReadMode,
      splits,
      maxSplit,
      onlyChanges: !!config.onlyChanges,
      last: new Map(),
      result: (text) => {
        if (this.inFlight > 1) f.status.okLater(text);
        else f.status.ok(text());
      },
      signal: { signal: f.signal },
    };
    this.startPolling();
  }

  /**
   * A message: the read's messages, and the error naming the devices that failed in a fleet read.
   * "requesting" shows when the node starts from idle: while messages overlap, the status shows
   * results (at most about one a second, the last one once they have all ended).
   */
  onInput(msg: NodeMessage): Promise<Answer> {
    if (this.inFlight++ === 0) this.f.status.busy();
    return this.read(msg, false).then(
      (outcome) => {
        this.ended();
        if (!outcome.partial) return outcome.msgs;
        // A fleet read with some devices failed: the message goes out, then a Catch node gets the error listing them.
        this.f.status.error(outcome.partial);
        return reply(outcome.msgs, outcome.partial);
      },
      (err: unknown) => {
        this.ended();
        throw err;
      },
    );
  }

  /** An input message's read ended: once none is under way, a result held back shows. */
  private ended(): void {
    if (--this.inFlight === 0) this.f.status.release();
  }

  onClose(): void {
    this.closed = true;
    this.stopPolling?.();
  }

  /** One read: the messages to send (none when onlyChanges suppresses them); `partial`: some devices of a fleet failed. */
  private read(msg: NodeMessage, poll: boolean): Promise<ReadOutcome> {
    const known = this.runtime;
    if (known) return this.readWith(known, msg, poll);
    let cfg;
    try {
      cfg = this.f.configNode();
      if (!MODES.includes(this.mode)) throw this.badMode();
    } catch (err) {
      return Promise.reject(err);
    }
    return cfg.runtime().then((rt) => {
      this.runtime = rt;
      return this.readWith(rt, msg, poll);
    });
  }

  private badMode(): ValidationError {
    return new ValidationError('mode', `must be one of ${MODES.join(', ')}; got ${show(this.mode)}`);
  }

  /** A read with the runtime known (and the mode checked); a throw while checking the message is its rejection. */
  private readWith(rt: Runtime, msg: NodeMessage, poll: boolean): Promise<ReadOutcome> {
    try {
      // In a group, a poll reads only this instance's share of the devices (rendezvous over the live members).
      const share = poll ? rt.group?.members : undefined;
      if (this.mode === 'devices') return this.listDevices(rt, msg, share);
      const device = this.device(msg);
      if (typeof device !== 'string' && !Array.isArray(device))
        return device.then((ref) => this.readDevices(rt, msg, ref, share));
      return this.readDevices(rt, msg, device, share);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private async listDevices(rt: Runtime, msg: NodeMessage, share: Share | undefined): Promise<ReadOutcome> {
    if (share && share.mine([this.f.node.id]).length === 0) return { msgs: [] };
    const devices: Device[] = await rt.client.listDevices({ signal: this.f.signal });
    this.f.status.ok(this.f.status.t('devices', { count: devices.length }));
    return { msgs: changed(this.settings, 'devices', devices) ? [copyWith(msg, { payload: devices })] : [] };
  }

  /** The read of one device or a fleet, with the device (or list) known. */
  private readDevices(
    rt: Runtime,
    msg: NodeMessage,
    device: string | string[],
    share: Share | undefined,
  ): Promise<ReadOutcome> {
    let ref = device;
    if (share) {
      ref = Array.isArray(ref) ? share.mine(ref) : ref;
      if (ref.length === 0 || (typeof ref === 'string' && share.mine([ref]).length === 0))
        return Promise.resolve({ msgs: [] });
    }
    const wanted = this.properties(msg);
    if (!('props' in wanted)) return wanted.then((props) => this.readWithProperties(rt, msg, ref, props));
    return this.readWithProperties(rt, msg, ref, wanted);
  }

  private readWithProperties(
    rt: Runtime,
    msg: NodeMessage,
    ref: string | string[],
    p: Properties,
  ): Promise<ReadOutcome> {
    if (Array.isArray(ref)) return this.fleet(rt, msg, ref, p);
    return readDevice(this.settings, rt, msg, ref, p.props, p.field);
  }

  /** The device reference, or a list of them (a fleet read), checked here so the error names where it came from. */
  private device(msg: NodeMessage): string | string[] | Promise<string | string[]> {
    if (msg.deviceReference !== undefined) return reference(msg.deviceReference, 'msg.deviceReference');
    if (this.ownDevice !== undefined) return this.ownDevice;
    const config = this.config;
    if (constant(config.deviceType)) return (this.ownDevice = reference(`${config.device ?? ''}`, 'device'));
    if (config.deviceType === 'json') return (this.ownDevice = ownJson(`${config.device ?? ''}`));
    return evaluate(this.RED, this.f.node, config.device ?? '', config.deviceType, msg).then((v) =>
      reference(v, 'device'),
    );
  }

  /** The property names and the field they came from. */
  private properties(msg: NodeMessage): Properties | Promise<Properties> {
    if (msg.properties !== undefined)
      return { props: validateProperties(msg.properties, 'msg.properties'), field: 'msg.properties' };
    if (msg.property !== undefined)
      return { props: validateProperties(msg.property, 'msg.property'), field: 'msg.property' };
    if (this.ownProperties) return this.ownProperties;
    const config = this.config;
    if (constant(config.propertiesType)) return (this.ownProperties = ownList(`${config.properties ?? ''}`));
    return evaluate(this.RED, this.f.node, config.properties ?? '', config.propertiesType, msg).then(ownList);
  }

  /** A fleet read: one message for the whole list (fleet.ts). */
  private async fleet(rt: Runtime, msg: NodeMessage, devices: string[], p: Properties): Promise<ReadOutcome> {
    const from = msg.deviceReference !== undefined ? 'msg.deviceReference' : 'device';
    if (this.settings.splits)
      throw new ValidationError(
        'split',
        `applies to one device: a fleet read (a list in ${from}) answers with one message; turn split off`,
        'unprocessable',
      );
    if (this.mode === 'single' && p.props.length !== 1)
      throw new ValidationError(p.field, `must name exactly one property in mode single; got ${p.props.length}`);
    const result = await fleetRead({
      rt,
      msg,
      devices,
      field: from,
      mode: this.mode as ReadMode,
      properties: p.props,
      signal: this.f.signal,
    });
    if (!result.partial) this.f.status.ok(this.f.status.t('fleet', { ok: result.ok, total: result.total }));
    const fresh = changed(this.settings, `fleet|${devices.join(',')}|${p.props.join(',')}`, result.msg.payload);
    return { msgs: fresh ? [result.msg] : [], partial: result.partial };
  }

  /** Polling at the node's interval (seconds; a bad one is reported at deploy, and the node reads on input only). */
  private startPolling(): void {
    const flow = this.f;
    let interval = 0;
    try {
      interval = limited(this.config.interval, LIMITS.interval, 'interval');
    } catch (err) {
      fail(flow, undefined, err);
    }
    if (!flow.server || interval <= 0) return;
    flow.server.runtime().then(
      (rt) => {
        if (flow.signal.aborted) return;
        this.backoff = new PollBackoff(interval * 1000);
        this.stopPolling = rt.polls.add(interval * 1000, () => this.poll());
      },
      (err) => fail(flow, undefined, err),
    );
  }

  /** One poll; resolves to the turns to wait before the next try (more while backing off). */
  private poll(): Promise<PollOutcome | undefined> {
    this.backoff!.started();
    return this.read({}, true).then(
      (r) => this.guarded(() => this.polled(r)),
      (err) => this.guarded(() => (this.f.signal.aborted ? undefined : this.pollFailed(err))),
    );
  }

  /** A poll's handling, which must not reject (the scheduler's turn): a throw in it is reported. */
  private guarded(work: () => PollOutcome | undefined): PollOutcome | undefined {
    try {
      return work();
    } catch (err) {
      if (!this.f.signal.aborted) fail(this.f, undefined, err, {});
      return undefined;
    }
  }

  private polled(r: ReadOutcome): PollOutcome | undefined {
    this.backoff!.success();
    if (this.closed) return undefined;
    sendAll(this.send, r.msgs);
    // Some devices of a fleet failed: the message went out; the error is logged as a failed poll's is.
    return r.partial ? this.pollFailed(r.partial) : undefined;
  }

  /** A failed poll: backs off while the service fails; logs the same error once a minute. */
  private pollFailed(err: unknown): PollOutcome {
    const error = err instanceof Error ? err : new Error(String(err));
    const advice = this.backoff!.failure(error);
    if (advice.backingOff) this.f.status.backingOff(error, advice.nextInMs);
    else this.f.status.error(error);
    // A poll has no input message: an empty one lets Catch nodes see the error.
    if (advice.log) this.f.node.error(error, {});
    return { nextInTurns: advice.nextInTurns };
  }
}

type Share = NonNullable<Runtime['group']>['members'];

function reference(v: unknown, field: string): string | string[] {
  if (Array.isArray(v)) return fleetList(v, field);
  return validateReference(typeof v === 'number' && Number.isFinite(v) ? String(v) : v, field);
}

/** The node's properties field: names separated by commas, or a JSON array of names. */
function ownList(value: unknown): Properties {
  let parsed = value;
  if (typeof parsed === 'string' && parsed.trim().startsWith('[')) {
    try {
      parsed = JSON.parse(parsed);
    } catch {
      /* validated below */
    }
  }
  return { props: validateProperties(parsed, 'properties'), field: 'properties' };
}
