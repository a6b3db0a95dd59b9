/**
 * Shape checks of the service's answers, one per endpoint, applied once at the client
 * boundary (EmsClient.request). An answer of the wrong shape (no body, an HTML page, broken
 * JSON, a missing field, a number sent as a string) becomes one ApiError with code
 * EMS_BAD_RESPONSE that names the endpoint and what was wrong, e.g.
 * `GET /devices/dvc_a/measurement answered 200 with an HTML page, expected a JSON
 * measurement {timestamp, property, value, unit, reference}`.
 */
import { apiError, looksLikeHtml, oneLine, type ApiError, type Redactor } from './errors';
import { normaliseDevices, parseIsoTime, show } from '../protocol';
import type {
  Device,
  Measurement,
  MeasurementList,
  MeasurementMap,
  SiteSummary,
  TimeSeriesResponse,
} from '../protocol';

export interface ResponseShape<T> {
  /** What a good answer looks like, for the error message. */
  readonly expected: string;
  /** Whether an answer without a body (204, or an empty 200) is a good one. */
  readonly emptyOk?: boolean;
  /** Checks the parsed body and returns the answer; throws a Misfit naming what is wrong. */
  read(body: unknown, redactor: Redactor): T;
}

/**
 * What is wrong with an answer (internal: turned into an EMS_BAD_RESPONSE ApiError). A field
 * that is wrong keeps its name and value raw: they are masked before they are cut to size
 * (describe), so a secret echoed into a field is never shown in part.
 */
class Misfit extends Error {
  where?: string;
  value?: unknown;
  wanted?: string;
}

function wrong(where: string, v: unknown, wanted: string): Misfit {
  const misfit = new Misfit('a field of the wrong type');
  misfit.where = where;
  misfit.value = v;
  misfit.wanted = wanted;
  return misfit;
}

function describe(m: Misfit, r: Redactor): string {
  if (m.wanted === undefined || m.where === undefined) return m.message;
  const where = oneLine(r.text(m.where.slice(0, 4096)), 80);
  if (m.value === undefined) return `no ${where}`;
  const shown = typeof m.value === 'string' ? r.text(m.value.slice(0, 65_536)) : m.value;
  return `${where} ${show(shown)} (${typeof m.value === 'string' ? 'a string, ' : ''}not ${m.wanted})`;
}

// Numbers must be finite JSON numbers: `"65"`, `"NaN"` and `null` are refused, also in time series (a
// gap in a series is refused rather than passed on as null; the spec's `data` is an array of numbers).
// The checks are plain loops over the parsed answer, without closures.
const isNum = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const isObj = (v: unknown): boolean => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The top level of an answer as an object. */
function top(v: unknown): Record<string, unknown> {
  if (!isObj(v)) throw new Misfit(v === null ? 'null' : Array.isArray(v) ? 'an array' : `${show(v)} (not an object)`);
  return v as Record<string, unknown>;
}

function array(v: unknown, where: string): unknown[] {
  if (!Array.isArray(v)) throw wrong(where, v, 'an array');
  return v;
}

// The checks below build a field's name only once it is found wrong (no strings per item on success).

const NUM = 'a finite number';
const STR = 'a string';
type Fields = ReadonlyArray<readonly [key: string, wanted: typeof NUM | typeof STR]>;
/** A measurement's fields as a list answer has them, in the order they are checked. */
const LIST_ITEM: Fields = [
  ['timestamp', NUM],
  ['property', STR],
  ['value', NUM],
  ['unit', STR],
];
/** A single measurement also names its device. */
const SINGLE: Fields = [...LIST_ITEM, ['reference', STR]];
/** A map answer's measurement: value and unit under its property. */
const MAP_ITEM: Fields = [
  ['value', NUM],
  ['unit', STR],
];

/** The first of `fields` that `o` does not have in its kind, or undefined when all fit. */
function firstWrong(o: Record<string, unknown>, fields: Fields): Fields[number] | undefined {
  for (const f of fields) if (f[1] === NUM ? !isNum(o[f[0]]) : typeof o[f[0]] !== 'string') return f;
  return undefined;
}

/** The top level of a map or list answer, with its reference. */
function referenced(body: unknown): Record<string, unknown> {
  const fields = top(body);
  if (typeof fields.reference !== 'string') throw wrong('reference', fields.reference, STR);
  return fields;
}

/** The name of a map answer's measurement (its property) or a list answer's (its index). */
const itemName = (at: string | number): string =>
  typeof at === 'number' ? `measurements[${at}]` : `measurements.${at}`;

/** Checks one measurement of a map or list answer: an object with `fields`. */
function checkItem(item: unknown, fields: Fields, at: string | number): void {
  if (!isObj(item)) throw wrong(itemName(at), item, 'an object');
  const record = item as Record<string, unknown>;
  const bad = firstWrong(record, fields);
  if (bad) throw wrong(`${itemName(at)}.${bad[0]}`, record[bad[0]], bad[1]);
}

export const MEASUREMENT: ResponseShape<Measurement> = {
  expected: 'a JSON measurement {timestamp, property, value, unit, reference}',
  read(body) {
    const fields = top(body);
    const bad = firstWrong(fields, SINGLE);
    if (bad) throw wrong(bad[0], fields[bad[0]], bad[1]);
    return fields as unknown as Measurement;
  },
};

export const MEASUREMENT_MAP: ResponseShape<MeasurementMap> = {
  expected: 'a JSON map {reference, measurements: {<property>: {value, unit}}}',
  read(body) {
    const fields = referenced(body);
    const measurements = fields.measurements as Record<string, unknown>;
    if (!isObj(measurements)) throw wrong('measurements', measurements, 'an object');
    for (const k in measurements)
      if (Object.prototype.hasOwnProperty.call(measurements, k)) checkItem(measurements[k], MAP_ITEM, k);
    return fields as unknown as MeasurementMap;
  },
};

export const MEASUREMENT_LIST: ResponseShape<MeasurementList> = {
  expected: 'a JSON list {reference, measurements: [{timestamp, property, value, unit}]}',
  read(body) {
    const fields = referenced(body);
    const list = array(fields.measurements, 'measurements');
    for (let i = 0; i < list.length; i++) checkItem(list[i], LIST_ITEM, i);
    return fields as unknown as MeasurementList;
  },
};

export const TIME_SERIES: ResponseShape<TimeSeriesResponse> = {
  expected: 'a JSON time series {time: [ISO 8601 strings], data: [numbers]} of equal length',
  read(body) {
    const fields = top(body);
    const time = array(fields.time, 'time');
    const data = array(fields.data, 'data');
    if (time.length !== data.length) throw new Misfit(`${time.length} times but ${data.length} values`);
    for (let i = 0; i < time.length; i++) {
      const stamp = time[i];
      if (typeof stamp !== 'string' || !Number.isFinite(parseIsoTime(stamp)))
        throw wrong(`time[${i}]`, stamp, 'an ISO 8601 time');
      if (!isNum(data[i])) throw wrong(`data[${i}]`, data[i], NUM);
    }
    return fields as unknown as TimeSeriesResponse;
  },
};

/** Where a device list may stand in an answer (protocol/devices.ts reads the same). */
const DEVICE_KEYS = ['devices', 'data', 'items'];

export const DEVICES: ResponseShape<Device[]> = {
  expected: 'a JSON device list (an array, or one under "devices", "data" or "items")',
  read(body) {
    let devices: Device[];
    try {
      devices = normaliseDevices(body);
    } catch {
      throw new Misfit(
        body === null
          ? 'null'
          : Array.isArray(body)
            ? 'an array'
            : typeof body === 'object'
              ? 'no device list'
              : show(body),
      );
    }
    // Each entry must be an object, as each site of /sites must: a list of lists (or of bare
    // values) is not read as an empty list.
    const key = Array.isArray(body)
      ? 'devices'
      : (DEVICE_KEYS.find((k) => Array.isArray((body as Record<string, unknown>)[k])) ?? 'devices');
    const list = (Array.isArray(body) ? body : (body as Record<string, unknown>)[key]) as unknown[];
    for (let i = 0; i < list.length; i++) if (!isObj(list[i])) throw wrong(`${key}[${i}]`, list[i], 'an object');
    return devices;
  },
};

export const SITES: ResponseShape<SiteSummary[]> = {
  expected: 'a JSON site list (an array, or one under "sites") of {siteReference, devices}',
  read(body) {
    const list = Array.isArray(body) ? body : array(top(body).sites, 'sites');
    for (let i = 0; i < list.length; i++) {
      const site = list[i] as Record<string, unknown>;
      if (!isObj(site)) throw wrong(`sites[${i}]`, site, 'an object');
      if (typeof site.siteReference !== 'string') throw wrong(`sites[${i}].siteReference`, site.siteReference, STR);
      if (site.devices !== undefined) array(site.devices, `sites[${i}].devices`);
    }
    return list as SiteSummary[];
  },
};

/**
 * Steering answers (the spec does not show them; the vendor's: the accepted request and a
 * requestId): any JSON object, kept as sent with every secret masked; no body gives {}.
 * Typed `never` so each steering call keeps its own response type.
 */
export const STEERING: ResponseShape<never> = {
  expected: 'a JSON object (the accepted request and its requestId) or no body',
  emptyOk: true,
  read(body, redactor) {
    return (body === undefined ? {} : redactor.deep(top(body))) as never;
  },
};

/** The error for an answer of the wrong shape. */
function badResponse(
  method: string,
  path: string,
  status: number,
  what: string,
  expected: string,
  redactor: Redactor,
): ApiError {
  return apiError({
    code: 'EMS_BAD_RESPONSE',
    message: redactor.text(`${method} ${path} answered ${status} with ${what}, expected ${expected}`),
    request: { method, path },
  });
}

function describeText(text: string): string {
  if (looksLikeHtml(text)) return 'an HTML page';
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return 'broken or cut-off JSON';
  return 'text that is not JSON';
}

/** Checks an answer against its endpoint's shape; throws an EMS_BAD_RESPONSE ApiError when it does not fit. */
export function readResponse<T>(
  shape: ResponseShape<T>,
  status: number,
  body: unknown,
  method: string,
  path: string,
  redactor: Redactor,
): T {
  let what: string;
  if (status === 204 || body === undefined || (typeof body === 'string' && body.trim() === '')) {
    if (shape.emptyOk) return shape.read(undefined, redactor);
    what = status === 204 ? 'no body' : 'an empty body';
  } else if (typeof body === 'string') {
    what = describeText(body);
  } else {
    try {
      return shape.read(body, redactor);
    } catch (e) {
      what =
        e instanceof Misfit
          ? describe(e, redactor)
          : `a body it could not read (${e instanceof Error ? e.message : String(e)})`;
    }
  }
  throw badResponse(method, path, status, what, shape.expected, redactor);
}
