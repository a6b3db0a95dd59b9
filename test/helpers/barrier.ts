/**
 * Causal barriers for "nothing more arrives" checks: instead of sleeping a guessed number of
 * milliseconds, a test waits for an event after which the thing, had it been going to arrive,
 * provably would have arrived already.
 *
 * - `delivered()` pushes a sentinel message through Node-RED's delivery (one FIFO of
 *   setImmediate callbacks) and waits for it: every message sent before it has then arrived.
 * - `watchPushes()` makes an in-process server's request log (an array it pushes to) an event
 *   to wait on: "the server got the request".
 * - `watchOwnTimers()` lists the timers the package's own code set and that are still pending:
 *   none pending means no timer of it can still fire.
 *
 * No Node-RED or server is loaded here (type imports only), so client-only tests may use it.
 */
import { createHook } from 'node:async_hooks';
import { until, type Inbox } from './red';

/** The property that marks a sentinel message. */
export const SENTINEL = '_barrierSentinel';

let sentinels = 0;

/**
 * Sends a sentinel from each node (`node.send`: its first output, through Node-RED's router)
 * and waits until it reached the inbox that output is wired to; then removes the sentinels
 * from the inboxes. Node-RED delivers every message by one setImmediate each, in order, so
 * once the sentinels arrived, every message those nodes (and any node that sent before this
 * call) had sent has been delivered. Combine with a check that nothing can still *send*
 * (no request in flight, no timer pending): together they are the point after which a
 * message that has not arrived never will.
 */
export async function delivered(paths: Array<[node: any, inbox: Inbox]>, ms = 10_000): Promise<void> {
  const ids = paths.map(() => ++sentinels);
  const arrived = paths.map(([, inbox], i) =>
    until(
      [inbox],
      () => inbox.msgs.some((m) => m?.[SENTINEL] === ids[i]),
      ms,
      () => `sentinel ${ids[i]}`,
    ),
  );
  paths.forEach(([node], i) => node.send({ [SENTINEL]: ids[i] }));
  await Promise.all(arrived);
  for (const [, inbox] of paths) {
    for (let i = inbox.msgs.length - 1; i >= 0; i--)
      if (inbox.msgs[i]?.[SENTINEL] !== undefined) inbox.msgs.splice(i, 1);
  }
}

export interface PushWatch {
  /** Resolves once `test()` holds, re-checked after every push; rejects after `ms`. */
  until(test: () => boolean, what: string, ms?: number): Promise<void>;
  /** Puts the array's own push back. */
  restore(): void;
}

/**
 * Makes the pushes onto `log` observable (an in-process server's record of the requests it
 * received): `until(test)` is woken by each push, so a test waits for "the server got it"
 * rather than for a guessed time.
 */
export function watchPushes<T>(log: T[]): PushWatch {
  const listeners = new Set<() => void>();
  const hadOwn = Object.prototype.hasOwnProperty.call(log, 'push');
  const push = log.push;
  log.push = function (this: T[], ...items: T[]): number {
    const length = push.apply(this, items);
    for (const l of [...listeners]) l();
    return length;
  };
  return {
    until(test, what, ms = 10_000) {
      if (test()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!test()) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
        }, ms);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
      });
    },
    restore() {
      listeners.clear();
      if (hadOwn) log.push = push;
      else delete (log as { push?: unknown }).push;
    },
  };
}

/**
 * Tracks the timers (setTimeout, setInterval) that the package's code under src/ sets itself
 * (the simulator's excepted) from now on; `pending()` names the call sites of those neither
 * fired nor cleared. A timer counts only when its direct caller is in src/: timers Node or a
 * library sets on the package's behalf (an HTTP socket's keep-alive, say) are left out, as
 * their stacks merely pass through src/. Node reports a cleared timer gone one event-loop
 * turn later (before the next setImmediate callback), so look after an awaited delivery.
 */
export function watchOwnTimers(): { pending(): string[]; stop(): void } {
  const live = new Map<number, string>();
  const hook = createHook({
    init(id, type) {
      if (type !== 'Timeout') return;
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 20;
      const stack = new Error().stack ?? '';
      Error.stackTraceLimit = limit;
      const caller = stack
        .split('\n')
        .slice(1)
        .map((l) => l.trim())
        .find((l) => !/\(node:|^at node:/.test(l) && !l.includes('/test/helpers/barrier.'));
      if (caller && caller.includes('/src/') && !caller.includes('/src/simulator/') && !caller.includes('node_modules'))
        live.set(id, caller);
    },
    destroy(id) {
      live.delete(id);
    },
  }).enable();
  return {
    pending: () => [...live.values()],
    stop: () => {
      hook.disable();
    },
  };
}
