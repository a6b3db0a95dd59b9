/**
 * A counting semaphore: at most `limit` holders at once, FIFO, abortable while waiting.
 * Used to bound the requests in flight of one client, shared by every node using it.
 *
 * Waiting is O(1) per acquire and release however long the queue grows, and each abort
 * signal gets one listener however many waiters carry it (the signal of a node or a client
 * is shared by all its requests, so a long queue does not pile listeners on it).
 */
interface Waiter {
  grant: () => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  /** Set when the waiter left the queue (granted or aborted); it is then skipped. */
  done: boolean;
}

interface SignalWatch {
  waiters: Set<Waiter>;
  onAbort: () => void;
}

export class Limiter {
  private active = 0;
  /** FIFO of waiters; entries before `head` are consumed (compacted now and then). */
  private queue: Waiter[] = [];
  private head = 0;
  private waitingCount = 0;
  private readonly watches = new Map<AbortSignal, SignalWatch>();

  constructor(private limit: number) {
    if (!(limit >= 1)) this.limit = 1;
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waitingCount;
  }

  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { grant: resolve, reject, signal, done: false };
      this.queue.push(w);
      this.waitingCount++;
      if (signal) this.watch(signal, w);
    });
  }

  release(): void {
    while (this.head < this.queue.length) {
      const w = this.queue[this.head];
      this.queue[this.head++] = undefined as unknown as Waiter;
      if (w.done) continue;
      this.leave(w);
      this.compact();
      w.grant(); // the slot passes straight to the next waiter
      return;
    }
    this.compact();
    if (this.active > 0) this.active--;
  }

  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  /** Marks a waiter as out of the queue and drops its signal watch. */
  private leave(w: Waiter): void {
    w.done = true;
    this.waitingCount--;
    if (!w.signal) return;
    const watch = this.watches.get(w.signal);
    if (!watch) return;
    watch.waiters.delete(w);
    if (watch.waiters.size === 0) {
      w.signal.removeEventListener('abort', watch.onAbort);
      this.watches.delete(w.signal);
    }
  }

  private watch(signal: AbortSignal, w: Waiter): void {
    let watch = this.watches.get(signal);
    if (!watch) {
      const waiters = new Set<Waiter>();
      const onAbort = () => {
        this.watches.delete(signal);
        for (const x of waiters) {
          x.done = true;
          this.waitingCount--;
          x.reject(signal.reason ?? new Error('aborted'));
        }
        waiters.clear();
        this.compact();
      };
      watch = { waiters, onAbort };
      this.watches.set(signal, watch);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    watch.waiters.add(w);
  }

  /** Drops consumed entries once they are the larger part of the queue. */
  private compact(): void {
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}

/** Runs `fn` over `items` with at most `limit` at once; results keep the input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return out;
}
