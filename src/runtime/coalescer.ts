/**
 * Read coalescing: a read of a device that has no request of this coalescer in flight goes
 * out at once (no wait: a lone or polled read costs nothing). Reads of a device that arrive
 * while one of its requests is in flight wait at most the window (`coalesceMs`, default 2 ms)
 * for each other and go out as one list request, fanned back out, each caller getting exactly
 * the answer it would have got alone. Whatever the answer, every waiter completes, and nothing
 * here throws from a timer or a promise handler.
 */
import { ApiError, apiError, isAborted, onAbort } from '../client';
import { type Answer, fanOut, indexList, sharedSignal, type Waiter } from './coalescer-merge';
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

interface Batch {
  waiters: Waiter[];
  timer?: NodeJS.Timeout;
}

/** A request in flight that identical reads join. */
interface OpenRead {
  req: ReadRequest;
  answer: Promise<Answer>;
}

/**
 * A device's requests of this coalescer in flight: how many, and the ones identical reads join.
 * One record per device looked up once per read: a lone read (the common case when polling)
 * builds no key string and touches one map.
 */
interface DeviceReads {
  count: number;
  open: OpenRead[];
}

/** Device records kept while idle (a polling fleet's devices); beyond, an idle one is dropped as its read ends. */
const KEPT_RECORDS = 16_384;

export class ReadCoalescer {
  private readonly batches = new Map<string, Batch>();
  /** Requests of this coalescer in flight, by device (a count of 0: none now): a read finding none goes out at once. */
  private readonly inFlight = new Map<string, DeviceReads>();
  private closed = false;
  /** HTTP requests issued (after coalescing), for diagnostics and tests. */
  requests = 0;

  constructor(
    private readonly client: EmsClient,
    private readonly windowMs = 2,
  ) {}

  /**
   * A read whose device and properties are validated already (by the node, which names the msg
   * field): trusted, not checked again, it goes to the client's trusted read path as it is;
   * coalesced with the device's other reads in the window. measurement(), map() and list() are
   * for code that has not validated its input.
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
    // A malformed trusted read (a bug of its caller) is refused here, before it can join or wait.
    if (!Array.isArray(req.properties)) throw new TypeError('a read names its properties as a list');
    if (this.windowMs <= 0 || this.closed) return this.direct(req, o); // a window of 0 turns coalescing off
    const device = req.device;
    const reads = this.inFlight.get(device);
    if (reads !== undefined) {
      const same = openFor(reads, req);
      if (same) return this.join(same, req, o);
    }
    // No peer: nothing to merge with, so no wait.
    if ((reads === undefined || reads.count === 0) && (this.batches.size === 0 || !this.batches.has(device)))
      return this.send(req, o, true, reads);
    return new Promise<Answer>((resolve, reject) => {
      let batch = this.batches.get(device);
      if (!batch) {
        batch = { waiters: [] };
        this.batches.set(device, batch);
        batch.timer = setTimeout(() => this.flushSafely(device), this.windowMs);
      }
      batch.waiters.push({ req, resolve, reject, signal: o?.signal, o });
    });
  }

  /** One request for one read, through the client's trusted path; identical reads arriving while it runs join it. */
  private direct(req: ReadRequest, o?: CallOptions): Promise<Answer> {
    const reads = this.inFlight.get(req.device);
    return this.send(req, o, reads === undefined || openFor(reads, req) === undefined, reads);
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
      return aborted && !isAborted(own) && !this.closed ? this.direct(req, o) : Promise.reject(e);
    });
    if (!own) return joined;
    if (isAborted(own)) return Promise.reject(own.reason);
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
   * settles. With `joinable`, the request is the one identical reads join until it settles;
   * one handler does both, so a read costs one reaction, not two. `known`: the device's record
   * as the caller found it (undefined: none, or not looked up).
   */
  private send(req: ReadRequest, o: CallOptions | undefined, joinable: boolean, known?: DeviceReads): Promise<Answer> {
    this.requests++;
    let answer: Promise<Answer>;
    let counted = true;
    try {
      answer = this.client.read(req, o);
    } catch (e) {
      answer = Promise.reject(e);
      counted = false;
      if (!joinable) return answer;
    }
    const device = req.device;
    let reads = known ?? this.inFlight.get(device);
    if (reads === undefined) {
      reads = { count: 0, open: [] };
      this.inFlight.set(device, reads);
    }
    if (counted) reads.count++;
    const open = joinable ? { req, answer } : undefined;
    if (open) reads.open.push(open);
    const entry = reads;
    const done = () => {
      if (counted) entry.count--;
      if (open) {
        // Most often the only (or the last) open read: pop allocates nothing, splice a removed-elements array.
        const list = entry.open;
        if (list[list.length - 1] === open) list.pop();
        else {
          const at = list.indexOf(open);
          if (at >= 0) list.splice(at, 1);
        }
      }
      // A polled device's record stays between its reads (no map insert and delete per read);
      // idle records are dropped once there are more than KEPT_RECORDS.
      if (
        entry.count === 0 &&
        entry.open.length === 0 &&
        this.inFlight.size > KEPT_RECORDS &&
        this.inFlight.get(device) === entry
      )
        this.inFlight.delete(device);
    };
    answer.then(done, done);
    return answer;
  }

  /** The timer's entry: a failure while flushing rejects the batch's waiters instead of escaping the timer. */
  private flushSafely(ref: string): void {
    const batch = this.batches.get(ref);
    this.batches.delete(ref);
    if (!batch) return;
    try {
      this.flush(ref, batch);
    } catch (e) {
      for (const w of batch.waiters) w.reject(e);
    }
  }

  private flush(ref: string, b: Batch): void {
    let waiters = b.waiters;
    if (waiters.some((w) => isAborted(w.signal))) {
      waiters = [];
      for (const w of b.waiters) {
        if (isAborted(w.signal)) w.reject(w.signal!.reason);
        else waiters.push(w);
      }
      if (waiters.length === 0) return;
    }
    // A lone read (the common case when polling) goes out as it came.
    if (waiters.length === 1) {
      const waiter = waiters[0];
      this.direct(waiter.req, waiter.o).then(waiter.resolve, waiter.reject);
      return;
    }
    // Identical reads share one request; a lone kind of read keeps its own endpoint.
    const groups = new Map<string, Waiter[]>();
    for (const w of waiters) {
      const key = keyOf(w.req);
      const group = groups.get(key);
      if (group) group.push(w);
      else groups.set(key, [w]);
    }
    if (groups.size === 1) {
      const [first] = waiters;
      this.share(waiters, (signal) => this.direct(first.req, { signal }));
      return;
    }
    const union = [...new Set(waiters.flatMap((w) => w.req.properties))];
    const shared = sharedSignal(waiters);
    (
      this.send(
        { device: ref, shape: 'list', properties: union },
        { signal: shared.signal },
        false,
      ) as Promise<MeasurementList>
    ).then(
      (list) => {
        shared.release();
        // An answer of the wrong shape (checked by the client, EMS_BAD_RESPONSE) rejects every waiter
        // with that one error.
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
        shared.release();
        // Refused (e.g. one caller named an unknown property): every caller falls back to its own
        // request, so one bad read cannot fail others.
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
    const shared = sharedSignal(waiters);
    send(shared.signal).then(
      (a) => {
        shared.release();
        for (const w of waiters) w.resolve(a);
      },
      (e) => {
        shared.release();
        for (const w of waiters) w.reject(e);
      },
    );
  }
}

/** What makes two reads identical: device, shape and properties in order. */
function keyOf(req: ReadRequest): string {
  return `${req.device}\u0000${req.shape}\u0000${req.properties.join(',')}`;
}

/** Whether two reads of one device are identical: shape and properties in order. */
function sameRead(a: ReadRequest, b: ReadRequest): boolean {
  if (a.shape !== b.shape) return false;
  const left = a.properties;
  const right = b.properties;
  if (left.length !== right.length) return false;
  for (let i = 0; i < left.length; i++) if (left[i] !== right[i]) return false;
  return true;
}

/** The request in flight of a device that a read identical to `req` joins, if any. */
function openFor(reads: DeviceReads, req: ReadRequest): Promise<Answer> | undefined {
  for (const open of reads.open) if (sameRead(open.req, req)) return open.answer;
  return undefined;
}
