/**
 * The readings of a delivery check: a device's energy counters and power, read through the
 * runtime's read coalescer. A device that refuses counters and power together (400/404/422)
 * is asked for the counters alone, then for power alone; what worked is remembered per device
 * and runtime.
 */
import { ApiError } from '../client';
import { COUNTERS, CONSUMED, PRODUCED, ENERGY_FACTOR_ANY_CASE, POWER_FACTOR_ANY_CASE } from '../protocol';
import type { DeviceRole, MeasurementList, Reading } from '../protocol';
import type { ReadCoalescer } from './coalescer';

/** Devices whose readable properties are remembered per runtime. */
const MAX_MEMO = 1000;

const memo = new WeakMap<object, Map<string, string[]>>();

/** Factors by the unit in lower case (units.ts); a value without a unit is taken as Wh or W. */
const ENERGY: Readonly<Record<string, number>> = { ...ENERGY_FACTOR_ANY_CASE, '': 1 };
const POWER: Readonly<Record<string, number>> = { ...POWER_FACTOR_ANY_CASE, '': 1 };

/** A reading from a list answer: counters in Wh, power in W, the instant from the timestamps (else `localAt`). */
export function readingOf(answer: MeasurementList, localAt: number): Reading {
  const reading: Reading = { at: NaN };
  let at = -Infinity;
  let powerAt = NaN;
  for (const m of answer?.measurements ?? []) {
    if (!m || typeof m.value !== 'number' || !Number.isFinite(m.value)) continue;
    const unit = String(m.unit ?? '').toLowerCase();
    const ts = typeof m.timestamp === 'number' && Number.isFinite(m.timestamp) ? m.timestamp : NaN;
    if ((m.property === PRODUCED || m.property === CONSUMED) && ENERGY[unit] !== undefined) {
      reading[m.property === PRODUCED ? 'produced' : 'consumed'] = m.value * ENERGY[unit];
      if (ts > at) at = ts;
    } else if (m.property === 'power' && POWER[unit] !== undefined) {
      reading.power = m.value * POWER[unit];
      powerAt = ts;
    }
  }
  reading.at = Number.isFinite(at) ? at : Number.isFinite(powerAt) ? powerAt : localAt;
  return reading;
}

const refused = (e: unknown) => e instanceof ApiError && [400, 404, 422].includes(e.status ?? 0);

/** The device's counters of `role` and its power, as it lets them be read (see above). */
export async function readCounters(
  reads: Pick<ReadCoalescer, 'read'>,
  device: string,
  role: DeviceRole,
  signal: AbortSignal,
): Promise<MeasurementList> {
  let known = memo.get(reads);
  if (!known) memo.set(reads, (known = new Map()));
  const remembered = known.get(device);
  const tries = remembered ? [remembered] : [[...COUNTERS[role], 'power'], [...COUNTERS[role]], ['power']];
  let err: unknown;
  for (const properties of tries) {
    try {
      const answer = await reads.read({ device, shape: 'list', properties }, { signal });
      if (known.size >= MAX_MEMO) known.clear();
      known.set(device, properties);
      return answer;
    } catch (e) {
      err = e;
      if (!refused(e) || signal.aborted) break;
    }
  }
  throw err;
}
