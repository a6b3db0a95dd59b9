/**
 * Bounded fan-out for fleet messages: work over many sites (or devices) with at
 * most `limit` items started and not finished at once, in list order. The requests themselves
 * still pass the config node's steering queue (per-site order and merging) and its client's
 * limiter (concurrency); this bound only keeps a message of 5000 sites from creating 5000
 * pending requests, timers and promises at once. Each item settles on its own: a failure is
 * recorded for that item, never rejects the whole, and never escapes as an unhandled rejection.
 */
import { mapLimit } from '../client';
import type { EmsClient } from '../client';

export type Settled<R> = { ok: true; value: R } | { ok: false; error: Error };

/**
 * How many items of a fleet message are under way at once: twice the client's concurrency,
 * so the limiter always has the next request waiting when one ends (no idle round trips), and
 * at most that many pending requests exist.
 */
export function fleetWindow(client: Pick<EmsClient, 'concurrency'> | undefined): number {
  const concurrency = client?.concurrency ?? 6;
  return Math.max(1, Math.min(512, 2 * concurrency));
}

/**
 * Runs `work` for every item, at most `limit` at once, and resolves (never rejects) with one
 * Settled per item, in the items' order. Once `signal` aborts, items not yet started settle
 * with `aborted()` (default: an Error "not sent: aborted") and are not started.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
  opts: { signal?: AbortSignal; aborted?: () => Error } = {},
): Promise<Array<Settled<R>>> {
  // The client's pool (mapLimit), with every item settled on its own.
  return mapLimit(items, Math.floor(limit) || 1, async (item, i): Promise<Settled<R>> => {
    if (opts.signal?.aborted) return { ok: false, error: opts.aborted?.() ?? new Error('not sent: aborted') };
    try {
      return { ok: true, value: await work(item, i) };
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e : new Error(String(e)) };
    }
  });
}
