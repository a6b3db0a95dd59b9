/**
 * A fake clock (@sinonjs/fake-timers) installed before each test of a describe block and
 * uninstalled after it: tests drive time with it, never by sleeping.
 */
import FakeTimers from '@sinonjs/fake-timers';

export type InstalledClock = ReturnType<typeof FakeTimers.install>;

/** Installs a fake clock with `opts` before each test and hands it to `ready`; uninstalls it after. */
export function useFakeClock(
  opts: () => NonNullable<Parameters<typeof FakeTimers.install>[0]>,
  ready: (clock: InstalledClock) => void,
): void {
  let clock: InstalledClock | undefined;
  beforeEach(() => {
    clock = FakeTimers.install(opts());
    ready(clock);
  });
  afterEach(() => {
    clock?.uninstall();
  });
}

/** A fake clock's timers, whatever the version of @sinonjs/fake-timers keeps them in. */
function timersOf(clock: InstalledClock): Array<{ func?: { name?: string }; callAt: number; id: number }> {
  const store = (clock as unknown as { timers?: Map<number, never> | Record<string, never> }).timers;
  if (!store) return [];
  return store instanceof Map ? [...store.values()] : Object.values(store);
}

/**
 * undici's timer of an idle keep-alive connection (it closes the connection when the server's
 * keep-alive runs out): set with the global setTimeout each time a connection of the client's
 * pool goes idle, so a fake clock sees it. It is the pool's, not a timer of the package.
 */
function isPoolTimer(t: { func?: { name?: string } }): boolean {
  return t.func?.name === 'onParserTimeout';
}

/** clock.countTimers() without the connection pool's idle-connection timers. */
export function packageTimers(clock: InstalledClock): number {
  return clock.countTimers() - timersOf(clock).filter(isPoolTimer).length;
}

/** clock.nextAsync() for the package's timers: runs the clock to the next one that is not the pool's (firing the pool's on the way). */
export async function nextPackageTimer(clock: InstalledClock): Promise<number> {
  const next = timersOf(clock)
    .filter((t) => !isPoolTimer(t))
    .sort((a, b) => a.callAt - b.callAt || a.id - b.id)[0];
  if (next) await clock.tickAsync(Math.max(0, next.callAt - clock.now));
  return clock.now;
}
