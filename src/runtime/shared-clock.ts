/**
 * One timer for many deadlines (a schedule node's timers stay at one). A SharedClock
 * is a CheckClock (delivery checks) and the player's Timers at once: every `setTimeout` given
 * to it is a deadline in a list, and the clock it is built on holds exactly one timer, for the
 * earliest deadline (none when the list is empty). Deadlines due together run in the order
 * they were set; a throw from one does not stop the others. Waits longer than setTimeout
 * takes are chained.
 */
import type { CheckClock } from './delivery-check';

/** setTimeout's longest delay; a longer wait is armed again. */
const MAX_TIMER_MS = 2_000_000_000;

interface Deadline {
  at: number;
  fn: () => void;
}

export class SharedClock implements CheckClock {
  private readonly deadlines = new Map<number, Deadline>();
  private seq = 0;
  private timer: unknown;
  private timerAt?: number;
  private firing = false;
  private closed = false;

  /** @param base the clock whose one timer this multiplexes (the delivery check's clock) */
  constructor(private readonly base: CheckClock) {}

  now(): number {
    return this.base.now();
  }

  /** Deadlines pending (tests, diagnostics). */
  get size(): number {
    return this.deadlines.size;
  }

  /** Whether the base clock holds a timer of this one now. */
  get armed(): boolean {
    return this.timer !== undefined;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    if (this.closed) return id; // never runs
    this.deadlines.set(id, { at: this.now() + Math.max(0, Number.isFinite(ms) ? ms : 0), fn });
    this.arm();
    return id;
  }

  clearTimeout(id: unknown): void {
    if (typeof id === 'number' && this.deadlines.delete(id)) this.arm();
  }

  /** Drops every deadline and the timer (the node closed). */
  close(): void {
    this.closed = true;
    this.deadlines.clear();
    this.clearBase();
  }

  /** Sets the one timer for the earliest deadline (unchanged when it is set for it already). */
  private arm(): void {
    if (this.firing) return; // fire() arms once it is through
    let next = Infinity;
    for (const d of this.deadlines.values()) if (d.at < next) next = d.at;
    if (next === Infinity) {
      this.clearBase();
      return;
    }
    if (this.timer !== undefined && this.timerAt === next) return;
    this.clearBase();
    const wait = Math.min(Math.max(0, next - this.now()), MAX_TIMER_MS);
    this.timerAt = next;
    this.timer = this.base.setTimeout(() => this.fire(), wait);
  }

  private clearBase(): void {
    if (this.timer !== undefined) this.base.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = undefined;
  }

  /** Runs the deadlines that are due, in the order they were set, then arms for the next. */
  private fire(): void {
    this.timer = undefined;
    this.timerAt = undefined;
    if (this.closed) return;
    this.firing = true;
    try {
      // Deadlines set while these run (e.g. the next part of a check, due now) run in this turn too.
      for (let round = 0; round < 1000; round++) {
        const now = this.now();
        const due = [...this.deadlines.entries()]
          .filter(([, d]) => d.at <= now)
          .sort((a, b) => a[1].at - b[1].at || a[0] - b[0]);
        if (due.length === 0) break;
        for (const [id, d] of due) {
          if (!this.deadlines.delete(id)) continue; // cleared by one that ran before it
          try {
            d.fn();
          } catch {
            /* the owner reports its own failures */
          }
        }
      }
    } finally {
      this.firing = false;
    }
    if (!this.closed) this.arm();
  }
}
