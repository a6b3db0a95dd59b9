/**
 * The simulated clock. `now()` is real time plus an offset, or a fixed instant when frozen;
 * `advance(ms)` moves simulated time forward. The physics catch up lazily on the next
 * request, so advancing the clock costs nothing by itself and needs no timers.
 */

export interface ClockOptions {
  /** Simulated time at creation, epoch ms (default: real time). */
  startTime?: number;
  /** When true, time only moves through `advance` (default false). */
  frozen?: boolean;
}

export class Clock {
  readonly frozen: boolean;
  /** Simulated time at creation, epoch ms. */
  readonly startTime: number;
  private offset: number;
  private fixed: number;
  /** Never goes backwards, even if the machine's clock does. */
  private last: number;

  constructor(opts: ClockOptions = {}) {
    const real = Date.now();
    this.startTime = opts.startTime ?? real;
    if (!Number.isFinite(this.startTime)) throw new TypeError('startTime must be a finite epoch ms');
    this.frozen = opts.frozen === true;
    this.offset = this.startTime - real;
    this.fixed = this.startTime;
    this.last = this.startTime;
  }

  /** Current simulated time, epoch ms (integer, monotonic). */
  now(): number {
    const now = this.frozen ? this.fixed : Date.now() + this.offset;
    if (now > this.last) this.last = now;
    return this.last;
  }

  /** Moves simulated time forward by `ms` (>= 0). Returns the new now. */
  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance: ms must be a finite number >= 0; got ${ms}`);
    const step = Math.round(ms);
    this.offset += step;
    this.fixed += step;
    this.last += step;
    return this.now();
  }
}
