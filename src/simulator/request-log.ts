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

export class RequestLog {
  private buf: Array<LogEntry | undefined> = new Array(LOG_CAPACITY);
  private head = 0;
  private size = 0;
  private requests = 0;
  private byRoute: Record<string, number> = {};
  private byStatus: Record<string, number> = {};
  private faults: Record<string, number> = {};

  add(e: LogEntry): void {
    this.buf[(this.head + this.size) % LOG_CAPACITY] = e;
    if (this.size < LOG_CAPACITY) this.size++;
    else this.head = (this.head + 1) % LOG_CAPACITY;
    this.requests++;
    this.byRoute[e.route] = (this.byRoute[e.route] ?? 0) + 1;
    const s = String(e.status);
    this.byStatus[s] = (this.byStatus[s] ?? 0) + 1;
  }

  countFault(kind: string): void {
    this.faults[kind] = (this.faults[kind] ?? 0) + 1;
  }

  /** Oldest first. */
  entries(): LogEntry[] {
    const out: LogEntry[] = [];
    for (let i = 0; i < this.size; i++) out.push(this.buf[(this.head + i) % LOG_CAPACITY] as LogEntry);
    return out;
  }

  stats(): SimStats {
    return { requests: this.requests, byRoute: { ...this.byRoute }, byStatus: { ...this.byStatus }, faults: { ...this.faults } };
  }

  clear(): void {
    this.buf = new Array(LOG_CAPACITY);
    this.head = 0;
    this.size = 0;
    this.requests = 0;
    this.byRoute = {};
    this.byStatus = {};
    this.faults = {};
  }
}
