/**
 * The counters of the request budget (budget.ts) over one sliding window: buckets of `res` ms
 * over `span` buckets plus the one under way (so a count is never too low), with running sums,
 * so counting and reading are O(1) and moving the window costs one step per bucket passed.
 */

/** The counts of one window. */
export interface BudgetCounts {
  /** Attempts sent (first attempts and retries). */
  sent: number;
  /** Of those, retries. */
  retried: number;
  /** Attempts answered with 429. */
  rateLimited: number;
  /** Attempts that failed otherwise (error status, timeout, connection error, abort). */
  failed: number;
  /** Attempts the budget refused (not sent). */
  refused: number;
}

/** The counters, by index. */
export const SENT = 0;
export const RETRIED = 1;
export const LIMITED = 2;
export const FAILED = 3;
export const REFUSED = 4;
const KINDS = 5;

/** Counts in buckets of `res` ms over `span` buckets plus the one under way. */
export class Ring {
  private readonly counts: Uint32Array;
  readonly sums = [0, 0, 0, 0, 0];
  /** Index (absolute, time / res) of the newest bucket. */
  private cur = 0;
  /** Where the bucket after `cur` begins (ms): before it, advancing has nothing to do (no division). */
  private edge: number;

  constructor(
    private readonly res: number,
    private readonly span: number,
  ) {
    this.counts = new Uint32Array((span + 1) * KINDS);
    this.edge = res;
  }

  /** Moves the window to `now`: buckets that left it are emptied. */
  advance(now: number): void {
    if (now < this.edge) return;
    const bucket = Math.floor(now / this.res);
    if (bucket <= this.cur) return;
    const size = this.span + 1;
    const steps = Math.min(bucket - this.cur, size);
    for (let i = 1; i <= steps; i++) {
      const slot = ((this.cur + i) % size) * KINDS;
      for (let k = 0; k < KINDS; k++) {
        this.sums[k] -= this.counts[slot + k];
        this.counts[slot + k] = 0;
      }
    }
    this.cur = bucket;
    this.edge = (bucket + 1) * this.res;
  }

  add(k: number, now: number): void {
    this.advance(now);
    this.counts[(this.cur % (this.span + 1)) * KINDS + k]++;
    this.sums[k]++;
  }

  /** When the count of `k` drops below `limit` as old buckets leave (epoch ms); `now` when it is below already. */
  freesAt(k: number, limit: number, now: number): number {
    let excess = this.sums[k] - limit + 1;
    if (excess <= 0) return now;
    const size = this.span + 1;
    for (let j = this.cur - this.span; j <= this.cur; j++) {
      excess -= this.counts[(((j % size) + size) % size) * KINDS + k];
      // Bucket j leaves the window when bucket j + span + 1 begins.
      if (excess <= 0) return (j + this.span + 1) * this.res;
    }
    return (this.cur + this.span + 1) * this.res;
  }

  /** When an attempt counted at `time` leaves the window (its bucket's end plus the span). */
  leavesAt(time: number): number {
    return (Math.floor(time / this.res) + this.span + 1) * this.res;
  }

  counts5(): BudgetCounts {
    const sums = this.sums;
    return {
      sent: sums[SENT],
      retried: sums[RETRIED],
      rateLimited: sums[LIMITED],
      failed: sums[FAILED],
      refused: sums[REFUSED],
    };
  }
}
