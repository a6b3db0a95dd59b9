/**
 * Read coalescing: a read of a device that has no request of this coalescer in flight goes
 * out at once (no wait: a lone or polled read costs nothing). Reads of a device that arrive
 * while one of its requests is in flight are concurrent: they wait at most the window
 * (`coalesceMs`, default 2 ms) for each other and go out as one list request, fanned back
 * out, each caller getting exactly the answer it would have got alone. Identical concurrent
 * reads share one request. A window of 0 turns coalescing off.
 * If the merged request is refused (400/404/422, e.g. one caller named an unknown
 * property), every caller falls back to its own request, so one bad read cannot fail others.
 * Whatever the answer, every waiter completes: an answer of the wrong shape (checked by the
 * client, EMS_BAD_RESPONSE) rejects every waiter with that one error, and nothing here throws
 * from a timer or a promise handler.
 *
 * Reads come in as typed ReadRequests that are validated already (by the node, which names
 * the msg field); they are trusted here and go to the client's trusted read path as they are.
 * measurement(), map() and list() are for code that has not validated its input.
 */
import { ApiError, apiError, onAbort } from '../client';
import type { CallOptions, EmsClient } from '../client';
import { validateReadRequest } from '../protocol';
import type {
  Measurement,
  MeasurementList,
  MeasurementListItem,
  MeasurementMap,
  ReadAnswers,
  ReadRequest,
  ReadShape,
} from '../protocol';

type Answer = Measurement | MeasurementMap | MeasurementList;

interface Waiter {
  req: ReadRequest;
  resolve: (a: Answer) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  /** The caller's options, passed on as they are when the read goes out alone. */
  o?: CallOptions;
}

interface Batch {
  waiters: Waiter[];
  timer?: NodeJS.Timeout;
}

export class ReadCoalescer {
  private readonly batches = new Map<string, Batch>();
  /** Requests of this coalescer in flight, by device: a read finding none goes out at once. */
  private readonly inFlight = new Map<string, number>();
  /** The request in flight for each kind of read (device, shape, properties): an identical read joins it. */
  private readonly open = new Map<string, Promise<Answer>>();
  private closed = false;
  /** HTTP requests issued (after coalescing), for diagnostics and tests. */
  requests = 0;

  constructor(
    private readonly client: EmsClient,
    private readonly windowMs = 2,
  ) {}

  /**
   * A read whose device and properties are validated already (trusted, not checked again);
   * coalesced with the device's other reads in the window.
   */
  read<S extends ReadShape>(req: ReadRequest<S>, o?: CallOptions): Promise<ReadAnswers[S]> {
    return this.enqueue(req, o) as Promise<ReadAnswers[S]>;
  }

  /** For code: validates (fields deviceReference, property), then reads. */
  measurement(device: string, property: string, o?: CallOptions): Promise<Measurement> {
    return this.read(validateReadRequest('single', device, property), o);
  }

  /** For code: validates (fields deviceReference, properties), then reads. */
  map(device: string, properties: string[] | string, o?: CallOptions): Promise<MeasurementMap> {
    return this.read(validateReadRequest('map', device, properties), o);
  }

  /** For code: validates (fields deviceReference, properties), then reads. */
  list(device: string, properties: string[] | string, o?: CallOptions): Promise<MeasurementList> {
    return this.read(validateReadRequest('list', device, properties), o);
  }

  /** Rejects every waiting read and stops the timers. */
  close(): void {
    this.closed = true;
    for (const [, b] of this.batches) {
      if (b.timer) clearTimeout(b.timer);
      for (const w of b.waiters)
        w.reject(
          apiError({ code: 'EMS_CLOSED', message: 'read not sent: closed', request: { method: 'GET', path: '-' } }),
        );
    }
    this.batches.clear();
  }

  private enqueue(req: ReadRequest, o?: CallOptions): Promise<Answer> {
    try {
      return this.route(req, o);
    } catch (e) {
      // A malformed trusted read (a bug of its caller) rejects; it never throws at the call.
      return Promise.reject(e);
    }
  }

  private route(req: ReadRequest, o?: CallOptions): Promise<Answer> {
    if (this.windowMs <= 0 || this.closed) return this.direct(req, o);
    const ref = req.device;
    const k = keyOf(req);
    const same = this.open.get(k);
    if (same) return this.join(same, req, o);
    // No peer: nothing to merge with, so no wait.
    // (No identical read is open under `k`: looked up above.)
    if (!this.batches.has(ref) && !this.inFlight.get(ref)) return this.send(req, o, k);
    return new Promise<Answer>((resolve, reject) => {
      let b = this.batches.get(ref);
      if (!b) {
        b = { waiters: [] };
        this.batches.set(ref, b);
        b.timer = setTimeout(() => this.flushSafely(ref), this.windowMs);
      }
      b.waiters.push({ req, resolve, reject, signal: o?.signal, o });
    });
  }

  /** One request for one read, through the client's trusted path; identical reads arriving while it runs join it. */
  private direct(req: ReadRequest, o?: CallOptions, k = keyOf(req)): Promise<Answer> {
    return this.send(req, o, this.open.has(k) ? undefined : k);
  }

  /**
   * An identical read joins the request in flight: it gets that answer or error, except when the
   * request was aborted by its own caller (then this read goes out alone), and its own signal
   * still ends its wait.
   */
  private join(p: Promise<Answer>, req: ReadRequest, o?: CallOptions): Promise<Answer> {
    const own = o?.signal;
    const joined = p.catch((e: unknown) => {
      const aborted = e instanceof ApiError && e.code === 'EMS_ABORTED';
      return aborted && !own?.aborted && !this.closed ? this.direct(req, o) : Promise.reject(e);
    });
    if (!own) return joined;
    if (own.aborted) return Promise.reject(own.reason);
    // Reads of one node share its signal: one listener on it for all (abort-hub.ts), not one each.
    return new Promise<Answer>((resolve, reject) => {
      const off = onAbort(own, () => reject(own.reason));
      joined.then(
        (a) => {
          off();
          resolve(a);
        },
        (e) => {
          off();
          reject(e);
        },
      );
    });
  }

  /**
   * Sends one request and keeps the device's in-flight count; the count drops however it
   * settles. With `open`, the request is the one identical reads join (under that key) until it
   * settles; one handler does both, so a read costs one reaction, not two.
   */
  private send(req: ReadRequest, o?: CallOptions, open?: string): Promise<Answer> {
    this.requests++;
    let p: Promise<Answer>;
    try {
      p = this.client.read(req, o);
    } catch (e) {
      p = Promise.reject(e);
      if (open !== undefined) this.opened(open, p);
      return p;
    }
    const ref = req.device;
    this.inFlight.set(ref, (this.inFlight.get(ref) ?? 0) + 1);
    if (open !== undefined) this.open.set(open, p);
    const done = () => {
      const n = (this.inFlight.get(ref) ?? 1) - 1;
      if (n > 0) this.inFlight.set(ref, n);
      else this.inFlight.delete(ref);
      if (open !== undefined && this.open.get(open) === p) this.open.delete(open);
    };
    p.then(done, done);
    return p;
  }

  /** `p` is what identical reads join until it settles. */
  private opened(k: string, p: Promise<Answer>): void {
    this.open.set(k, p);
    const clear = () => {
      if (this.open.get(k) === p) this.open.delete(k);
    };
    p.then(clear, clear);
  }

  /** The timer's entry: a failure while flushing rejects the batch's waiters instead of escaping the timer. */
  private flushSafely(ref: string): void {
    const b = this.batches.get(ref);
    this.batches.delete(ref);
    if (!b) return;
    try {
      this.flush(ref, b);
    } catch (e) {
      for (const w of b.waiters) w.reject(e);
    }
  }

  private flush(ref: string, b: Batch): void {
    let waiters = b.waiters;
    if (waiters.some((w) => w.signal?.aborted)) {
      waiters = [];
      for (const w of b.waiters) {
        if (w.signal?.aborted) w.reject(w.signal.reason);
        else waiters.push(w);
      }
      if (waiters.length === 0) return;
    }
    // A lone read (the common case when polling) goes out as it came.
    if (waiters.length === 1) {
      const w = waiters[0];
      this.direct(w.req, w.o).then(w.resolve, w.reject);
      return;
    }
    // Identical reads share one request; a lone kind of read keeps its own endpoint.
    const groups = new Map<string, Waiter[]>();
    for (const w of waiters) {
      const key = keyOf(w.req);
      const g = groups.get(key);
      if (g) g.push(w);
      else groups.set(key, [w]);
    }
    if (groups.size === 1) {
      const [first] = waiters;
      this.share(waiters, (signal) => this.direct(first.req, { signal }));
      return;
    }
    const union = [...new Set(waiters.flatMap((w) => w.req.properties))];
    const s = sharedSignal(waiters);
    (
      this.send({ device: ref, shape: 'list', properties: union }, { signal: s.signal }) as Promise<MeasurementList>
    ).then(
      (list) => {
        s.release();
        let byProp: Map<string, MeasurementListItem>;
        try {
          byProp = indexList(list, ref);
        } catch (e) {
          for (const w of waiters) w.reject(e);
          return;
        }
        for (const w of waiters) {
          try {
            w.resolve(fanOut(list, byProp, w));
          } catch (e) {
            w.reject(e);
          }
        }
      },
      (err) => {
        s.release();
        if (err instanceof ApiError && (err.status === 400 || err.status === 404 || err.status === 422)) {
          for (const [, ws] of groups) {
            try {
              this.share(ws, (signal) => this.direct(ws[0].req, { signal }));
            } catch (e) {
              for (const w of ws) w.reject(e);
            }
          }
        } else for (const w of waiters) w.reject(err);
      },
    );
  }

  /** One request for identical reads; every waiter gets its answer or its error. */
  private share(waiters: Waiter[], send: (signal: AbortSignal | undefined) => Promise<Answer>): void {
    const s = sharedSignal(waiters);
    send(s.signal).then(
      (a) => {
        s.release();
        for (const w of waiters) w.resolve(a);
      },
      (e) => {
        s.release();
        for (const w of waiters) w.reject(e);
      },
    );
  }
}

/** What makes two reads identical: device, shape and properties in order. */
function keyOf(req: ReadRequest): string {
  return `${req.device}\u0000${req.shape}\u0000${req.properties.join(',')}`;
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
function sharedSignal(waiters: Waiter[]): SharedSignal {
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
function indexList(list: MeasurementList, ref: string): Map<string, MeasurementListItem> {
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

function fanOut(list: MeasurementList, byProp: Map<string, MeasurementListItem>, w: Waiter): Answer {
  const pick = (p: string) => {
    const m = byProp.get(p);
    if (!m)
      throw apiError({
        code: 'EMS_MISSING',
        message: `the service returned no value for property "${p}" of ${list.reference}`,
        request: { method: 'GET', path: `/devices/${list.reference}/measurements` },
      });
    return m;
  };
  const { shape, properties } = w.req;
  if (shape === 'single') {
    const m = pick(properties[0]);
    return { timestamp: m.timestamp, property: m.property, value: m.value, unit: m.unit, reference: list.reference };
  }
  if (shape === 'map') {
    const measurements: MeasurementMap['measurements'] = {};
    for (const p of properties) {
      const m = pick(p);
      measurements[p] = { value: m.value, unit: m.unit };
    }
    return { reference: list.reference, measurements };
  }
  return { reference: list.reference, measurements: properties.map(pick) };
}
