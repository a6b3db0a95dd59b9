/**
 * Tolerant reading of the Get Devices response, whose full shape the specification does
 * not show (spec 4.1). Accepts a top-level array or one under `devices`, `data` or `items`;
 * properties as an array of {name|property|key, unit} or as a map {soc: "%"} /
 * {soc: {unit: "%"}}. Normalises to {deviceReference, properties: [{name, unit}], ...rest}.
 */
import type { Device, DeviceProperty } from './types';

function listOf(body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    for (const key of ['devices', 'data', 'items']) if (Array.isArray(record[key])) return record[key] as unknown[];
  }
  throw new Error('Get Devices: expected an array, or one under "devices", "data" or "items"');
}

function propertiesOf(raw: unknown): DeviceProperty[] {
  if (Array.isArray(raw)) {
    const out: DeviceProperty[] = [];
    for (const p of raw) {
      if (typeof p === 'string') out.push({ name: p, unit: '' });
      else if (p && typeof p === 'object') {
        const record = p as Record<string, unknown>;
        const name = record.name ?? record.property ?? record.key;
        if (typeof name === 'string') out.push({ name, unit: typeof record.unit === 'string' ? record.unit : '' });
      }
    }
    return out;
  }
  if (raw && typeof raw === 'object') {
    return Object.entries(raw as Record<string, unknown>).map(([name, v]) => ({
      name,
      unit:
        typeof v === 'string'
          ? v
          : v && typeof v === 'object' && typeof (v as { unit?: unknown }).unit === 'string'
            ? (v as { unit: string }).unit
            : '',
    }));
  }
  return [];
}

export function normaliseDevices(body: unknown): Device[] {
  const out: Device[] = [];
  for (const item of listOf(body)) {
    if (!item || typeof item !== 'object') continue;
    const { deviceReference, reference, properties, availableProperties, ...rest } = item as Record<string, unknown>;
    const ref = deviceReference ?? reference;
    if (typeof ref !== 'string') continue;
    out.push({ ...rest, deviceReference: ref, properties: propertiesOf(properties ?? availableProperties) });
  }
  return out;
}
