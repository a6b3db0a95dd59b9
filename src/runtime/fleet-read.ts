/**
 * Fleet read: one read of many devices, each device read through the shared ReadCoalescer
 * (one request per device, coalesced with the other reads of that device as usual), with a
 * bounded number in flight, so a fleet of thousands never floods the client's queue ahead of
 * other nodes' reads. Every device ends in its answer or its error; nothing throws. Also the
 * battery capacities a fleet's mean SOC is weighted with (batteryCapacities).
 */
import { EmsError } from '../protocol';
import type { ReadAnswers, ReadShape, SiteSummary } from '../protocol';
import { ApiError } from '../client';
import type { EmsClient } from '../client';
import type { ReadCoalescer } from './coalescer';
import { mapBounded } from './fleet';

/** Reads in flight at once per fleet read: this many times the client's concurrency, at least MIN_IN_FLIGHT. */
const IN_FLIGHT_FACTOR = 4;
const MIN_IN_FLIGHT = 16;
/** How long capacities from GET /sites are kept, and how long a failure to get them is. */
export const CAPACITY_TTL_MS = 60 * 60_000;
export const CAPACITY_RETRY_MS = 5 * 60_000;

export interface FleetReadOptions {
  signal?: AbortSignal;
  /** Most reads in flight at once (default from the client's concurrency). */
  inFlight?: number;
}

/** What each device ended with: its answer or its error, in the order of `devices`. */
export interface FleetOutcome<S extends ReadShape> {
  answers: Array<ReadAnswers[S] | undefined>;
  errors: Array<unknown>;
  failed: number;
}

/**
 * Reads `properties` of every device (references validated already, distinct), in shape
 * `shape`, at most `inFlight` at once. Resolves when every device has its answer or error.
 */
export async function readFleet<S extends ReadShape>(
  reads: ReadCoalescer,
  client: Pick<EmsClient, 'concurrency'>,
  devices: readonly string[],
  shape: S,
  properties: string[],
  o: FleetReadOptions = {},
): Promise<FleetOutcome<S>> {
  const limit = Math.max(1, Math.floor(o.inFlight ?? Math.max(MIN_IN_FLIGHT, IN_FLIGHT_FACTOR * client.concurrency)));
  const call = { signal: o.signal };
  // The same bounded fan-out as a fleet steer (runtime/fleet.ts); an abort still goes to each read.
  const settled = await mapBounded(devices, limit, (device) => reads.read({ device, shape, properties }, call));
  const answers: Array<ReadAnswers[S] | undefined> = new Array(devices.length);
  const errors: unknown[] = new Array(devices.length);
  let failed = 0;
  settled.forEach((r, i) => {
    if (r.ok) answers[i] = r.value as ReadAnswers[S];
    else {
      errors[i] = r.error;
      failed++;
    }
  });
  return { answers, errors, failed };
}

/** A short reason for one device's failure: "HTTP 404 unknown device …", or the error's code or text. */
export function reasonOf(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status) return `HTTP ${err.status}${err.serviceMessage ? ` ${err.serviceMessage}` : ''}`;
    return err.message || err.code;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Names in an error of a fleet read: at most this many devices, then "and N more". */
const NAMED = 5;

/**
 * Some or all devices of a fleet read failed. `failed` maps each failed device to its error
 * message. When all failed with the same code (and status), the error carries them, so a
 * poller backs off from a service that cannot be reached exactly as it does for one device.
 */
export class FleetReadError extends EmsError {
  readonly code: string;
  readonly status?: number;
  readonly failed: Readonly<Record<string, string>>;
  constructor(
    field: string,
    total: number,
    failed: Record<string, string>,
    reasons: Record<string, string>,
    errors: unknown[],
  ) {
    const refs = Object.keys(failed);
    const all = refs.length === total;
    const named = refs
      .slice(0, NAMED)
      .map((r) => `${r} (${reasons[r]})`)
      .join(', ');
    const more = refs.length > NAMED ? `, and ${refs.length - NAMED} more` : '';
    super(
      `${all ? `all ${total} devices failed` : `${refs.length} of ${total} devices failed`} (${field}): ${named}${more}`,
    );
    this.name = 'FleetReadError';
    (this as { field?: string }).field = field;
    this.failed = failed;
    const codes = new Set(errors.map((e) => (e as { code?: unknown })?.code));
    const statuses = new Set(errors.map((e) => (e as { status?: unknown })?.status));
    const [code] = codes;
    const [status] = statuses;
    this.code =
      all && codes.size === 1 && typeof code === 'string' ? code : all ? 'EMS_FLEET_FAILED' : 'EMS_FLEET_PARTIAL';
    if (all && statuses.size === 1 && typeof status === 'number') this.status = status;
  }
}

interface CapacityEntry {
  at: number;
  ttl: number;
  byDevice?: Map<string, number>;
  pending?: Promise<Map<string, number>>;
}

const capacities = new WeakMap<object, CapacityEntry>();

/**
 * Battery capacities (Wh) by device reference, from GET /sites (`batteryCapacity` of a site, for its
 * battery devices, on the simulator), kept per client for CAPACITY_TTL_MS, so polling a fleet adds no
 * request per poll. Never rejects: a failure (a service without that path answers 404) gives an empty
 * map (the plain mean is used), asked again after CAPACITY_RETRY_MS.
 */
export function batteryCapacities(
  client: Pick<EmsClient, 'listSites'>,
  signal?: AbortSignal,
): Promise<Map<string, number>> {
  const now = Date.now();
  const known = capacities.get(client);
  if (known?.byDevice && now - known.at < known.ttl) return Promise.resolve(known.byDevice);
  if (known?.pending) return known.pending;
  const entry: CapacityEntry = { at: now, ttl: CAPACITY_RETRY_MS };
  capacities.set(client, entry);
  let listed: Promise<SiteSummary[]>;
  try {
    listed = client.listSites({ signal });
  } catch (e) {
    listed = Promise.reject(e);
  }
  entry.pending = listed
    .then(
      (sites) => {
        const counts = new Map<string, number>();
        for (const s of sites) {
          const cap = s.batteryCapacity;
          if (typeof cap !== 'number' || !(cap > 0) || !Number.isFinite(cap) || !Array.isArray(s.devices)) continue;
          for (const d of s.devices)
            if (d && d.kind === 'battery' && typeof d.deviceReference === 'string') counts.set(d.deviceReference, cap);
        }
        entry.ttl = CAPACITY_TTL_MS;
        return counts;
      },
      () => new Map<string, number>(),
    )
    .then((m) => {
      entry.byDevice = m;
      entry.pending = undefined;
      entry.at = Date.now();
      return m;
    });
  return entry.pending;
}
