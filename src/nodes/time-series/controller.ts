/**
 * What an `ems-time-series` node does with a message (index.ts wires it): the device, property,
 * resolution and range from the message or the node's settings, the series read (ranges over
 * 30 days split by the client and merged in order), the property's unit, and the output shaped
 * as arrays, points or one message per point.
 */
import {
  HOUR_MS,
  limited,
  LIMITS,
  show,
  type TimeSeriesResponse,
  validateProperty,
  validateReference,
  ValidationError,
} from '../../protocol';
import {
  attributed,
  checkSplit,
  copyWith,
  evaluate,
  fail,
  type FlowNode,
  maxSplitOf,
  type NodeMessage,
  type RED,
} from '../shared';
import { resolveRange, type RangeKind } from './time-range';

export interface TimeSeriesProps {
  server: string;
  device?: string;
  deviceType?: string;
  property?: string;
  propertyType?: string;
  range?: RangeKind;
  last?: number | string;
  lastUnit?: 'hours' | 'days';
  start?: string;
  startType?: string;
  end?: string;
  endType?: string;
  resolution?: number | string;
  output?: 'arrays' | 'points' | 'split';
  /** Most messages one split output may send (default 1000). */
  maxSplit?: number | string;
}

const OUTPUTS = ['arrays', 'points', 'split'];

type Range = { start: number; end: number };

/** What one read found. */
interface Read {
  output: string;
  device: string;
  property: string;
  range: Range;
  series: TimeSeriesResponse;
  unit: string;
}

/** The part of the client the unit lookup uses. */
interface DeviceLister {
  listDevices(
    options?: object,
  ): Promise<Array<{ deviceReference: string; properties: Array<{ name: string; unit: string }> }>>;
}

export class TimeSeriesController {
  private readonly config: TimeSeriesProps;
  /** The maxSplit setting, or why it is refused (each split read is refused with it). */
  private readonly maxSplit: number | Error;
  /** The unit of each `device/property` (Get Devices; '' when the service does not list it). */
  private readonly units = new Map<string, string>();

  constructor(
    private readonly RED: RED,
    private readonly flow: FlowNode<TimeSeriesProps>,
  ) {
    this.config = flow.props;
    let maxSplit: number | Error;
    try {
      maxSplit = maxSplitOf(this.config.maxSplit);
    } catch (err) {
      maxSplit = err as Error;
      if (this.config.output === 'split') fail(flow, undefined, err); // reported at deploy; each split read is refused with it
    }
    this.maxSplit = maxSplit;
  }

  async onInput(msg: NodeMessage): Promise<NodeMessage[]> {
    const { status } = this.flow;
    status.busy();
    const read = await this.query(msg);
    const out = this.shape(msg, read);
    status.ok(status.t('points', { property: read.property, count: read.series.time.length }));
    return out;
  }

  /** The maxSplit setting (throws its ValidationError when it is bad). */
  private limit(): number {
    if (this.maxSplit instanceof Error) throw this.maxSplit;
    return this.maxSplit;
  }

  /** The node's typed input `value` of type `type`, evaluated against `msg`. */
  private evaluate(value: unknown, type: string | undefined, msg: NodeMessage): Promise<unknown> {
    return evaluate(this.RED, this.flow.node, value, type, msg);
  }

  private async query(msg: NodeMessage): Promise<Read> {
    const server = this.flow.configNode();
    const output = this.config.output ?? 'points';
    if (!OUTPUTS.includes(output))
      throw new ValidationError('output', `must be one of ${OUTPUTS.join(', ')}; got ${show(output)}`);
    const { device, deviceField, property } = await this.target(msg);
    const resolutionHours = this.resolution(msg);
    const range = await this.range(msg);
    // A split of a range that holds more points than maxSplit is refused before anything is asked
    // (the points of [start, end) at the resolution are at most this many).
    if (output === 'split')
      checkSplit(
        Math.ceil((range.end - range.start) / (resolutionHours * HOUR_MS)),
        this.limit(),
        'messages (one per point)',
      );
    const runtime = await server.runtime();
    // The client checked each answer's shape (time, data of equal length, ISO times, numbers).
    const series = await attributed(
      runtime.client.getTimeSeriesRange(
        device,
        { property, start: range.start, end: range.end, resolutionHours },
        { signal: this.flow.signal },
      ),
      (svc) => (/propert/i.test(svc) ? (msg.property !== undefined ? 'msg.property' : 'property') : deviceField),
    );
    if (output === 'split') checkSplit(series.time.length, this.limit());
    const unit = await this.unitOf(runtime.client, device, property);
    return { output, device, property, range, series, unit };
  }

  /** The device and property to read, from the message or the node's settings. */
  private async target(msg: NodeMessage): Promise<{ device: string; deviceField: string; property: string }> {
    const config = this.config;
    const [given, deviceField] =
      msg.deviceReference !== undefined
        ? [msg.deviceReference, 'msg.deviceReference']
        : [await this.evaluate(config.device ?? '', config.deviceType, msg), 'device'];
    const device = validateReference(
      typeof given === 'number' && Number.isFinite(given) ? String(given) : given,
      deviceField,
    );
    const property = validateProperty(
      msg.property !== undefined ? msg.property : await this.evaluate(config.property ?? '', config.propertyType, msg),
      msg.property !== undefined ? 'msg.property' : 'property',
    );
    return { device, deviceField, property };
  }

  /** The resolution in hours, from the message or the node (range from the table of limits; a value given empty is refused). */
  private resolution(msg: NodeMessage): number {
    const raw = msg.resolution !== undefined ? msg.resolution : (this.config.resolution ?? 1);
    const field = msg.resolution !== undefined ? 'msg.resolution' : 'resolution';
    return limited(raw, LIMITS.resolution, field, { required: true });
  }

  /** [start, end) from the message, else from the node's range settings, in whole seconds. */
  private async range(msg: NodeMessage): Promise<Range> {
    const config = this.config;
    let range: Range;
    if (msg.start !== undefined || msg.end !== undefined) {
      if (msg.start === undefined)
        throw new ValidationError('msg.start', 'is required with msg.end: epoch ms, ISO 8601 or Date');
      range = resolveRange({ range: 'absolute', start: msg.start, end: msg.end ?? Date.now() }, Date.now(), 'msg.');
    } else {
      const absolute = (config.range ?? 'last') === 'absolute';
      range = resolveRange(
        {
          range: config.range ?? 'last',
          last: config.last ?? 24,
          lastUnit: config.lastUnit,
          start: absolute ? await this.evaluate(config.start ?? '', config.startType, msg) : undefined,
          end: absolute && config.end ? await this.evaluate(config.end, config.endType, msg) : undefined,
        },
        Date.now(),
      );
    }
    // The API takes whole seconds: round up, or a start with milliseconds would be cut down
    // and the first point dropped as lying before the start. The points stay in [start, end).
    return { start: Math.ceil(range.start / 1000) * 1000, end: Math.ceil(range.end / 1000) * 1000 };
  }

  /** The unit of a property, from Get Devices (cached; '' when the service does not list it). */
  private async unitOf(client: DeviceLister, device: string, property: string): Promise<string> {
    const key = `${device}/${property}`;
    if (!this.units.has(key)) {
      try {
        const list = await client.listDevices({ signal: this.flow.signal });
        for (const d of list) for (const p of d.properties) this.units.set(`${d.deviceReference}/${p.name}`, p.unit);
      } catch {
        /* the unit is informative; a failed lookup must not fail the read */
      }
      if (!this.units.has(key)) this.units.set(key, '');
    }
    return this.units.get(key)!;
  }

  /** The output messages: one of arrays, one of points, or one per point (split). */
  private shape(msg: NodeMessage, read: Read): NodeMessage[] {
    const common = {
      unit: read.unit,
      property: read.property,
      deviceReference: read.device,
      range: { start: new Date(read.range.start).toISOString(), end: new Date(read.range.end).toISOString() },
    };
    const { time, data } = read.series;
    if (read.output === 'arrays') return [copyWith(msg, { ...common, payload: { time, data } })];
    const epochMs = time.map((t) => Date.parse(t));
    if (read.output === 'points')
      return [copyWith(msg, { ...common, payload: epochMs.map((x, i) => ({ x, y: data[i] })) })];
    return epochMs.map((x, i) =>
      copyWith(msg, { ...common, topic: `${read.device}/${read.property}`, payload: data[i], timestamp: x }),
    );
  }
}
