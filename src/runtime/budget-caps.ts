/**
 * The settings and the figures of the request budget (budget.ts): its caps as a config node
 * sets them, checked against the table of limits, and what its stats report.
 */
import type { BudgetRefusal } from '../client';
import { ValidationError, show, LIMITS, limited } from '../protocol';
import type { BudgetCounts } from './budget-ring';

type BudgetMode = 'refuse' | 'queue';
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
  /** Requests waiting for the budget now ('queue' mode): for the window, or admitted and waiting for a concurrency slot behind those. */
  queued: number;
  /** When the data was read, ISO 8601. */
  at: string;
}

/** The caps of a config node's settings (ValidationError naming the setting when one is refused). */
export function budgetCaps(p: { maxPerMinute?: unknown; maxPerDay?: unknown; budgetMode?: unknown }): BudgetCaps {
  const mode = p.budgetMode ?? '';
  if (mode !== '' && mode !== 'refuse' && mode !== 'queue') {
    throw new ValidationError(
      'budgetMode',
      `must be "refuse" (default: a request at a cap fails) or "queue" (it waits until the window frees); got ${show(mode)}`,
    );
  }
  return {
    maxPerMinute: limited(p.maxPerMinute, LIMITS.maxPerMinute, 'maxPerMinute'),
    maxPerDay: limited(p.maxPerDay, LIMITS.maxPerDay, 'maxPerDay'),
    budgetMode: mode === 'queue' ? 'queue' : 'refuse',
  };
}
