/**
 * Many waiters on one AbortSignal, at a constant cost each. Node's EventTarget walks every
 * listener of a signal on each addEventListener (to refuse duplicates) and each
 * removeEventListener, so a burst of N waiters each adding its own listener to one long-lived
 * signal (a node's) costs N² in all. Here a signal gets one listener, the first time a waiter
 * asks, which calls the waiters of a Set: adding and removing a waiter is O(1).
 */

/**
 * A waiter on the hot path (an attempt): told through its `notifyAbort` method, and kept in an
 * array at `abortSlot` (its place, kept by the hub), so joining and leaving cost no closure and no hashing.
 */
export interface SlotWaiter {
  notifyAbort(): void;
  abortSlot: number;
}

/** One signal's watch, shared by its waiters (opaque outside this file). */
export interface Hub {
  signal: AbortSignal;
  waiters: Set<() => void>;
  slots: SlotWaiter[];
  listener: () => void;
  /** In `idle` (no waiter since it was put there, as far as the last sweep saw). */
  idle: boolean;
  /** Found idle by the last sweep: the next one removes it unless a waiter came meanwhile. */
  marked: boolean;
  /** The signal aborted (the hub stays known, so isAborted need not ask the signal). */
  fired: boolean;
}

/** How often idle listeners are looked at, ms; one idle for a whole period is removed. */
export const SWEEP_MS = 30_000;

const hubs = new WeakMap<AbortSignal, Hub>();
/** Hubs with no waiter whose listener is still on. */
const idle = new Set<Hub>();
let lastSweep = Date.now();

/**
 * Whether `signal` has aborted. A signal the hub watches answers from its hub (a WeakMap
 * lookup): AbortSignal's own `aborted` getter costs microseconds once a process holds
 * thousands of signals (each node's, joined with its client's), as a polling fleet does.
 */
export function isAborted(signal: AbortSignal | undefined): boolean {
  if (signal === undefined || signal === null) return false;
  const hub = knownHub(signal);
  return hub === undefined ? signal.aborted : hub.fired;
}

/**
 * The last signal looked up and its hub: an attempt asks for the same signal several times in a
 * row (the transport, the adapter, the exchange joining it), one WeakMap lookup serves them all.
 */
let lastSignal: AbortSignal | undefined;
let lastHub: Hub | undefined;

function knownHub(signal: AbortSignal): Hub | undefined {
  if (signal === lastSignal) return lastHub;
  const hub = hubs.get(signal);
  if (hub !== undefined) {
    lastSignal = signal;
    lastHub = hub;
  }
  return hub;
}

/**
 * Calls `fn` once when `signal` aborts (on the next microtask if it has aborted already).
 * Returns the function that removes it; call it once the wait is over.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  const hub = hubOf(signal);
  if (hub.fired) {
    queueMicrotask(fn);
    return () => undefined;
  }
  hub.waiters.add(fn);
  return () => {
    hub.waiters.delete(fn);
    leftWaiter(hub);
  };
}

/**
 * As onAbort, for a waiter on the hot path: the hub it joined is returned instead of a closure;
 * `leaveAbort(hub, waiter)` ends the wait.
 */
export function joinAbort(signal: AbortSignal, waiter: SlotWaiter): Hub {
  const hub = hubOf(signal);
  if (hub.fired) {
    waiter.abortSlot = -1;
    queueMicrotask(() => waiter.notifyAbort());
    return hub;
  }
  waiter.abortSlot = hub.slots.length;
  hub.slots.push(waiter);
  return hub;
}

/** Ends a wait begun with joinAbort (once). */
export function leaveAbort(h: Hub, waiter: SlotWaiter): void {
  const slots = h.slots;
  const place = waiter.abortSlot;
  if (slots[place] !== waiter) return; // the signal aborted: the hub let its waiters go
  const last = slots.pop()!;
  if (last !== waiter) {
    slots[place] = last;
    last.abortSlot = place;
  }
  leftWaiter(h);
}

/** Uses of a known hub between two looks at the clock for a sweep. */
const USES_PER_LOOK = 64;
let usesSinceLook = 0;

/**
 * The hub of `signal` (made on first use), found in use. The clock is read (for a sweep) when
 * a new signal comes, as hubs are added, and every USES_PER_LOOK uses of known ones: not on
 * every request.
 */
function hubOf(signal: AbortSignal): Hub {
  let hub = knownHub(signal);
  if (hub === undefined || ++usesSinceLook >= USES_PER_LOOK) {
    usesSinceLook = 0;
    const now = Date.now();
    if (now - lastSweep >= SWEEP_MS || now < lastSweep) {
      sweep(now);
      hub = knownHub(signal); // the sweep may have removed it
    }
    if (hub === undefined) hub = watch(signal);
  }
  hub.marked = false;
  return hub;
}

/**
 * A waiter left: a hub with none left is put among the idle ones, its listener kept. A signal
 * whose waiters come and go (a polling node's: one read every few seconds, each waiting for a
 * concurrency slot and its attempt) would otherwise pay an addEventListener and a
 * removeEventListener per read, the larger part of the client's own cost per poll.
 */
function leftWaiter(h: Hub): void {
  if (!h.fired && h.waiters.size === 0 && h.slots.length === 0 && !h.idle) {
    h.idle = true;
    idle.add(h);
  }
}

function watch(signal: AbortSignal): Hub {
  const hub: Hub = {
    signal,
    waiters: new Set(),
    slots: [],
    listener: () => fire(hub),
    idle: false,
    marked: false,
    fired: false,
  };
  hubs.set(signal, hub);
  // Asked once per signal: one that aborted already gets no listener (it would never be called).
  if (signal.aborted) {
    hub.fired = true;
    return hub;
  }
  // Looked up once per signal, not per waiter: on an AbortSignal the lookup is a slow one. A
  // signal-like object without it (axios takes any with `aborted`) is watched by no listener.
  if (typeof signal.addEventListener === 'function') signal.addEventListener('abort', hub.listener, { once: true });
  return hub;
}

function fire(hub: Hub): void {
  // Kept (weakly, by its signal): isAborted answers from it from now on.
  hub.fired = true;
  idle.delete(hub);
  // A waiter that throws must not keep the others from hearing of the abort.
  const slots = hub.slots;
  hub.slots = [];
  for (const w of [...hub.waiters]) {
    try {
      w();
    } catch {
      /* the waiter's own failure; the rest still run */
    }
  }
  hub.waiters.clear();
  for (const w of slots) {
    try {
      w.notifyAbort();
    } catch {
      /* the waiter's own failure; the rest still run */
    }
  }
}

/**
 * Removes the listeners idle through a whole period (checked as waiters arrive: no timer); marks
 * the ones idle now. So a composite signal (AbortSignal.any, which Node keeps alive while it has
 * an abort listener) is not kept for long after its last use.
 */
function sweep(now: number): void {
  lastSweep = now;
  for (const hub of idle) {
    if (hub.waiters.size > 0 || hub.slots.length > 0) {
      hub.idle = false;
      idle.delete(hub);
    } else if (hub.marked) {
      idle.delete(hub);
      hubs.delete(hub.signal);
      if (hub === lastHub) lastSignal = lastHub = undefined;
      if (typeof hub.signal.removeEventListener === 'function') hub.signal.removeEventListener('abort', hub.listener);
    } else {
      hub.marked = true;
    }
  }
}
