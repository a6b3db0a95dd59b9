/**
 * Read coalescing: reads of the same device that arrive within a short window (default
 * 2 ms) are merged into one list request and fanned back out, each caller getting exactly
 * the answer it would have got alone. Identical concurrent reads share one request.
 * If the merged request is refused (400/404/422, e.g. one caller named an unknown
 * property), every caller falls back to its own request, so one bad read cannot fail others.
 */
import { ApiError } from './errors';
import { validateProperties, validateProperty, validateReference } from './validate';
import type { CallOptions, EmsClient } from './client';
import type { Measurement, MeasurementList, MeasurementMap } from './types';

type Shape = 'single' | 'map' | 'list';
type Answer = Measurement | MeasurementMap | MeasurementList;

interface Waiter {
  shape: Shape;
  props: string[];
  resolve: (a: Answer) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
}

interface Batch {
  waiters: Waiter[];
  timer?: NodeJS.Timeout;
}

export class ReadCoalescer {
  private readonly batches = new Map<string, Batch>();
  private closed = false;
  /** HTTP requests issued (after coalescing), for diagnostics and tests. */
  requests = 0;

  constructor(private readonly client: EmsClient, private readonly windowMs = 2) {}

  measurement(device: string, property: string, o?: CallOptions): Promise<Measurement> {
    return this.enqueue(validateReference(device, 'deviceReference'), 'single', [validateProperty(property, 'property')], o) as Promise<Measurement>;
  }

  map(device: string, properties: string[] | string, o?: CallOptions): Promise<MeasurementMap> {
    return this.enqueue(validateReference(device, 'deviceReference'), 'map', validateProperties(properties, 'properties'), o) as Promise<MeasurementMap>;
  }

  list(device: string, properties: string[] | string, o?: CallOptions): Promise<MeasurementList> {
    return this.enqueue(validateReference(device, 'deviceReference'), 'list', validateProperties(properties, 'properties'), o) as Promise<MeasurementList>;
  }

  /** Rejects every waiting read and stops the timers. */
  close(): void {
    this.closed = true;
    for (const [, b] of this.batches) {
      if (b.timer) clearTimeout(b.timer);
      for (const w of b.waiters) w.reject(new ApiError({ code: 'EMS_CLOSED', message: 'read not sent: closed', request: { method: 'GET', path: '-' } }));
    }
    this.batches.clear();
  }

  private enqueue(ref: string, shape: Shape, props: string[], o?: CallOptions): Promise<Answer> {
    if (this.windowMs <= 0 || this.closed) return this.direct(ref, shape, props, o?.signal);
    return new Promise<Answer>((resolve, reject) => {
      let b = this.batches.get(ref);
      if (!b) {
        b = { waiters: [] };
        this.batches.set(ref, b);
        b.timer = setTimeout(() => this.flush(ref), this.windowMs);
      }
      b.waiters.push({ shape, props, resolve, reject, signal: o?.signal });
    });
  }

  private direct(ref: string, shape: Shape, props: string[], signal?: AbortSignal): Promise<Answer> {
    this.requests++;
    const o = { signal };
    if (shape === 'single') return this.client.getMeasurement(ref, props[0], o);
    if (shape === 'map') return this.client.getMeasurementsMap(ref, props, o);
    return this.client.getMeasurementsList(ref, props, o);
  }

  private flush(ref: string): void {
    const b = this.batches.get(ref);
    this.batches.delete(ref);
    if (!b) return;
    const waiters = b.waiters.filter((w) => {
      if (!w.signal?.aborted) return true;
      w.reject(w.signal.reason);
      return false;
    });
    // Identical reads share one request; a lone kind of read keeps its own endpoint.
    const groups = new Map<string, Waiter[]>();
    for (const w of waiters) {
      const key = `${w.shape}:${w.props.join(',')}`;
      groups.set(key, [...(groups.get(key) ?? []), w]);
    }
    if (groups.size === 1) {
      const [first] = waiters;
      const signal = allAborted(waiters);
      this.share(waiters, track(this.direct(ref, first.shape, first.props, signal), signal));
      return;
    }
    const union = [...new Set(waiters.flatMap((w) => w.props))];
    this.requests++;
    const signal = allAborted(waiters);
    track(this.client.getMeasurementsList(ref, union, { signal }), signal).then(
      (list) => {
        for (const w of waiters) {
          try {
            w.resolve(fanOut(list, w));
          } catch (e) {
            w.reject(e);
          }
        }
      },
      (err) => {
        if (err instanceof ApiError && (err.status === 400 || err.status === 404 || err.status === 422)) {
          for (const [, ws] of groups) {
            const sig = allAborted(ws);
            this.share(ws, track(this.direct(ref, ws[0].shape, ws[0].props, sig), sig));
          }
        } else for (const w of waiters) w.reject(err);
      },
    );
  }

  private share(waiters: Waiter[], p: Promise<Answer>): void {
    p.then((a) => waiters.forEach((w) => w.resolve(a)), (e) => waiters.forEach((w) => w.reject(e)));
  }
}

/**
 * A signal that aborts only when every waiter's signal has aborted. The listeners it adds are
 * removed when the request settles (`track`), so long-lived node signals do not collect them.
 */
function allAborted(waiters: Waiter[]): AbortSignal | undefined {
  const signals = waiters.map((w) => w.signal);
  if (signals.some((s) => !s)) return undefined;
  if (signals.length === 1) return signals[0];
  const ctl = new AbortController();
  let left = signals.length;
  const onAbort = () => { if (--left === 0) ctl.abort(); };
  for (const s of signals as AbortSignal[]) s.addEventListener('abort', onAbort, { once: true });
  disposers.set(ctl.signal, () => { for (const s of signals as AbortSignal[]) s.removeEventListener('abort', onAbort); });
  return ctl.signal;
}

const disposers = new WeakMap<AbortSignal, () => void>();

/** Removes the listeners of an allAborted() signal once its request has settled. */
function track<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  const dispose = signal && disposers.get(signal);
  return dispose ? p.finally(dispose) : p;
}

function fanOut(list: MeasurementList, w: Waiter): Answer {
  const byProp = new Map(list.measurements.map((m) => [m.property, m]));
  const pick = (p: string) => {
    const m = byProp.get(p);
    if (!m) throw new ApiError({ code: 'EMS_MISSING', message: `the service returned no value for property "${p}" of ${list.reference}`, request: { method: 'GET', path: `/devices/${list.reference}/measurements` } });
    return m;
  };
  if (w.shape === 'single') {
    const m = pick(w.props[0]);
    return { timestamp: m.timestamp, property: m.property, value: m.value, unit: m.unit, reference: list.reference };
  }
  if (w.shape === 'map') {
    const measurements: MeasurementMap['measurements'] = {};
    for (const p of w.props) {
      const m = pick(p);
      measurements[p] = { value: m.value, unit: m.unit };
    }
    return { reference: list.reference, measurements };
  }
  return { reference: list.reference, measurements: w.props.map(pick) };
}
