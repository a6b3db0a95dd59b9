/**
 * A fake clock (@sinonjs/fake-timers) installed before each test of a describe block and
 * uninstalled after it: tests drive time with it, never by sleeping.
 */
import FakeTimers from '@sinonjs/fake-timers';

export type InstalledClock = ReturnType<typeof FakeTimers.install>;

/** Installs a fake clock with `opts` before each test and hands it to `ready`; uninstalls it after. */
export function useFakeClock(opts: () => NonNullable<Parameters<typeof FakeTimers.install>[0]>, ready: (clock: InstalledClock) => void): void {
  let clock: InstalledClock | undefined;
  beforeEach(() => {
    clock = FakeTimers.install(opts());
    ready(clock);
  });
  afterEach(() => {
    clock?.uninstall();
  });
}
