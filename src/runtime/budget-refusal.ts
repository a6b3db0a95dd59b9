/** The error of an attempt the request budget (budget.ts) refuses: what was not sent, the cap, its count, and when it frees. */
import { apiError, attemptPath, type Attempt, type BudgetRefusal } from '../client';
import { isoOrRaw } from '../protocol';
import { QUEUE_MAX_WAIT_MS } from './budget-caps';

/** Why an attempt is refused: the mode, a retry, the queue's bound, the signal's validUntil, or the budget closing. */
export type RefusalReason = 'refuse' | 'retry' | 'queue-bound' | 'valid-until' | 'closed';

/** `ahead`: requests waiting ahead of it (a refusal on arrival names them and when its turn would come). */
export function refusal(a: Attempt, o: BudgetRefusal, why: RefusalReason, ahead = 0): Error {
  const what = `${a.retry ? 'retry of ' : ''}${a.method} ${attemptPath(a.url)}`;
  const window = o.cap === 'maxPerDay' ? '24 h' : '60 s';
  const waiting = ahead > 0 ? ` and ${ahead} waiting ahead of it` : '';
  const head = `${what} not sent: request budget ${o.cap} reached (${o.count} of ${o.limit} requests in the last ${window}${waiting})`;
  const frees = ahead > 0 ? `its turn would come at ${isoOrRaw(o.freesAt)}` : `frees at ${isoOrRaw(o.freesAt)}`;
  const tail = {
    refuse: `${frees} (budgetMode "refuse")`,
    retry: `${frees}; a retry is not made when it would break a cap`,
    'queue-bound': `${frees}, later than budgetMode "queue" waits (${QUEUE_MAX_WAIT_MS / 60_000} minutes)`,
    'valid-until': `${frees}; the signal's validUntil ${isoOrRaw(a.validUntil ?? NaN)} comes first, and nothing is sent after it`,
    closed: 'the config node was removed while it waited',
  }[why];
  return apiError({
    code: 'EMS_BUDGET',
    field: o.cap,
    budget: { ...o },
    request: { method: a.method, path: attemptPath(a.url) },
    message: `${head}; ${tail}`,
  });
}
