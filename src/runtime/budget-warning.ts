/**
 * The request budget's warning (budget.ts): at 80 % of a cap or more, in steps of 5 above, told
 * to its listeners (the nodes' status) as it changes and looked at again as the window slides
 * while it holds (one timer, only while someone listens).
 */
import { WARN_PERCENT, type BudgetCap, type BudgetWarning } from './budget-caps';

const CAPS: readonly BudgetCap[] = ['maxPerDay', 'maxPerMinute'];

export class BudgetWarnings {
  private warning: BudgetWarning | null = null;
  private warnTimer?: ReturnType<typeof setTimeout>;
  private readonly listeners = new Set<(w: BudgetWarning | null) => void>();

  /** @param percent how much of a cap the window holds now, null for a cap not set */
  constructor(private readonly percent: (cap: BudgetCap) => number | null) {}

  /** The warning in force (a copy), or null. */
  get current(): BudgetWarning | null {
    return this.warning && { ...this.warning };
  }

  /** Warning changes; told the one in force at once. Returns an unsubscribe. */
  subscribe(fn: (w: BudgetWarning | null) => void): () => void {
    this.listeners.add(fn);
    this.check(true);
    return () => {
      this.listeners.delete(fn);
      if (this.listeners.size === 0) this.stopTimer();
    };
  }

  close(): void {
    this.stopTimer();
    this.listeners.clear();
  }

  /** Works the warning out again; tells the listeners when it changed (or always, `fromTimer`). */
  check(fromTimer = false): void {
    let warning: BudgetWarning | null = null;
    for (const cap of CAPS) {
      const percent = this.percent(cap);
      if (percent === null || percent < WARN_PERCENT) continue;
      const level = Math.min(100, Math.floor(percent / 5) * 5);
      if (!warning || level > warning.percent) warning = { cap, percent: level };
    }
    const prev = this.warning;
    const same = warning?.cap === prev?.cap && warning?.percent === prev?.percent;
    if (same && !fromTimer) return;
    this.warning = warning;
    this.stopTimer();
    // While a warning holds, it is looked at again as the window slides (the cap's bucket size).
    if (warning && this.listeners.size > 0) {
      this.warnTimer = setTimeout(
        () => {
          this.warnTimer = undefined;
          this.check(true);
        },
        warning.cap === 'maxPerMinute' ? 1000 : 60_000,
      );
      this.warnTimer.unref?.();
    }
    if (same) return;
    for (const fn of this.listeners) {
      try {
        fn(warning && { ...warning });
      } catch {
        /* a listener's failure must not break a request */
      }
    }
  }

  private stopTimer(): void {
    if (this.warnTimer) clearTimeout(this.warnTimer);
    this.warnTimer = undefined;
  }
}
