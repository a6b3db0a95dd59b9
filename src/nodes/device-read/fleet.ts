/**
 * Fleet read of `ems-device-read`: a list of device references (msg.deviceReference as an
 * array, or the node's device as a JSON array) read into ONE message: payload, units, errors,
 * aggregate and deviceReference, as docs/nodes/ems-device-read.md (Outputs, Fleet read) says.
 * Some devices failing: the message is sent AND a Catch node gets one error listing them.
 * All failing: no message, one Catch-able error naming the devices.
 */
import {
  FleetAggregator,
  type Measurement,
  type MeasurementList,
  type MeasurementMap,
  SERVICE,
  show,
  validateReference,
  ValidationError,
} from '../../protocol';
import { batteryCapacities, FleetReadError, readFleet, reasonOf, type Runtime } from '../../runtime';
import { copyWith, type NodeMessage } from '../shared';

/**
 * A list of device references, checked: at most SERVICE.maxFleetDevices (refused before any
 * entry is looked at), at least one, each a reference string (the error names its index).
 * Duplicates are read once; the order of first appearance is kept.
 */
export function fleetList(input: unknown[], field: string): string[] {
  if (input.length > SERVICE.maxFleetDevices) {
    throw new ValidationError(
      field,
      `must name at most ${SERVICE.maxFleetDevices} devices in one fleet read; got ${input.length}`,
      'unprocessable',
    );
  }
  if (input.length === 0)
    throw new ValidationError(field, 'must name at least one device reference; got an empty list');
  const out = new Set<string>();
  for (let i = 0; i < input.length; i++) {
    const item = input[i];
    if (typeof item !== 'string')
      throw new ValidationError(
        `${field}[${i}]`,
        `must be a device reference string such as "dvc_WTUv8brR7DnH"; got ${show(item)}`,
      );
    out.add(validateReference(item, `${field}[${i}]`));
  }
  return [...out];
}

/**
 * The node's device setting of type `json`: one reference in quotes (a single read) or an
 * array of them (a fleet read). Anything else is refused naming `device`.
 */
export function ownJson(text: string): string | string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ValidationError(
      'device',
      `must be JSON: an array of device references, e.g. ["dvc_a","dvc_b"], or one reference in quotes; got ${show(text)}`,
    );
  }
  if (Array.isArray(parsed)) return fleetList(parsed, 'device');
  return validateReference(parsed, 'device');
}

export interface FleetRead {
  rt: Runtime;
  msg: NodeMessage;
  devices: string[];
  /** Where the list came from: msg.deviceReference or device. */
  field: string;
  mode: 'single' | 'map' | 'list';
  properties: string[];
  signal: AbortSignal;
}

export interface FleetResult {
  /** The one message (none when onlyChanges found nothing new). */
  msg: NodeMessage;
  /** Some devices failed: the error a Catch node gets (besides the message). */
  partial?: FleetReadError;
  ok: number;
  total: number;
}

/**
 * Reads every device (one request each, through the coalescer), then builds the message from
 * the answers (values referenced, not copied: a list answer's items are the payload's).
 * Rejects with a FleetReadError when every device failed.
 */
export async function fleetRead(r: FleetRead): Promise<FleetResult> {
  const { rt, devices, mode, properties } = r;
  const out = await readFleet(rt.reads, rt.client, devices, mode, properties, { signal: r.signal });
  const total = devices.length;
  const errors: Record<string, string> = {};
  let reasons: Record<string, string> | undefined;
  if (out.failed > 0) {
    reasons = {};
    for (let i = 0; i < total; i++) {
      const error = out.errors[i];
      if (error === undefined) continue;
      set(errors, devices[i], error instanceof Error ? error.message : String(error));
      set(reasons, devices[i], reasonOf(error));
    }
    if (out.failed === total) throw new FleetReadError(r.field, total, errors, reasons, out.errors);
  }
  const caps = properties.includes('soc') ? await batteryCapacities(rt.client, r.signal) : undefined;
  const agg = new FleetAggregator(caps ? (d) => caps.get(d) : undefined);
  const payload: Record<string, unknown> = {};
  const units: Record<string, unknown> = {};
  for (let i = 0; i < total; i++) {
    const answer = out.answers[i];
    if (answer === undefined) {
      agg.failedOne();
      continue;
    }
    agg.answered();
    const ref = devices[i];
    if (mode === 'single') {
      const measurement = answer as Measurement;
      set(payload, ref, measurement.value);
      set(units, ref, measurement.unit);
      agg.add(ref, measurement.property, measurement.value, measurement.unit);
    } else if (mode === 'map') {
      const ms = (answer as MeasurementMap).measurements;
      const values: Record<string, number> = {};
      const deviceUnits: Record<string, string> = {};
      for (const p of Object.keys(ms)) {
        const value = ms[p];
        values[p] = value.value;
        deviceUnits[p] = value.unit;
        agg.add(ref, p, value.value, value.unit);
      }
      set(payload, ref, values);
      set(units, ref, deviceUnits);
    } else {
      const items = (answer as MeasurementList).measurements;
      set(payload, ref, items);
      for (const m of items) agg.add(ref, m.property, m.value, m.unit);
    }
  }
  // payload: device → values in the node's output shape (map, list, single); units: device → units
  // (not for list, whose items carry theirs); errors: device → message ({} when none failed).
  const fields: NodeMessage = { payload };
  if (mode !== 'list') fields.units = units;
  Object.assign(fields, { errors, aggregate: agg.result(), deviceReference: devices });
  const partial = out.failed > 0 ? new FleetReadError(r.field, total, errors, reasons ?? {}, out.errors) : undefined;
  return { msg: copyWith(r.msg, fields), partial, ok: total - out.failed, total };
}

/** Sets a key of a map keyed by device reference (a reference is never "__proto__", but stay safe). */
function set(o: Record<string, unknown>, key: string, v: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(o, key, { value: v, enumerable: true, writable: true, configurable: true });
  else o[key] = v;
}
