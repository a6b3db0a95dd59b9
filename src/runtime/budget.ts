/**
 * The request budget of one config node: counts every attempt its client sends (first attempts and retries,
 * per last minute, hour and day) and enforces the optional caps `maxPerMinute` and `maxPerDay` in sliding
 * windows, so a cap holds in whatever calendar minute or day the service counts. It is the client's attempt
 * hook (client/attempts.ts). At a cap an attempt is refused (BudgetError) or, in budgetMode 'queue', waits
 * FIFO while it can still be sent in time (budget-turns.ts decides as it arrives); a retry is never queued.
 * One timer per budget, only while something waits. What users see: docs/nodes/ems-partner-config.md,
 * "Request budget"; budgets live in a registry keyed by the config node's id (budget-registry.ts).
 */
import { type Attempt, type AttemptHook, type AttemptOutcome, type BudgetRefusal } from '../client';
import { isoOrRaw } from '../protocol';
import { FAILED, LIMITED, REFUSED, RETRIED, Ring, SENT } from './budget-ring';
import {
  QUEUE_MAX_WAIT_MS,
  type BudgetCap,
  type BudgetCaps,
  type BudgetStats,
  type BudgetWarning,
} from './budget-caps';
import { Turns, type CapRing, type Turn } from './budget-turns';
import { groupRefusal, type SharedDraw } from './budget-group';
import { refusal, type RefusalReason } from './budget-refusal';
import { BudgetWarnings } from './budget-warning';

export * from './budget-caps';
export type { SharedDraw } from './budget-group';

type Over = BudgetRefusal;

interface Waiter {
  a: Attempt;
  /** Refused when it has not gone by then (queue bound, or validUntil for steering). */
  deadline: number;
  resolve(): void;
  reject(err: unknown): void;
  onAbort?: () => void;
}

const NO_CAPS: BudgetCaps = { maxPerMinute: 0, maxPerDay: 0, budgetMode: 'refuse' };

export class Budget implements AttemptHook {
  private caps: BudgetCaps = { ...NO_CAPS };
  private readonly minute = new Ring(1000, 60);
  private readonly hour = new Ring(60_000, 60);
  private readonly day = new Ring(60_000, 1440);
  private readonly totals = [0, 0, 0, 0, 0];
  private readonly since: number;
  private waiters: Waiter[] = [];
  private timer?: ReturnType<typeof setTimeout>;
  private readonly warnings = new BudgetWarnings((cap) => this.percent(cap));
  private readonly turns = new Turns(
    () => this.capRings(),
    () => this.totals[SENT],
  );
  /** The group's shared budget, when the config node is in a group: every attempt also draws one request from it. */
  private shared?: SharedDraw;

  constructor(private readonly now: () => number = () => Date.now()) {
    this.since = now();
  }

  /** Sets the caps (a redeploy sets them again); waiting attempts are looked at again. */
  configure(caps: BudgetCaps): void {
    this.caps = { ...caps };
    this.turns.invalidate();
    this.warnings.check();
    this.drain();
  }

  /** Draws every attempt from the group's budget too (caps across the group; refused there in either budgetMode). */
  share(g: SharedDraw): void {
    this.shared = g;
  }

  /** Stops drawing from `g` (its runtime closes; a later runtime's share stays). */
  unshare(g: SharedDraw): void {
    if (this.shared === g) this.shared = undefined;
  }

  // ------------------------------------------------------------------ the attempt hook

  /**
   * In 'queue' mode, as a request arrives (before it waits for a concurrency slot): refused at
   * once when its turn, behind every request waiting ahead of it, would come later than the
   * queue waits (or than its validUntil); else admitted, and its wait is bounded from now.
   */
  admit(a: Attempt): void {
    if (a.retry || this.caps.budgetMode !== 'queue' || !this.capped()) return;
    const now = this.now();
    const turn = this.turns.next(now, this.waiters.length + this.turns.admitted.size);
    const deadline = Math.min(now + QUEUE_MAX_WAIT_MS, a.validUntil ?? Infinity);
    if (turn.at > now && turn.at >= deadline)
      throw this.refuse(a, this.turnOver(turn, now), now, this.lateWhy(a, deadline), turn.ahead);
    a.admittedAt = now;
    this.turns.admit(a, turn.at);
  }

  /** An admitted request ended before its slot (aborted): its turn is given up. */
  release(a: Attempt): void {
    if (this.turns.admitted.delete(a)) this.turns.invalidate();
  }

  before(a: Attempt): void | Promise<void> {
    const group = this.shared;
    if (!group || !this.capped()) return this.local(a);
    // From the block held here: no round trip (one per block, when it is empty).
    if (group.held > 0 && group.take()) return this.local(a);
    return group.acquire().then((ok) => {
      if (ok) return this.local(a);
      if (this.turns.admitted.delete(a)) this.turns.invalidate();
      this.count(REFUSED, this.now());
      throw groupRefusal(a, this.caps, this.now());
    });
  }

  /** The local budget's part of `before`. */
  private local(a: Attempt): void | Promise<void> {
    const now = this.now();
    // Only 'queue' mode admits attempts: without caps the set is empty, and nothing is looked up.
    const admitted = this.turns.admitted.size > 0 && this.turns.admitted.delete(a);
    if (!this.capped()) {
      this.sent(a, now);
      return undefined;
    }
    const over = this.over(now);
    // Nobody waiting and room left: it goes. A retry never waits behind others or for the window.
    if (!over && (this.waiters.length === 0 || a.retry)) {
      if (admitted && this.waiters.length === 0) this.turns.sentFirst();
      else this.turns.invalidate();
      this.sent(a, now);
      this.warnings.check();
      return undefined;
    }
    if (a.retry || this.caps.budgetMode === 'refuse') {
      if (admitted) this.turns.invalidate();
      throw this.refuse(a, over ?? this.overFor(now), now, a.retry ? 'retry' : 'refuse');
    }
    if (!admitted) this.turns.invalidate();
    return this.enqueue(a, now, over);
  }

  after(_a: Attempt, outcome: AttemptOutcome): void {
    if (outcome === 'ok') return;
    this.count(outcome === '429' ? LIMITED : FAILED, this.now());
  }

  // ------------------------------------------------------------------ reading

  stats(): BudgetStats {
    const now = this.now();
    for (const r of [this.minute, this.hour, this.day]) r.advance(now);
    const tot = this.totals;
    return {
      caps: { ...this.caps },
      lastMinute: this.minute.counts5(),
      lastHour: this.hour.counts5(),
      lastDay: this.day.counts5(),
      total: {
        sent: tot[SENT],
        retried: tot[RETRIED],
        rateLimited: tot[LIMITED],
        failed: tot[FAILED],
        refused: tot[REFUSED],
      },
      since: isoOrRaw(this.since),
      usage: { maxPerMinute: this.percent('maxPerMinute'), maxPerDay: this.percent('maxPerDay') },
      warning: this.warnings.current,
      queued: this.waiters.length + this.turns.admitted.size,
      at: isoOrRaw(now),
    };
  }

  /** The warning in force (80 % of a cap or more), or null. */
  get currentWarning(): BudgetWarning | null {
    return this.warnings.current;
  }

  /** Warning changes (at 80 % of a cap and in steps of 5 above; null when it ends). Returns an unsubscribe. */
  onWarning(fn: (w: BudgetWarning | null) => void): () => void {
    return this.warnings.subscribe(fn);
  }

  /** Ends the timers and refuses what waits (the config node was removed). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.warnings.close();
    this.turns.clear();
    const now = this.now();
    for (const w of this.waiters.splice(0)) this.settle(w, this.refuse(w.a, this.overFor(now), now, 'closed'));
  }

  // ------------------------------------------------------------------ counting

  private count(k: number, t: number): void {
    this.minute.add(k, t);
    this.hour.add(k, t);
    this.day.add(k, t);
    this.totals[k]++;
  }

  private sent(a: Attempt, t: number): void {
    this.count(SENT, t);
    if (a.retry) this.count(RETRIED, t);
  }

  /** The cap that one more attempt would break now, or undefined. */
  private over(t: number): Over | undefined {
    const { maxPerMinute, maxPerDay } = this.caps;
    if (maxPerDay > 0) {
      this.day.advance(t);
      if (this.day.sums[SENT] >= maxPerDay)
        return {
          cap: 'maxPerDay',
          limit: maxPerDay,
          count: this.day.sums[SENT],
          freesAt: this.day.freesAt(SENT, maxPerDay, t),
        };
    }
    if (maxPerMinute > 0) {
      this.minute.advance(t);
      if (this.minute.sums[SENT] >= maxPerMinute)
        return {
          cap: 'maxPerMinute',
          limit: maxPerMinute,
          count: this.minute.sums[SENT],
          freesAt: this.minute.freesAt(SENT, maxPerMinute, t),
        };
    }
    return undefined;
  }

  private capped(): boolean {
    return this.caps.maxPerMinute > 0 || this.caps.maxPerDay > 0;
  }

  /** The caps in force, with their windows (for the turns of waiting requests). */
  private capRings(): CapRing[] {
    const out: CapRing[] = [];
    if (this.caps.maxPerDay > 0) out.push({ cap: 'maxPerDay', limit: this.caps.maxPerDay, ring: this.day });
    if (this.caps.maxPerMinute > 0) out.push({ cap: 'maxPerMinute', limit: this.caps.maxPerMinute, ring: this.minute });
    return out;
  }

  /** What a refusal on arrival names: the cap that holds the request back, its count, and when its turn would come. */
  private turnOver(turn: Turn, t: number): Over {
    const held = turn.cap;
    if (!held) return { ...this.overFor(t), freesAt: turn.at };
    return { cap: held.cap, limit: held.limit, count: held.ring.sums[SENT], freesAt: turn.at };
  }

  private lateWhy(a: Attempt, deadline: number): 'valid-until' | 'queue-bound' {
    return a.validUntil !== undefined && deadline >= a.validUntil ? 'valid-until' : 'queue-bound';
  }

  /** The cap to name when an attempt is refused though no cap is full (it waited behind others): the one most used. */
  private overFor(t: number): Over {
    const overCap = this.over(t);
    if (overCap) return overCap;
    const { maxPerMinute, maxPerDay } = this.caps;
    const day = maxPerDay > 0 ? this.day.sums[SENT] / maxPerDay : -1;
    const min = maxPerMinute > 0 ? this.minute.sums[SENT] / maxPerMinute : -1;
    return day >= min
      ? { cap: 'maxPerDay', limit: maxPerDay, count: this.day.sums[SENT], freesAt: t }
      : { cap: 'maxPerMinute', limit: maxPerMinute, count: this.minute.sums[SENT], freesAt: t };
  }

  private percent(cap: BudgetCap): number | null {
    const limit = this.caps[cap];
    if (!(limit > 0)) return null;
    const ring = cap === 'maxPerDay' ? this.day : this.minute;
    ring.advance(this.now());
    return Math.floor((100 * ring.sums[SENT]) / limit);
  }

  // ------------------------------------------------------------------ refusing and waiting

  /** The error of a refusal; `ahead`: requests waiting ahead of it (a refusal on arrival names them and when its turn would come). */
  private refuse(a: Attempt, o: Over, t: number, why: RefusalReason, ahead = 0): Error {
    this.count(REFUSED, t);
    return refusal(a, o, why, ahead);
  }

  private enqueue(a: Attempt, t: number, over: Over | undefined): Promise<void> {
    // Bounded from its arrival when it was admitted then (its wait for a slot counts too).
    const deadline = Math.min((a.admittedAt ?? t) + QUEUE_MAX_WAIT_MS, a.validUntil ?? Infinity);
    if (over && over.freesAt >= deadline) {
      this.turns.invalidate();
      throw this.refuse(a, over, t, this.lateWhy(a, deadline));
    }
    if (a.signal?.aborted) {
      this.turns.invalidate();
      return Promise.reject(a.signal.reason ?? new Error('aborted'));
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { a, deadline, resolve, reject };
      const signal = a.signal;
      if (signal) {
        waiter.onAbort = () => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) this.waiters.splice(at, 1);
          this.turns.invalidate();
          reject(signal.reason ?? new Error('aborted'));
          this.drain();
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
      this.drain();
    });
  }

  private settle(w: Waiter, err?: unknown): void {
    if (w.onAbort) w.a.signal?.removeEventListener('abort', w.onAbort);
    if (err) w.reject(err);
    else w.resolve();
  }

  /** Lets waiting attempts go in order while there is room; refuses those whose time ran out; sets the one timer. */
  private drain(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiters.length === 0) return;
    const now = this.now();
    const capped = this.capped();
    // Those whose time ran out (behind others, or the window frees too late).
    this.waiters = this.waiters.filter((w) => {
      if (now < w.deadline) return true;
      this.turns.invalidate();
      this.settle(w, this.refuse(w.a, this.overFor(now), now, this.lateWhy(w.a, w.deadline)));
      return false;
    });
    while (this.waiters.length > 0) {
      const waiter = this.waiters[0];
      const over = capped ? this.over(now) : undefined;
      if (!over) {
        this.waiters.shift();
        this.turns.sentFirst();
        this.sent(waiter.a, now);
        this.settle(waiter);
        continue;
      }
      if (over.freesAt >= waiter.deadline) {
        this.waiters.shift();
        this.turns.invalidate();
        this.settle(waiter, this.refuse(waiter.a, over, now, this.lateWhy(waiter.a, waiter.deadline)));
        continue;
      }
      let wake = over.freesAt;
      for (const x of this.waiters) wake = Math.min(wake, x.deadline);
      this.timer = setTimeout(() => this.drain(), Math.max(1, wake - now));
      break;
    }
    this.warnings.check();
  }
}
