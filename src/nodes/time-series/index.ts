/**
 * `ems-time-series`: reads the time series of one property over any range. Ranges over
 * 30 days are split by the core (getTimeSeriesRange) and merged in order.
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
  flowNode,
  maxSplitOf,
  type Node,
  type NodeMessage,
  type RED,
} from '../shared';
import { resolveRange, type RangeKind } from './time-range';

interface Props {
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

export = function (RED: RED): void {
  function EmsTimeSeriesNode(this: Node, saved: Props) {
    const f = flowNode(RED, this, saved);
    const { node, props: config, status } = f;
    let maxSplit: number | Error = 0;
    try {
      maxSplit = maxSplitOf(config.maxSplit);
    } catch (err) {
      maxSplit = err as Error;
      if (config.output === 'split') fail(f, undefined, err); // reported at deploy; each split read is refused with it
    }
    /** The maxSplit setting (throws its ValidationError when it is bad). */
    const limit = (): number => {
      if (maxSplit instanceof Error) throw maxSplit;
      return maxSplit;
    };

    async function query(msg: NodeMessage) {
      const server = f.configNode();
      const output = config.output ?? 'points';
      if (!OUTPUTS.includes(output))
        throw new ValidationError('output', `must be one of ${OUTPUTS.join(', ')}; got ${show(output)}`);
      const [dev, devField] =
        msg.deviceReference !== undefined
          ? [msg.deviceReference, 'msg.deviceReference']
          : [await evaluate(RED, node, config.device ?? '', config.deviceType, msg), 'device'];
      const device = validateReference(typeof dev === 'number' && Number.isFinite(dev) ? String(dev) : dev, devField);
      const property = validateProperty(
        msg.property !== undefined
          ? msg.property
          : await evaluate(RED, node, config.property ?? '', config.propertyType, msg),
        msg.property !== undefined ? 'msg.property' : 'property',
      );
      const resRaw = msg.resolution !== undefined ? msg.resolution : (config.resolution ?? 1);
      // Range from the table of limits; the default is applied above (a value given empty is refused).
      const resolutionHours = limited(
        resRaw,
        LIMITS.resolution,
        msg.resolution !== undefined ? 'msg.resolution' : 'resolution',
        { required: true },
      );
      let range: { start: number; end: number };
      if (msg.start !== undefined || msg.end !== undefined) {
        if (msg.start === undefined)
          throw new ValidationError('msg.start', 'is required with msg.end: epoch ms, ISO 8601 or Date');
        range = resolveRange({ range: 'absolute', start: msg.start, end: msg.end ?? Date.now() }, Date.now(), 'msg.');
      } else {
        const needs = (config.range ?? 'last') === 'absolute';
        range = resolveRange(
          {
            range: config.range ?? 'last',
            last: config.last ?? 24,
            lastUnit: config.lastUnit,
            start: needs ? await evaluate(RED, node, config.start ?? '', config.startType, msg) : undefined,
            end: needs && config.end ? await evaluate(RED, node, config.end, config.endType, msg) : undefined,
          },
          Date.now(),
        );
      }
      // The API takes whole seconds: round up, or a start with milliseconds would be cut down
      // and the first point dropped as lying before the start. The points stay in [start, end).
      range = { start: Math.ceil(range.start / 1000) * 1000, end: Math.ceil(range.end / 1000) * 1000 };
      // A split of a range that holds more points than maxSplit is refused before anything is asked
      // (the points of [start, end) at the resolution are at most this many).
      if (output === 'split')
        checkSplit(
          Math.ceil((range.end - range.start) / (resolutionHours * HOUR_MS)),
          limit(),
          'messages (one per point)',
        );
      const rt = await server.runtime();
      // The client checked each answer's shape (time, data of equal length, ISO times, numbers).
      const series = await attributed(
        rt.client.getTimeSeriesRange(
          device,
          { property, start: range.start, end: range.end, resolutionHours },
          { signal: f.signal },
        ),
        (svc) => (/propert/i.test(svc) ? (msg.property !== undefined ? 'msg.property' : 'property') : devField),
      );
      if (output === 'split') checkSplit(series.time.length, limit());
      const unit = await unitOf(rt.client, device, property);
      return { output, device, property, range, series, unit };
    }

    const units = new Map<string, string>();
    /** The unit of a property, from Get Devices (cached; '' when the service does not list it). */
    async function unitOf(
      client: {
        listDevices(
          o?: object,
        ): Promise<Array<{ deviceReference: string; properties: Array<{ name: string; unit: string }> }>>;
      },
      device: string,
      property: string,
    ): Promise<string> {
      const key = `${device}/${property}`;
      if (!units.has(key)) {
        try {
          const list = await client.listDevices({ signal: f.signal });
          for (const d of list) for (const p of d.properties) units.set(`${d.deviceReference}/${p.name}`, p.unit);
        } catch {
          /* the unit is informative; a failed lookup must not fail the read */
        }
        if (!units.has(key)) units.set(key, '');
      }
      return units.get(key)!;
    }

    function shape(msg: NodeMessage, r: Awaited<ReturnType<typeof query>>): NodeMessage[] {
      const common = {
        unit: r.unit,
        property: r.property,
        deviceReference: r.device,
        range: { start: new Date(r.range.start).toISOString(), end: new Date(r.range.end).toISOString() },
      };
      const { time, data } = r.series as TimeSeriesResponse;
      if (r.output === 'arrays') return [copyWith(msg, { ...common, payload: { time, data } })];
      const xs = time.map((t) => Date.parse(t));
      if (r.output === 'points') return [copyWith(msg, { ...common, payload: xs.map((x, i) => ({ x, y: data[i] })) })];
      return xs.map((x, i) =>
        copyWith(msg, { ...common, topic: `${r.device}/${r.property}`, payload: data[i], timestamp: x }),
      );
    }

    f.onInput(async (msg) => {
      status.busy();
      const r = await query(msg);
      const out = shape(msg, r);
      status.ok(status.t('points', { property: r.property, count: r.series.time.length }));
      return out;
    });
  }

  RED.nodes.registerType('ems-time-series', EmsTimeSeriesNode);
};
