/**
 * The request budget of one config node (issue 14): counts every attempt its client sends
 * (first attempts and retries), per last minute, hour and day: sent, retried, 429s, failures,
 * and the attempts it refused; and enforces the optional caps `maxPerMinute` and `maxPerDay`.
 * It is the client's attempt hook (client/attempts.ts), so it sees each attempt in its
 * concurrency slot just before it is sent.
 *
 * Windows slide: a cap holds in every 60 s (maxPerMinute) and every 24 h (maxPerDay), so it
 * holds too in whatever calendar minute or day the service counts. Counts are kept in
 * buckets (1 s for the minute, 1 min for the hour and day); a window covers its span plus the
 * bucket under way, so a count is never too low.
 *
 * At a cap: in budgetMode 'refuse' an attempt is refused (BudgetError, EMS_BUDGET, naming the
 * cap, the count and when it frees); in 'queue' it waits, FIFO, until the window frees, at
 * most QUEUE_MAX_WAIT_MS, and steering only while it would still be sent before its
 * validUntil (else it is refused at once, or when that time comes). A retry is never queued:
 * a retry that would break a cap is not made. One timer per budget, only while something waits.
 *
 * Budgets live in a registry keyed by the config node's id (`budgets`), so counts and the
 * queue survive a redeploy (the new runtime takes the budget and sets its caps again), not a
 * restart of the process. The config node forgets its id when it is removed.
 */
import { apiError, attemptPath, type Attempt, type AttemptHook, type AttemptOutcome, type BudgetRefusal } from '../client';
import { ValidationError, show, LIMITS, limited, isoOrRaw } from '../protocol';
import { FAILED, LIMITED, REFUSED, RETRIED, Ring, SENT, type BudgetCounts } from './budget-ring';

export type { BudgetCounts };

export type BudgetMode = 'refuse' | 'queue';
export type BudgetCap = BudgetRefusal['cap'];

export interface BudgetCaps {
  /** Attempts in any 60 s; 0 = no cap. */
  maxPerMinute: number;
  /** Attempts in any 24 h; 0 = no cap. */
  maxPerDay: number;
  budgetMode: BudgetMode;
}

/** The longest a read (or a raw request) waits for the budget in 'queue' mode; one that would wait longer is refused at once. */
export const QUEUE_MAX_WAIT_MS = 10 * 60_000;
/** A warning shows from this share of a cap on. */
export const WARN_PERCENT = 80;

/** What a status shows: the cap most used, at 80 % or more, in steps of 5 (80, 85, … 100). */
export interface BudgetWarning {
  cap: BudgetCap;
  percent: number;
}

export interface BudgetStats {
  caps: BudgetCaps;
  lastMinute: BudgetCounts;
  lastHour: BudgetCounts;
  lastDay: BudgetCounts;
  /** Since the budget was made (the first deploy of the config node in this process). */
  total: BudgetCounts;
  /** When counting began, ISO 8601. */
  since: string;
  /** Share of each cap in use, percent (null: no cap). */
  usage: { maxPerMinute: number | null; maxPerDay: number | null };
  warning: BudgetWarning | null;
  /** Attempts waiting for the budget now ('queue' mode). */
  queued: number;
  /** When the data was read, ISO 8601. */
  at: string;
}

type Over = BudgetRefusal;

interface Waiter {
  a: Attempt;
  /** Refused when it has not gone by then (queue bound, or validUntil for steering). */
  deadline: number;
  resolve(): void;
  reject(err: unknown): void;
  onAbort?: () => void;
}

const CAPS: readonly BudgetCap[] = ['maxPerDay', 'maxPerMinute'];
const NO_CAPS: BudgetCaps = { maxPerMinute: 0, maxPerDay: 0, budgetMode: 'refuse' };

/** The caps of a config node's settings (ValidationError naming the setting when one is refused). */
export function budgetCaps(p: { maxPerMinute?: unknown; maxPerDay?: unknown; budgetMode?: unknown }): BudgetCaps {
  const mode = p.budgetMode ?? '';
  if (mode !== '' && mode !== 'refuse' && mode !== 'queue') {
    throw new ValidationError('budgetMode', `must be "refuse" (default: a request at a cap fails) or "queue" (it waits until the window frees); got ${show(mode)}`);
  }
  return {
    maxPerMinute: limited(p.maxPerMinute, LIMITS.maxPerMinute, 'maxPerMinute'),
    maxPerDay: limited(p.maxPerDay, LIMITS.maxPerDay, 'maxPerDay'),
    budgetMode: mode === 'queue' ? 'queue' : 'refuse',
  };
}

export class Budget implements AttemptHook {
  private caps: BudgetCaps = { ...NO_CAPS };
  private readonly minute = new Ring(1000, 60);
  private readonly hour = new Ring(60_000, 60);
  private readonly day = new Ring(60_000, 1440);
  private readonly totals = [0, 0, 0, 0, 0];
  private readonly since: number;
  private waiters: Waiter[] = [];
  private timer?: ReturnType<typeof setTimeout>;
  private warning: BudgetWarning | null = null;
  private warnTimer?: ReturnType<typeof setTimeout>;
  private readonly listeners = new Set<(w: BudgetWarning | null) => void>();

  constructor(private readonly now: () => number = () => Date.now()) {
    this.since = now();
  }

  /** Sets the caps (a redeploy sets them again); waiting attempts are looked at again. */
  configure(caps: BudgetCaps): void {
    this.caps = { ...caps };
    this.checkWarning();
    this.drain();
  }

  // ------------------------------------------------------------------ the attempt hook

  before(a: Attempt): void | Promise<void> {
    const t = this.now();
    const capped = this.caps.maxPerMinute > 0 || this.caps.maxPerDay > 0;
    if (!capped) {
      this.sent(a, t);
      return undefined;
    }
    const over = this.over(t);
    // Nobody waiting and room left: it goes. A retry never waits behind others or for the window.
    if (!over && (this.waiters.length === 0 || a.retry)) {
      this.sent(a, t);
      this.checkWarning();
      return undefined;
    }
    if (a.retry || this.caps.budgetMode === 'refuse') throw this.refuse(a, over ?? this.overFor(t), t, a.retry ? 'retry' : 'refuse');
    return this.enqueue(a, t, over);
  }

  after(_a: Attempt, outcome: AttemptOutcome): void {
    if (outcome === 'ok') return;
    this.count(outcome === '429' ? LIMITED : FAILED, this.now());
  }

  // ------------------------------------------------------------------ reading

  stats(): BudgetStats {
    const t = this.now();
    for (const r of [this.minute, this.hour, this.day]) r.advance(t);
    const tot = this.totals;
    return {
      caps: { ...this.caps },
      lastMinute: this.minute.counts5(),
      lastHour: this.hour.counts5(),
      lastDay: this.day.counts5(),
      total: { sent: tot[SENT], retried: tot[RETRIED], rateLimited: tot[LIMITED], failed: tot[FAILED], refused: tot[REFUSED] },
      since: isoOrRaw(this.since),
      usage: { maxPerMinute: this.percent('maxPerMinute'), maxPerDay: this.percent('maxPerDay') },
      warning: this.warning && { ...this.warning },
      queued: this.waiters.length,
      at: isoOrRaw(t),
    };
  }

  /** The warning in force (80 % of a cap or more), or null. */
  get currentWarning(): BudgetWarning | null {
    return this.warning && { ...this.warning };
  }

  /** Warning changes (at 80 % of a cap and in steps of 5 above; null when it ends). Returns an unsubscribe. */
  onWarning(fn: (w: BudgetWarning | null) => void): () => void {
    this.listeners.add(fn);
    this.checkWarning(true);
    return () => {
      this.listeners.delete(fn);
      if (this.listeners.size === 0) this.stopWarnTimer();
    };
  }

  /** Ends the timers and refuses what waits (the config node was removed). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.stopWarnTimer();
    this.listeners.clear();
    const t = this.now();
    for (const w of this.waiters.splice(0)) this.settle(w, this.refuse(w.a, this.overFor(t), t, 'closed'));
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
      if (this.day.sums[SENT] >= maxPerDay) return { cap: 'maxPerDay', limit: maxPerDay, count: this.day.sums[SENT], freesAt: this.day.freesAt(SENT, maxPerDay, t) };
    }
    if (maxPerMinute > 0) {
      this.minute.advance(t);
      if (this.minute.sums[SENT] >= maxPerMinute) return { cap: 'maxPerMinute', limit: maxPerMinute, count: this.minute.sums[SENT], freesAt: this.minute.freesAt(SENT, maxPerMinute, t) };
    }
    return undefined;
  }

  /** The cap to name when an attempt is refused though no cap is full (it waited behind others): the one most used. */
  private overFor(t: number): Over {
    const o = this.over(t);
    if (o) return o;
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

  private refuse(a: Attempt, o: Over, t: number, why: 'refuse' | 'retry' | 'queue-bound' | 'valid-until' | 'closed'): Error {
    this.count(REFUSED, t);
    const what = `${a.retry ? 'retry of ' : ''}${a.method} ${attemptPath(a.url)}`;
    const window = o.cap === 'maxPerDay' ? '24 h' : '60 s';
    const head = `${what} not sent: request budget ${o.cap} reached (${o.count} of ${o.limit} requests in the last ${window})`;
    const frees = `frees at ${isoOrRaw(o.freesAt)}`;
    const tail = {
      refuse: `${frees} (budgetMode "refuse")`,
      retry: `${frees}; a retry is not made when it would break a cap`,
      'queue-bound': `${frees}, later than budgetMode "queue" waits (${QUEUE_MAX_WAIT_MS / 60_000} minutes)`,
      'valid-until': `${frees}; the signal's validUntil ${isoOrRaw(a.validUntil ?? NaN)} comes first, and nothing is sent after it`,
      closed: 'the config node was removed while it waited',
    }[why];
    return apiError({ code: 'EMS_BUDGET', field: o.cap, budget: { ...o }, request: { method: a.method, path: attemptPath(a.url) }, message: `${head}; ${tail}` });
  }

  private enqueue(a: Attempt, t: number, over: Over | undefined): Promise<void> {
    const deadline = Math.min(t + QUEUE_MAX_WAIT_MS, a.validUntil ?? Infinity);
    if (over && over.freesAt >= deadline) throw this.refuse(a, over, t, a.validUntil !== undefined && a.validUntil <= t + QUEUE_MAX_WAIT_MS ? 'valid-until' : 'queue-bound');
    if (a.signal?.aborted) return Promise.reject(a.signal.reason ?? new Error('aborted'));
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { a, deadline, resolve, reject };
      const signal = a.signal;
      if (signal) {
        w.onAbort = () => {
          const i = this.waiters.indexOf(w);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal.reason ?? new Error('aborted'));
          this.drain();
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.waiters.push(w);
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
    const t = this.now();
    const capped = this.caps.maxPerMinute > 0 || this.caps.maxPerDay > 0;
    // Those whose time ran out (behind others, or the window frees too late).
    this.waiters = this.waiters.filter((w) => {
      if (t < w.deadline) return true;
      const late = w.a.validUntil !== undefined && w.deadline >= w.a.validUntil;
      this.settle(w, this.refuse(w.a, this.overFor(t), t, late ? 'valid-until' : 'queue-bound'));
      return false;
    });
    while (this.waiters.length > 0) {
      const w = this.waiters[0];
      const over = capped ? this.over(t) : undefined;
      if (!over) {
        this.waiters.shift();
        this.sent(w.a, t);
        this.settle(w);
        continue;
      }
      if (over.freesAt >= w.deadline) {
        this.waiters.shift();
        const late = w.a.validUntil !== undefined && w.deadline >= w.a.validUntil;
        this.settle(w, this.refuse(w.a, over, t, late ? 'valid-until' : 'queue-bound'));
        continue;
      }
      let wake = over.freesAt;
      for (const x of this.waiters) wake = Math.min(wake, x.deadline);
      this.timer = setTimeout(() => this.drain(), Math.max(1, wake - t));
      break;
    }
    this.checkWarning();
  }

  // ------------------------------------------------------------------ the warning

  private checkWarning(fromTimer = false): void {
    let w: BudgetWarning | null = null;
    for (const cap of CAPS) {
      const p = this.percent(cap);
      if (p === null || p < WARN_PERCENT) continue;
      const level = Math.min(100, Math.floor(p / 5) * 5);
      if (!w || level > w.percent) w = { cap, percent: level };
    }
    const prev = this.warning;
    const same = w?.cap === prev?.cap && w?.percent === prev?.percent;
    if (same && !fromTimer) return;
    this.warning = w;
    this.stopWarnTimer();
    // While a warning holds, it is looked at again as the window slides (the cap's bucket size).
    if (w && this.listeners.size > 0) {
      this.warnTimer = setTimeout(() => {
        this.warnTimer = undefined;
        this.checkWarning(true);
      }, w.cap === 'maxPerMinute' ? 1000 : 60_000);
      this.warnTimer.unref?.();
    }
    if (same) return;
    for (const fn of this.listeners) {
      try {
        fn(w && { ...w });
      } catch {
        /* a listener's failure must not break a request */
      }
    }
  }

  private stopWarnTimer(): void {
    if (this.warnTimer) clearTimeout(this.warnTimer);
    this.warnTimer = undefined;
  }
}

/** The budgets of the config nodes of this process, by id. */
export class BudgetRegistry {
  private readonly byId = new Map<string, Budget>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** The budget of a config node: the one it had before a redeploy, or a new one. */
  budget(id: string): Budget {
    let b = this.byId.get(id);
    if (!b) {
      b = new Budget(this.now);
      this.byId.set(id, b);
    }
    return b;
  }

  peek(id: string): Budget | undefined {
    return this.byId.get(id);
  }

  /** Drops a removed config node's budget (its counts end with it). */
  forget(id: string): void {
    const b = this.byId.get(id);
    if (!b) return;
    this.byId.delete(id);
    b.close();
  }

  get size(): number {
    return this.byId.size;
  }
}

/** The registry of this process: budgets survive a redeploy, not a restart. */
export const budgets = new BudgetRegistry();
