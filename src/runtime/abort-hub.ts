/**
 * Many waiters on one AbortSignal, at a constant cost each. Node's EventTarget walks every
 * listener of a signal on each addEventListener (to refuse duplicates) and each
 * removeEventListener, so a burst of N waiters each adding its own listener to one long-lived
 * signal (a node's) costs N² in all. Here a signal gets one listener, the first time a waiter
 * asks, which calls the waiters of a Set: adding and removing a waiter is O(1).
 */

type Waiters = Set<() => void>;

const hubs = new WeakMap<AbortSignal, Waiters>();

/**
 * Calls `fn` once when `signal` aborts (not at all if it has aborted already: check `aborted`
 * first). Returns the function that removes it; call it once the wait is over.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let waiters = hubs.get(signal);
  if (!waiters) {
    const set: Waiters = new Set();
    waiters = set;
    hubs.set(signal, set);
    signal.addEventListener('abort', () => {
      hubs.delete(signal);
      // A waiter that throws must not keep the others from hearing of the abort.
      for (const w of [...set]) {
        try {
          w();
        } catch { /* the waiter's own failure; the rest still run */ }
      }
      set.clear();
    }, { once: true });
  }
  const set = waiters;
  set.add(fn);
  return () => { set.delete(fn); };
}
