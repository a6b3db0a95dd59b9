/** The read endpoints of the API: the path and query of a read of one device, and the shape of its answer. */
import { pathSegment, type ReadRequest, type ReadShape } from '../protocol';
import { MEASUREMENT, MEASUREMENT_LIST, MEASUREMENT_MAP, type ResponseShape } from './responses';

/** Property names as encoded once: a poller sends the same few on every read. */
const encoded = new Map<string, string>();
/** At most this many names are kept (any more are encoded each time). */
const ENCODED_NAMES = 256;

function enc(ref: string): string {
  let text = encoded.get(ref);
  if (text === undefined) {
    text = encodeURIComponent(ref);
    if (encoded.size < ENCODED_NAMES) encoded.set(ref, text);
  }
  return text;
}

/** Device paths kept per shape (a polled fleet's devices); beyond, a path is built each time. */
const KEPT_PATHS = 16_384;

interface ReadEndpoint {
  path: string;
  query: string;
  shape: ResponseShape<unknown>;
  /** The path of a read by device (encoded once: a poller reads the same devices over and over). */
  byDevice: Map<string, string>;
}

/** The read endpoints by shape: path after the device, query parameter, answer shape. */
const READS: Record<ReadShape, ReadEndpoint> = {
  single: { path: '/measurement', query: '?property=', shape: MEASUREMENT, byDevice: new Map() },
  map: { path: '/measurements/map', query: '?properties=', shape: MEASUREMENT_MAP, byDevice: new Map() },
  list: { path: '/measurements', query: '?properties=', shape: MEASUREMENT_LIST, byDevice: new Map() },
};

/** Property names, each URL-encoded, comma-separated. */
function encList(props: readonly string[]): string {
  let list = enc(props[0] ?? '');
  for (let i = 1; i < props.length; i++) list += `,${enc(props[i])}`;
  return list;
}

/** A read's path (as errors name it), its URL below the base URL (with the query), and its answer's shape. */
export function readTarget(req: ReadRequest<ReadShape>): { path: string; url: string; shape: ResponseShape<unknown> } {
  const read = READS[req.shape];
  let path = read.byDevice.get(req.device);
  if (path === undefined) {
    path = `/devices/${pathSegment(req.device, 'deviceReference')}${read.path}`;
    if (read.byDevice.size < KEPT_PATHS) read.byDevice.set(req.device, path);
  }
  return { path, url: `${path}${read.query}${encList(req.properties)}`, shape: read.shape };
}
