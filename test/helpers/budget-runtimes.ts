/**
 * The request-budget tests against the simulator: a simulator per test, runtimes on it with
 * their budget (closed after each test, before the simulator), and fake Date and timers when
 * a test asks for them (the simulator restarted so that it follows them).
 */
import FakeTimers from '@sinonjs/fake-timers';
import { BudgetRegistry, createRuntime, type Runtime } from '../../src/runtime';
import { useSimulator } from './sim';

/** For a describe block; `budgetId` is the runtimes' budget by default, `now` where `fake()` starts the clock. */
export function useBudgetRuntimes(budgetId: string, now: number) {
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    for (const rt of runtimes.splice(0)) await rt.close();
    clock?.uninstall();
    clock = undefined;
  });
  const sim = useSimulator({}, { each: true }); // (closed after the runtimes and the clock above)
  return {
    s: sim,
    /** The fake clock once `fake()` installed it. */
    get clock() {
      return clock;
    },
    runtime: async (props: Record<string, unknown>, registry = new BudgetRegistry(), id = budgetId) => {
      const rt = await createRuntime({ baseUrl: sim.url, retries: 0, coalesceMs: 0, ...props }, {}, undefined, {
        budgetId: id,
        budgets: registry,
      });
      runtimes.push(rt);
      return rt;
    },
    /** Fake Date and timers, and a simulator that follows them. */
    fake: async () => {
      await sim.close();
      clock = FakeTimers.install({ now, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
      await sim.restart();
    },
  };
}
