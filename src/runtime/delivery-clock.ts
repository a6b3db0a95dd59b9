/**
 * The clock of the delivery checks: time and timers, injected (a @sinonjs/fake-timers clock in
 * tests), with a default that tests set (setDeliveryClock) and a schedule node shares.
 */
/** Time and timers of the checks (a @sinonjs/fake-timers clock fits: `{ now: () => c.now, setTimeout: c.setTimeout, clearTimeout: c.clearTimeout }`). */
export interface CheckClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(t: unknown): void;
}

const systemClock: CheckClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t as NodeJS.Timeout),
};

let defaultClock: CheckClock = systemClock;

/** The clock of checks that are given none (tests; undefined: the system clock again). */
export function setDeliveryClock(c?: CheckClock): void {
  defaultClock = c ?? systemClock;
}

/** The clock of checks that are given none (a schedule node multiplexes its one timer on it: runtime/shared-clock.ts). */
export function deliveryClock(): CheckClock {
  return defaultClock;
}

/** The default clock's time (what `from` is compared with when a check is given no clock). */
export function deliveryNow(): number {
  return defaultClock.now();
}
