/**
 * The turns of the requests waiting for the request budget (budget.ts) in budgetMode 'queue':
 * when each would go, if they go in order as soon as every cap lets them. Knowing the turn of
 * the next one as it arrives is what lets the budget refuse at once a request that could not go
 * within the queue's bound, however many wait ahead of it (for a concurrency slot or for the
 * window), instead of after a wait with no bound.
 */
import type { Attempt } from '../client';
import { SENT, type Ring } from './budget-ring';

/** One cap in force: its name, limit and window. */
export interface CapRing {
  cap: 'maxPerMinute' | 'maxPerDay';
  limit: number;
  ring: Ring;
}

/** The turn of the next request: when it may go, and the cap that holds it back (none: it may go now). */
export interface Turn {
  at: number;
  cap?: CapRing;
  /** Requests waiting ahead of it. */
  ahead: number;
}

export class Turns {
  /** Admitted requests not yet in their slot (they wait for a slot or a 429 pause). */
  readonly admitted = new Set<Attempt>();
  /** The turns of the waiting requests, in order, from `head` on (valid unless `stale`). */
  private times: number[] = [];
  private head = 0;
  private stale = false;
  /** The last turn worked out, and what it depends on (so a flood of refusals costs O(1) each). */
  private last?: { key: string; turn: Turn };

  constructor(
    private readonly caps: () => CapRing[],
    private readonly sentTotal: () => number,
  ) {}

  /** The turn of a request arriving at `t` behind `waiting` others (those of the budget's queue and the admitted ones). */
  next(t: number, waiting: number): Turn {
    if (this.stale || this.times.length - this.head !== waiting) this.rebuild(t, waiting);
    const key = `${waiting}|${this.sentTotal()}|${Math.floor(t / 1000)}|${this.head}`;
    if (this.last?.key === key) return this.last.turn;
    const turn = this.turnAfter(t);
    this.last = { key, turn };
    return turn;
  }

  /** An admitted request, with its turn (from next()). */
  admit(a: Attempt, at: number): void {
    this.admitted.add(a);
    this.times.push(at);
    this.last = undefined;
  }

  /** The first of the waiting requests was sent (in order, as its turn foresaw). */
  sentFirst(): void {
    this.last = undefined;
    if (this.stale || this.head >= this.times.length) return;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * The turns no longer hold (a wait ended unsent, an attempt went that was not waiting, new caps):
   * they are worked out again, once, when the next request arrives. Otherwise they are kept in
   * order and extended one at a time.
   */
  invalidate(): void {
    this.stale = true;
    this.last = undefined;
  }

  clear(): void {
    this.admitted.clear();
    this.invalidate();
  }

  /** Works out the turns of `n` waiting requests from now: in order, each as soon as every cap lets it. */
  private rebuild(t: number, n: number): void {
    this.times = [];
    this.head = 0;
    this.stale = false;
    this.last = undefined;
    for (let i = 0; i < n; i++) this.times.push(this.turnAfter(t).at);
  }

  /**
   * The turn of one more request after the waiting ones. Under a cap of `limit` per window, the
   * k-th request from now may go once the attempt `limit` places before it (counting those sent
   * and those waiting) has left the window: an attempt sent in the window (its bucket,
   * Ring.freesAt) or one still waiting (its own turn, plus the window).
   */
  private turnAfter(t: number): Turn {
    const ahead = this.times.length - this.head;
    const turns = ahead + 1;
    let at = ahead > 0 ? Math.max(t, this.times[this.times.length - 1]) : t;
    let cap: CapRing | undefined;
    let bound = -Infinity;
    for (const c of this.caps()) {
      c.ring.advance(t);
      const sent = c.ring.sums[SENT];
      // The attempt `limit` places before this one, counting from the oldest still in the window.
      const idx = sent + turns - c.limit;
      if (idx <= 0) continue;
      const free =
        idx <= sent
          ? c.ring.freesAt(SENT, c.limit - turns + 1, t)
          : c.ring.leavesAt(this.times[this.head + idx - sent - 1]);
      if (free > bound) {
        bound = free;
        cap = c;
      }
    }
    at = Math.max(at, bound);
    return { at, cap: at > t ? cap : undefined, ahead };
  }
}
