/**
 * Shared polling schedule. Pollers with the same interval share one timer and run in turn,
 * one every interval / n, so n pollers are spread evenly over the interval instead of all
 * firing on the same millisecond. Turns are kept on an absolute timeline, so timer lateness
 * does not stretch the interval (a late tick runs the turns that are due). The schedule itself
 * allocates nothing per poll: the group's timer is re-armed with refresh() and each poller's
 * completion handlers are made once.
 */
import { performance } from 'node:perf_hooks';

export type PollTask = () => Promise<unknown> | unknown;

/**
 * What a task may return (or resolve to) to back off: it then runs again `nextInTurns` turns after
 * this run's start (1 = the next turn, as usual). Turns are counted, not measured, so a late timer
 * never makes a poller run early, and turns it spends still running count too.
 */
export interface PollOutcome {
  /** Turns from this run's start to the next run, a whole number from 1 (the default). */
  nextInTurns: number;
}

/** The wait a task's result asks for, in turns (1 unless it is a PollOutcome). */
function turnsOf(v: unknown): number {
  const turns = v !== null && typeof v === 'object' ? (v as Partial<PollOutcome>).nextInTurns : undefined;
  return typeof turns === 'number' && turns >= 1 ? Math.min(Math.floor(turns), 1e6) : 1;
}

interface Entry {
  task: PollTask;
  running: boolean;
  /** Turns between two starts (1, or more while the task asks to back off). */
  every: number;
  /** Turns since the last start. */
  since: number;
  settle: (v: unknown) => void;
  fail: (err: unknown) => void;
}

interface Group {
  intervalMs: number;
  entries: Entry[];
  /** Index of the next poller to run. */
  next: number;
  /** When the next turn is due (performance.now() ms); NaN before the first tick. */
  due: number;
  timer?: NodeJS.Timeout;
  /** Delay the timer was created with (refresh() re-arms with the same). */
  delay: number;
}

/** The first run of a new group comes within this many ms (or one turn, if shorter). */
const FIRST_RUN_MS = 50;
/**
 * Shortest time between two ticks of a group. When turns come more often (many pollers),
 * a tick runs every turn that is due: n pollers then start in slots of this length, a few
 * per slot, which costs far less CPU than waking up once per poller and still spreads them
 * over the interval. bench/fleet-polling.js (5,000 pollers every 10 s, 30 s runs): 20 ms
 * slots 40-45 % of a core, 100 ms 38 %, 250 ms 33-36 %, 1 s 35 %.
 */
const MIN_TICK_MS = 250;

export class PollScheduler {
  private readonly groups = new Map<number, Group>();
  /** Called with a poll's error (a poll never throws into the timer). */
  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  /** Adds a poller; returns a function that removes it. The first run comes within one tick. */
  add(intervalMs: number, task: PollTask): () => void {
    const ms = Math.max(10, Math.floor(intervalMs));
    let group = this.groups.get(ms);
    if (!group) this.groups.set(ms, (group = { intervalMs: ms, entries: [], next: 0, due: NaN, delay: 0 }));
    const entry: Entry = {
      task,
      running: false,
      every: 1,
      since: 0,
      settle: (v) => {
        entry.running = false;
        entry.every = turnsOf(v);
      },
      fail: (err) => {
        entry.running = false;
        entry.every = 1;
        this.onError(err);
      },
    };
    group.entries.push(entry);
    if (!group.timer) this.arm(group, Math.min(ms / group.entries.length, FIRST_RUN_MS));
    return () => this.remove(ms, entry);
  }

  get size(): number {
    let count = 0;
    for (const g of this.groups.values()) count += g.entries.length;
    return count;
  }

  stop(): void {
    for (const g of this.groups.values()) if (g.timer) clearTimeout(g.timer);
    this.groups.clear();
  }

  private remove(ms: number, entry: Entry): void {
    const group = this.groups.get(ms);
    if (!group) return;
    const at = group.entries.indexOf(entry);
    if (at < 0) return;
    group.entries.splice(at, 1);
    if (at < group.next) group.next--;
    if (group.entries.length === 0) {
      if (group.timer) clearTimeout(group.timer);
      this.groups.delete(ms);
    }
  }

  /** Arms the group's timer for `delayMs`, reusing the timer when the delay is unchanged. */
  private arm(g: Group, delayMs: number): void {
    const delay = Math.max(1, Math.ceil(delayMs));
    if (g.timer && g.delay === delay) {
      g.timer.refresh();
      return;
    }
    if (g.timer) clearTimeout(g.timer);
    g.delay = delay;
    g.timer = setTimeout(() => this.tick(g), delay);
  }

  private tick(g: Group): void {
    const size = g.entries.length;
    if (size === 0 || this.groups.get(g.intervalMs) !== g) return;
    const step = g.intervalMs / size;
    const now = performance.now();
    // First tick, or the event loop stood still for more than an interval: start afresh
    // rather than run every poller at once.
    if (!(now - g.due <= g.intervalMs)) g.due = now;
    for (let runs = 0; g.due <= now && runs < size && g.entries.length > 0; runs++) {
      if (g.next >= g.entries.length) g.next = 0;
      this.run(g.entries[g.next++]);
      g.due += step;
    }
    if (g.due <= now) g.due = now + step; // every poller ran in this tick: resume the spacing
    if (this.groups.get(g.intervalMs) !== g || g.entries.length === 0) return;
    this.arm(g, Math.max(g.due - now, Math.min(MIN_TICK_MS, g.intervalMs)));
  }

  /** A poller whose previous run has not finished is skipped for this turn (no pile-up when the service is slow). */
  private run(entry: Entry): void {
    entry.since++;
    if (entry.running || entry.since < entry.every) return;
    entry.since = 0;
    entry.running = true;
    let result: unknown;
    try {
      result = entry.task();
    } catch (err) {
      entry.fail(err);
      return;
    }
    if (result !== null && typeof (result as PromiseLike<unknown>)?.then === 'function') {
      Promise.resolve(result).then(entry.settle, entry.fail);
    } else {
      entry.settle(result);
    }
  }
}
