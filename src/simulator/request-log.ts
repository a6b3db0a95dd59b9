/**
 * Bounded log of the API requests the simulator received (the last 10,000) and counters per
 * route and status. Requests to the /sim/* control endpoints are not logged or counted.
 */

export interface LogEntry {
  method: string;
  /** Path with query string, as received. */
  path: string;
  /** Route pattern, e.g. "GET /devices/:ref/measurement"; "unmatched" for unknown routes. */
  route: string;
  /**
   * Parsed JSON body; the raw text (at most 1000 characters) if it was not JSON; absent if none;
   * `"[N bytes, not kept]"` for bodies over 8 KB.
   */
  body?: unknown;
  /** Simulated time of the request, epoch ms. */
  time: number;
  /** HTTP status sent; 0 when the connection was reset by a fault. */
  status: number;
  requestId: string;
}

export interface SimStats {
  /** API requests since start or the last clearLog() / reset(). */
  requests: number;
  byRoute: Record<string, number>;
  byStatus: Record<string, number>;
  /** Injected faults by kind ("500", "503", "429", "reset"). */
  faults: Record<string, number>;
}

export const LOG_CAPACITY = 10_000;

/** A request counter; a cell, so the server's usual route and status are counted without a lookup. */
interface Count {
  n: number;
}

function countOf<K>(counts: Map<K, Count>, key: K): Count {
  let count = counts.get(key);
  if (count === undefined) counts.set(key, (count = { n: 0 }));
  return count;
}

/** A body column's value for "no body" (a logged body may be any JSON value). */
const NO_BODY: unique symbol = Symbol('no body');

/**
 * The entries are kept in columns, not as the objects the server logs, and made into LogEntry
 * objects when read: an entry per request kept for 10,000 requests was a young object the
 * garbage collector copied, and promoted, at every collection.
 */
export class RequestLog {
  private methods: string[] = [];
  private paths: string[] = [];
  private routes: string[] = [];
  private times = new Float64Array(LOG_CAPACITY);
  private statuses = new Float64Array(LOG_CAPACITY);
  private requestIds: string[] = [];
  private bodies: unknown[] = [];
  private head = 0;
  private size = 0;
  private requests = 0;
  private byRoute = new Map<string, Count>();
  private byStatus = new Map<number, Count>();
  /** The counters of the last route and status counted: consecutive requests mostly share them. */
  private lastRoute?: string;
  private lastRouteCount: Count = { n: 0 };
  private lastStatus?: number;
  private lastStatusCount: Count = { n: 0 };
  private faults: Record<string, number> = {};

  /** Logs the entry as it is now (later changes to the object are not seen). */
  add(e: LogEntry): void {
    const slot = (this.head + this.size) % LOG_CAPACITY;
    this.methods[slot] = e.method;
    this.paths[slot] = e.path;
    this.routes[slot] = e.route;
    this.times[slot] = e.time;
    this.statuses[slot] = e.status;
    this.requestIds[slot] = e.requestId;
    this.bodies[slot] = 'body' in e ? e.body : NO_BODY;
    if (this.size < LOG_CAPACITY) this.size++;
    else this.head = (this.head + 1) % LOG_CAPACITY;
    this.requests++;
    if (e.route !== this.lastRoute) {
      this.lastRoute = e.route;
      this.lastRouteCount = countOf(this.byRoute, e.route);
    }
    this.lastRouteCount.n++;
    if (e.status !== this.lastStatus) {
      this.lastStatus = e.status;
      this.lastStatusCount = countOf(this.byStatus, e.status);
    }
    this.lastStatusCount.n++;
  }

  countFault(kind: string): void {
    this.faults[kind] = (this.faults[kind] ?? 0) + 1;
  }

  /** Oldest first. */
  entries(): LogEntry[] {
    const out: LogEntry[] = [];
    for (let k = 0; k < this.size; k++) {
      const slot = (this.head + k) % LOG_CAPACITY;
      const entry: LogEntry = {
        method: this.methods[slot],
        path: this.paths[slot],
        route: this.routes[slot],
        time: this.times[slot],
        status: this.statuses[slot],
        requestId: this.requestIds[slot],
      };
      const body = this.bodies[slot];
      if (body !== NO_BODY) entry.body = body;
      out.push(entry);
    }
    return out;
  }

  stats(): SimStats {
    const byRoute: Record<string, number> = {};
    for (const [route, c] of this.byRoute) byRoute[route] = c.n;
    const byStatus: Record<string, number> = {};
    for (const [status, c] of this.byStatus) byStatus[String(status)] = c.n;
    return { requests: this.requests, byRoute, byStatus, faults: { ...this.faults } };
  }

  clear(): void {
    this.methods = [];
    this.paths = [];
    this.routes = [];
    this.requestIds = [];
    this.bodies = [];
    this.head = 0;
    this.size = 0;
    this.requests = 0;
    this.byRoute = new Map();
    this.byStatus = new Map();
    this.lastRoute = undefined;
    this.lastStatus = undefined;
    this.faults = {};
  }
}
