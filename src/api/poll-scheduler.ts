/**
 * Shared polling schedule. Pollers with the same interval share one timer that ticks
 * every interval / n and runs the next poller in turn, so n pollers are spread evenly over
 * the interval instead of all firing on the same millisecond. A poller whose previous run
 * has not finished is skipped for that turn (no pile-up when the service is slow).
 */
export type PollTask = () => Promise<unknown> | unknown;

interface Entry {
  task: PollTask;
  running: boolean;
}

interface Group {
  intervalMs: number;
  entries: Entry[];
  next: number;
  timer?: NodeJS.Timeout;
}

export class PollScheduler {
  private readonly groups = new Map<number, Group>();
  /** Called with a poll's error (a poll never throws into the timer). */
  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  /** Adds a poller; returns a function that removes it. The first run comes within one tick. */
  add(intervalMs: number, task: PollTask): () => void {
    const ms = Math.max(10, Math.floor(intervalMs));
    let g = this.groups.get(ms);
    if (!g) this.groups.set(ms, (g = { intervalMs: ms, entries: [], next: 0 }));
    const entry: Entry = { task, running: false };
    g.entries.push(entry);
    this.arm(g);
    return () => this.remove(ms, entry);
  }

  get size(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.entries.length;
    return n;
  }

  stop(): void {
    for (const g of this.groups.values()) if (g.timer) clearTimeout(g.timer);
    this.groups.clear();
  }

  private remove(ms: number, entry: Entry): void {
    const g = this.groups.get(ms);
    if (!g) return;
    const i = g.entries.indexOf(entry);
    if (i < 0) return;
    g.entries.splice(i, 1);
    if (i < g.next) g.next--;
    if (g.entries.length === 0) {
      if (g.timer) clearTimeout(g.timer);
      this.groups.delete(ms);
    }
  }

  private arm(g: Group): void {
    if (g.timer) return;
    const tick = () => {
      g.timer = undefined;
      if (g.entries.length === 0) return;
      if (g.next >= g.entries.length) g.next = 0;
      const entry = g.entries[g.next++];
      this.run(entry);
      if (this.groups.get(g.intervalMs) === g) {
        g.timer = setTimeout(tick, g.intervalMs / g.entries.length);
      }
    };
    g.timer = setTimeout(tick, Math.min(g.intervalMs / Math.max(1, g.entries.length), 50));
  }

  private run(entry: Entry): void {
    if (entry.running) return;
    entry.running = true;
    let result: unknown;
    try {
      result = entry.task();
    } catch (err) {
      entry.running = false;
      this.onError(err);
      return;
    }
    Promise.resolve(result).then(
      () => { entry.running = false; },
      (err) => { entry.running = false; this.onError(err); },
    );
  }
}
