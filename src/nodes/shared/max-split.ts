/**
 * The `maxSplit` node property of the read nodes (device read, time series): its default and
 * range, reading it, and refusing a split beyond it. Evaluation of TypedInputs is in
 * evaluate.ts, ending messages in messages.ts, status texts in status.ts.
 */
import { limited, LIMITS, ValidationError } from '../../protocol';

/** Default and range of the `maxSplit` node property (messages per split): the table's entry. */
const MAX_SPLIT = LIMITS.maxSplit;

/**
 * The `maxSplit` node property (range and default: LIMITS.maxSplit; the default applies when
 * not set, as in flows saved before it existed). Throws a ValidationError naming it for any other value.
 */
export function maxSplitOf(v: unknown): number {
  return limited(v, MAX_SPLIT, 'maxSplit');
}

/** Refuses a split into more than `max` messages (nothing is sent), naming maxSplit and the count. */
export function checkSplit(count: number, max: number, what = 'messages'): void {
  if (count > max) {
    throw new ValidationError(
      'maxSplit',
      `exceeded: the read would split into ${count} ${what}; the node's maxSplit is ${max} (raise it up to ${MAX_SPLIT.max}, or choose an output that is not split)`,
      'unprocessable',
    );
  }
}
