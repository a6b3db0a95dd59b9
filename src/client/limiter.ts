/**
 * A counting semaphore: at most `limit` holders at once, FIFO, abortable while waiting.
 * Used to bound the requests in flight of one client, shared by every node using it.
 *
 * Waiting is O(1) per acquire and release however long the queue grows, and each abort
 * signal gets one listener however many waiters carry it (abort-hub.ts: the signal of a node
 * or a client is shared by all its requests, so a long queue does not pile listeners on it,
 * and a polling node's signal is not subscribed and unsubscribed again for each poll).
 */
import { type Hub, isAborted, joinAbort, leaveAbort, type SlotWaiter } from './abort-hub';

/** One waiting acquire; it watches its signal through the abort hub with no closure of its own. */
class Waiter implements SlotWaiter {
  /** Set when the waiter left the queue (granted or aborted); it is then skipped. */
  done = false;
  abortSlot = -1;
  /** The hub of its signal while it watches it (abort-hub.ts). */
  hub?: Hub;

  constructor(
    readonly grant: () => void,
    readonly reject: (e: unknown) => void,
    readonly signal: AbortSignal | undefined,
    private readonly onAborted: (w: Waiter) => void,
  ) {}

  notifyAbort(): void {
    this.onAborted(this);
  }
}

export class Limiter {
  private active = 0;
  /** FIFO of waiters; entries before `head` are consumed (compacted now and then). */
  private queue: Waiter[] = [];
  private head = 0;
  private waitingCount = 0;
  private readonly onAborted = (w: Waiter): void => this.aborted(w);

  constructor(private limit: number) {
    if (!(limit >= 1)) this.limit = 1;
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waitingCount;
  }

  /** Takes a slot when one is free now (then `release` it); false: none is. */
  tryAcquire(): boolean {
    if (this.active >= this.limit) return false;
    this.active++;
    return true;
  }

  acquire(signal?: AbortSignal): Promise<void> {
    if (signal && isAborted(signal)) return Promise.reject(signal.reason ?? new Error('aborted'));
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = new Waiter(resolve, reject, signal, this.onAborted);
      this.queue.push(waiter);
      this.waitingCount++;
      if (signal) waiter.hub = joinAbort(signal, waiter);
    });
  }

  release(): void {
    while (this.head < this.queue.length) {
      const waiter = this.queue[this.head];
      this.queue[this.head++] = undefined as unknown as Waiter;
      if (waiter.done) continue;
      this.leave(waiter);
      this.compact();
      waiter.grant(); // the slot passes straight to the next waiter
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
    if (w.hub) leaveAbort(w.hub, w);
  }

  /** The waiter's signal aborted while it waited: it leaves the queue with the signal's reason. */
  private aborted(w: Waiter): void {
    if (w.done) return;
    w.done = true;
    this.waitingCount--;
    w.reject(w.signal?.reason ?? new Error('aborted'));
    this.compact();
  }

  /** Drops consumed entries once they are the larger part of the queue. */
  private compact(): void {
    if (this.head === this.queue.length) {
      if (this.head === 0) return; // empty already: a store to `length` is no free operation
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}

/** Runs `fn` over `items` with at most `limit` at once; results keep the input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      out[index] = await fn(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return out;
}
