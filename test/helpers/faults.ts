/**
 * Watches for unhandled rejections and uncaught exceptions while a test runs: any of them
 * fails the test (Node-RED would crash or log them).
 */
export function useCrashWatch(): { readonly events: unknown[] } {
  const box = { events: [] as unknown[] };
  const onEvent = (e: unknown) => box.events.push(e);
  before(() => {
    process.on('unhandledRejection', onEvent);
    process.on('uncaughtException', onEvent);
  });
  after(() => {
    process.off('unhandledRejection', onEvent);
    process.off('uncaughtException', onEvent);
  });
  return box;
}

/** Site definitions for parallel runs: copies of a default site with their own references. */
export function manySites<
  T extends {
    siteReference: string;
    battery: { deviceReference: string };
    pv: { deviceReference: string };
    meter: { deviceReference: string };
  },
>(base: T, n: number): T[] {
  const ref = (prefix: string, i: number, tag: string) => `${prefix}_${tag}${String(i).padStart(12 - tag.length, '0')}`;
  return Array.from({ length: n }, (_, i) => ({
    ...base,
    siteReference: ref('ste', i, 'S'),
    battery: { ...base.battery, deviceReference: ref('dvc', i, 'B') },
    pv: { ...base.pv, deviceReference: ref('dvc', i, 'P') },
    meter: { ...base.meter, deviceReference: ref('dvc', i, 'M') },
  }));
}

/**
 * Tracks timers created by the package's own code (a stack frame under /src/, the simulator
 * excepted) and reports
 * those still pending: after a node closes there must be none.
 */
export function watchTimers(): { pending(): string[]; stop(): void } {
  const { createHook } = require('node:async_hooks') as typeof import('node:async_hooks');
  const live = new Map<number, string>();
  const hook = createHook({
    init(id, type) {
      if (type !== 'Timeout') return;
      const frame = (new Error().stack ?? '')
        .split('\n')
        .find((l) => l.includes('/src/') && !l.includes('/src/simulator/') && !l.includes('node_modules'));
      if (frame) live.set(id, frame.trim());
    },
    destroy(id) {
      live.delete(id);
    },
  }).enable();
  return { pending: () => [...live.values()], stop: () => hook.disable() };
}
