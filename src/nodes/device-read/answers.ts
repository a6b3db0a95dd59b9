/**
 * The read of one device by `ems-device-read` and the messages its answer makes: one message in
 * the node's mode (single, map, list), or one per property (split), or none when onlyChanges
 * finds nothing new. The status shows the values read.
 */
import { type MeasurementListItem, ValidationError } from '../../protocol';
import { type Runtime } from '../../runtime';
import { type ApiError, refusedField } from '../../client';
import { checkSplit, copyWith, fmt, type NodeMessage } from '../shared';

export type ReadMode = 'single' | 'map' | 'list';

/** What the node's settings say about every read of one device. */
export interface ReadSettings {
  mode: ReadMode;
  splits: boolean;
  /** Most messages one split may send, or the error a bad setting made (each split read is refused with it). */
  maxSplit: number | Error;
  onlyChanges: boolean;
  /** The last answer per key, as JSON (onlyChanges). */
  last: Map<string, string>;
  /**
   * Shows a result's status (a green dot with `text()` and the time); the text is made only if
   * it is shown (the controller holds it back while the node's messages overlap).
   */
  result(text: () => string): void;
  /** The node's signal, in the form the coalescer takes. */
  signal: { signal: AbortSignal };
}

/** A read's messages (none when onlyChanges suppresses them); `partial`: some devices of a fleet failed. */
export interface ReadOutcome {
  msgs: NodeMessage[];
  partial?: Error;
}

/** A read of one device; a throw while checking it is its rejection. */
export function readDevice(
  s: ReadSettings,
  rt: Runtime,
  msg: NodeMessage,
  ref: string,
  props: string[],
  field: string,
): Promise<ReadOutcome> {
  try {
    // A split of more properties than maxSplit is refused before anything is asked.
    if (s.splits) checkSplit(props.length, limitOf(s), 'messages (one per property)');
    // A refusal by the service names the field: the properties if it speaks of them, else the device.
    const refused = (err: unknown): never => {
      const svc = (err as ApiError)?.serviceMessage ?? '';
      throw refusedField(
        err,
        /propert/i.test(svc) ? field : msg.deviceReference !== undefined ? 'msg.deviceReference' : 'device',
      );
    };
    // Validated above (naming the msg field): the coalescer and the client trust the typed request.
    if (s.mode === 'map')
      return rt.reads
        .read({ device: ref, shape: 'map', properties: props }, s.signal)
        .then(
          (m) =>
            s.splits || s.onlyChanges
              ? mapItems(s, msg, ref, props, m.measurements)
              : mapMessage(s, msg, ref, m.measurements),
          refused,
        );
    if (s.mode === 'single') {
      if (props.length !== 1)
        throw new ValidationError(field, `must name exactly one property in mode single; got ${props.length}`);
      return rt.reads.read({ device: ref, shape: 'single', properties: props }, s.signal).then((m) => {
        const out = copyWith(msg, {
          payload: m.value,
          measurement: m,
          unit: m.unit,
          topic: `${ref}/${m.property}`,
          deviceReference: ref,
        });
        return { msgs: answered(s, msg, ref, props, [m], out) };
      }, refused);
    }
    return rt.reads.read({ device: ref, shape: 'list', properties: props }, s.signal).then((l) => {
      const out = copyWith(msg, { payload: l.measurements, deviceReference: ref });
      return { msgs: answered(s, msg, ref, props, l.measurements, out) };
    }, refused);
  } catch (err) {
    return Promise.reject(err);
  }
}

type Values = Record<string, { value: number; unit: string }>;

/** The common case in one pass: payload and units, without a list of items; the status text only if it is shown. */
function mapMessage(s: ReadSettings, msg: NodeMessage, ref: string, values: Values): ReadOutcome {
  const payload: Record<string, number> = {};
  const units: Record<string, string> = {};
  for (const property in values) {
    const measured = values[property];
    payload[property] = measured.value;
    units[property] = measured.unit;
  }
  s.result(() => mapText(values));
  return { msgs: [copyWith(msg, { payload, units, deviceReference: ref })] };
}

/** A map answer's status text, e.g. "soc 50 %, power 1.2 kW". */
function mapText(values: Values): string {
  let text = '';
  for (const property in values) {
    const measured = values[property];
    text += `${text === '' ? '' : ', '}${property} ${fmt(measured.value)} ${measured.unit}`;
  }
  return text;
}

/** A map answer as a list of items, for a split or onlyChanges. */
function mapItems(s: ReadSettings, msg: NodeMessage, ref: string, props: string[], values: Values): ReadOutcome {
  const items: MeasurementListItem[] = Object.entries(values).map(([property, v]) => ({
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
  const out = copyWith(msg, { payload, units, deviceReference: ref });
  return { msgs: answered(s, msg, ref, props, items, out) };
}

/** The messages of an answer's items: `out`, or one per item (split), or none when nothing changed (onlyChanges). */
function answered(
  s: ReadSettings,
  msg: NodeMessage,
  ref: string,
  props: string[],
  items: MeasurementListItem[],
  out: NodeMessage,
): NodeMessage[] {
  if (s.splits) checkSplit(items.length, limitOf(s));
  s.result(() => items.map((i) => `${i.property} ${fmt(i.value)} ${i.unit}`).join(', '));
  if (
    s.onlyChanges &&
    !changed(
      s,
      `${ref}|${props.join(',')}`,
      items.map((i) => [i.property, i.value]),
    )
  )
    return [];
  if (!s.splits) return [out];
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

function limitOf(s: ReadSettings): number {
  if (s.maxSplit instanceof Error) throw s.maxSplit;
  return s.maxSplit;
}

/** Whether `value` differs from the last one under `key` (always with onlyChanges off); keeps it. */
export function changed(s: ReadSettings, key: string, value: unknown): boolean {
  if (!s.onlyChanges) return true;
  const json = JSON.stringify(value);
  if (s.last.get(key) === json) return false;
  s.last.set(key, json);
  return true;
}
