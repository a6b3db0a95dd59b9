/**
 * What the reads a coalescer merges share: one request's signal (it aborts only when every
 * waiter's has), and the merged list answer fanned back out, each waiter getting exactly the
 * answer its own read would have got (coalescer.ts).
 */
import { apiError, onAbort } from '../client';
import type { CallOptions } from '../client';
import type { Measurement, MeasurementList, MeasurementListItem, MeasurementMap, ReadRequest } from '../protocol';

export type Answer = Measurement | MeasurementMap | MeasurementList;

/** A read waiting in a coalescer's window. */
export interface Waiter {
  req: ReadRequest;
  resolve: (a: Answer) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  /** The caller's options, passed on as they are when the read goes out alone. */
  o?: CallOptions;
}

interface SharedSignal {
  signal?: AbortSignal;
  /** Removes the listeners the shared signal added; call once its request has settled. */
  release(): void;
}

const NONE: SharedSignal = { signal: undefined, release: () => undefined };

/**
 * The signal of a request shared by waiters: it aborts only when every waiter's signal has
 * aborted (none when some waiter has none). Reads of one node carry that node's signal, which
 * is then used as is, without a new controller or listener. Otherwise the listeners added here
 * are removed by release(), so long-lived node signals do not collect one per read.
 */
export function sharedSignal(waiters: Waiter[]): SharedSignal {
  const first = waiters[0].signal;
  if (!first) return NONE;
  let same = true;
  for (const w of waiters) {
    if (!w.signal) return NONE;
    if (w.signal !== first) same = false;
  }
  if (same) return { signal: first, release: NONE.release };
  const distinct = [...new Set(waiters.map((w) => w.signal as AbortSignal))];
  const ctl = new AbortController();
  let left = distinct.length;
  const one = () => {
    if (--left === 0) ctl.abort();
  };
  const offs = distinct.map((sig) => onAbort(sig, one));
  return {
    signal: ctl.signal,
    release: () => {
      for (const off of offs) off();
    },
  };
}

/**
 * The items of a merged list answer by property. The client checked its shape already; this
 * check stays so that no answer can make the handler throw (defence in depth, no cost to speak of).
 */
export function indexList(list: MeasurementList, ref: string): Map<string, MeasurementListItem> {
  const items = (list as { measurements?: unknown } | null | undefined)?.measurements;
  if (!Array.isArray(items)) {
    throw apiError({
      code: 'EMS_BAD_RESPONSE',
      message: `GET /devices/${ref}/measurements answered without a measurements array`,
      request: { method: 'GET', path: `/devices/${ref}/measurements` },
    });
  }
  const byProp = new Map<string, MeasurementListItem>();
  for (const m of items as MeasurementListItem[]) if (m && typeof m.property === 'string') byProp.set(m.property, m);
  return byProp;
}

export function fanOut(list: MeasurementList, byProp: Map<string, MeasurementListItem>, w: Waiter): Answer {
  const pick = (p: string) => {
    const item = byProp.get(p);
    if (!item)
      throw apiError({
        code: 'EMS_MISSING',
        message: `the service returned no value for property "${p}" of ${list.reference}`,
        request: { method: 'GET', path: `/devices/${list.reference}/measurements` },
      });
    return item;
  };
  const { shape, properties } = w.req;
  if (shape === 'single') {
    const item = pick(properties[0]);
    return {
      timestamp: item.timestamp,
      property: item.property,
      value: item.value,
      unit: item.unit,
      reference: list.reference,
    };
  }
  if (shape === 'map') {
    const measurements: MeasurementMap['measurements'] = {};
    for (const p of properties) {
      const item = pick(p);
      measurements[p] = { value: item.value, unit: item.unit };
    }
    return { reference: list.reference, measurements };
  }
  return { reference: list.reference, measurements: properties.map(pick) };
}
