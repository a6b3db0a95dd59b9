/**
 * The request budget of a config node in a group (budget.ts draws from it): the group's
 * shared budget (group/shared-budget.ts) as the local budget sees it, and the refusal of an
 * attempt the group had no request left for.
 */
import { apiError, attemptPath, type Attempt } from '../client';
import { isoOrRaw } from '../protocol';
import type { BudgetCap, BudgetCaps } from './budget-caps';

/** The group's budget as the local one draws from it: blocks held here, Redis asked per block. */
export interface SharedDraw {
  readonly held: number;
  take(): boolean;
  acquire(): Promise<boolean>;
}

/** The error of an attempt refused because the group's budget had no request left for this instance. */
export function groupRefusal(a: Attempt, caps: BudgetCaps, t: number): Error {
  const cap: BudgetCap = caps.maxPerMinute > 0 ? 'maxPerMinute' : 'maxPerDay';
  const limit = caps[cap];
  const span = cap === 'maxPerMinute' ? 60_000 : 86_400_000;
  const freesAt = Math.floor(t / span) * span + span;
  const what = `${a.retry ? 'retry of ' : ''}${a.method} ${attemptPath(a.url)}`;
  return apiError({
    code: 'EMS_BUDGET',
    field: cap,
    budget: { cap, limit, count: limit, freesAt },
    request: { method: a.method, path: attemptPath(a.url) },
    message: `${what} not sent: request budget ${cap} of the group reached (the instances of the group share ${limit} requests per ${cap === 'maxPerDay' ? 'UTC day' : 'minute'}); frees at about ${isoOrRaw(freesAt)}`,
  });
}
