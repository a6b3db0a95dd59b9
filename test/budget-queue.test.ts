/**
 * The request budget's 'queue' mode keeps its promise from the moment a request arrives
 * (src/runtime/budget.ts, budget-turns.ts): a request that could not go within the queue's
 * bound (10 minutes) is refused at once, also while others wait for a concurrency slot ahead
 * of it; the rest go in order as the caps allow. Runtime against the simulator on 127.0.0.1:0;
 * time is @sinonjs/fake-timers (Date and timers; the simulator follows them), nothing sleeps.
 */
import assert from 'node:assert/strict';
import { BudgetError } from '../src/client';
import { Budget, budgetCaps } from '../src/runtime';
import type { Attempt } from '../src/client';
import { useBudgetRuntimes } from './helpers/budget-runtimes';

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

interface Outcome {
  ok: boolean;
  error?: unknown;
}

describe('request budget: queue mode keeps its bound from arrival', function () {
  this.timeout(30_000);
  const runtimes = useBudgetRuntimes('cfg-queue', T0);
  const { s, runtime, fake } = runtimes;
  /** The device index of each read the simulator received, in the order received. */
  const sentIndices = () => s.sim.requestLog.map((e) => Number(/dvc_burst(\d+)/.exec(e.path)?.[1]));

  it('20 a minute, 100 a day, concurrency 2: of 2,000 reads 1,900 fail at once naming maxPerDay, 100 go in order, 20 a minute', async () => {
    await fake();
    const rt = await runtime({ maxPerMinute: 20, maxPerDay: 100, budgetMode: 'queue', concurrency: 2 });
    const outcomes: Array<Outcome | undefined> = Array.from({ length: 2000 }, () => undefined);
    const reads = range(0, 2000).map((i) =>
      rt.client.getMeasurement(`dvc_burst${String(i).padStart(4, '0')}`, 'soc').then(
        () => {
          outcomes[i] = { ok: true };
        },
        (error) => {
          outcomes[i] = { ok: false, error };
        },
      ),
    );
    // The first 20 go at once (each answered: these devices are unknown, 404, a request sent all the same).
    await Promise.all(reads.slice(0, 20));
    // By then every arrival was looked at (before any answer came): all beyond the day's 100 have failed.
    const failed = range(0, 2000).filter(
      (i) => outcomes[i] && !outcomes[i]!.ok && outcomes[i]!.error instanceof BudgetError,
    );
    assert.deepEqual(failed, range(100, 2000), 'reads 100..1999 refused at once, no clock tick');
    const budgetError = outcomes[1999]!.error as BudgetError;
    assert.equal(budgetError.code, 'EMS_BUDGET');
    assert.equal(budgetError.field, 'maxPerDay');
    assert.match(
      budgetError.message,
      /^GET \/devices\/dvc_burst1999\/measurement not sent: request budget maxPerDay reached \(\d+ of 100 requests in the last 24 h and \d+ waiting ahead of it\); its turn would come at 2026-11-24T12:0\d:00\.000Z, later than budgetMode "queue" waits \(10 minutes\)$/,
    );
    assert.equal(outcomes.filter((o) => o === undefined).length, 80, 'the other 80 wait, neither sent nor failed');
    assert.equal(rt.budget.stats().queued, 80, 'and the stats count them as queued');
    assert.deepEqual(
      sentIndices().sort((a, b) => a - b),
      range(0, 20),
    );
    let st = rt.budget.stats();
    assert.deepEqual({ sent: st.total.sent, refused: st.total.refused }, { sent: 20, refused: 1900 });
    // Then 20 a minute, in the order they arrived (the minute's window frees 61 s after its first).
    for (let batch = 1; batch < 5; batch++) {
      await runtimes.clock!.tickAsync(61_000);
      await Promise.all(reads.slice(20 * batch, 20 * batch + 20));
      const sent = sentIndices();
      assert.equal(sent.length, 20 * (batch + 1), `batch ${batch}`);
      assert.deepEqual(
        sent.slice(20 * batch).sort((a, b) => a - b),
        range(20 * batch, 20 * batch + 20),
        `batch ${batch} in order`,
      );
      for (const entry of s.sim.requestLog.slice(20 * batch)) assert.equal(entry.time, T0 + batch * 61_000);
    }
    assert.equal(outcomes.filter((o) => o === undefined).length, 0, 'every read ended');
    st = rt.budget.stats();
    assert.deepEqual(
      { sent: st.total.sent, refused: st.total.refused, queued: st.queued },
      { sent: 100, refused: 1900, queued: 0 },
    );
    assert.ok(
      s.sim.requestLog.every((x) => x.time - T0 < 10 * 60_000),
      'none waited longer than 10 minutes',
    );
  });

  it('concurrency 1: while one read waits for the budget in the slot and others for the slot, one whose turn would come after 10 minutes fails at once', async () => {
    await fake();
    const rt = await runtime({ maxPerMinute: 1, budgetMode: 'queue', concurrency: 1 });
    // (Unknown devices: each answered 404, a request sent all the same.)
    const read = (i: number) =>
      rt.client.getMeasurement(`dvc_burst${i}`, 'soc').then(
        () => 'sent',
        (e: unknown) => (e instanceof BudgetError ? e : 'sent'),
      );
    await read(0);
    const waiting = range(1, 10).map(read);
    // Nine wait (the 9th goes at 9 × 61 s, within 10 minutes); the 10th could only go at 10 × 61 s.
    const result = await read(10);
    assert.ok(result instanceof BudgetError, String(result));
    assert.match(
      result.message,
      /maxPerMinute reached \(1 of 1 requests in the last 60 s and 9 waiting ahead of it\); its turn would come at 2026-11-23T12:10:10\.000Z, later than budgetMode "queue" waits \(10 minutes\)$/,
    );
    for (const w of waiting) {
      await runtimes.clock!.tickAsync(61_000);
      assert.equal(await w, 'sent');
    }
    assert.deepEqual(
      s.sim.requestLog.map((e) => e.time - T0),
      range(0, 10).map((i) => i * 61_000),
    );
  });
});

describe('request budget: turns on arrival (injected clock)', () => {
  const attempt = (over: Partial<Attempt> = {}): Attempt => ({
    kind: 'read',
    method: 'GET',
    url: '/devices/dvc_1/measurement',
    retry: false,
    ...over,
  });

  it('a request that ends before its slot gives its turn back; refuse mode and retries are not held on arrival', () => {
    let now = T0;
    const budget = new Budget(() => now);
    budget.configure(budgetCaps({ maxPerMinute: 1, budgetMode: 'queue' }));
    const first = attempt();
    budget.admit(first);
    assert.equal(budget.before(first), undefined, 'room: it goes');
    const queued = range(0, 9).map(() => attempt());
    for (const a of queued) budget.admit(a);
    assert.throws(() => budget.admit(attempt()), BudgetError, 'the 10th in line would go after 10 minutes');
    budget.release(queued[8]);
    const late = attempt();
    budget.admit(late);
    assert.equal(late.admittedAt, T0);
    budget.configure(budgetCaps({ maxPerMinute: 1, budgetMode: 'refuse' }));
    assert.doesNotThrow(() => budget.admit(attempt()), 'refuse mode decides in the slot');
    budget.configure(budgetCaps({ maxPerMinute: 1, budgetMode: 'queue' }));
    assert.doesNotThrow(() => budget.admit(attempt({ retry: true })), 'a retry is decided in its slot');
    now += 1;
    assert.throws(() => budget.admit(attempt()), /and 9 waiting ahead of it/);
    budget.close();
  });

  it('steering is refused on arrival when its turn comes at or after its validUntil', () => {
    const budget = new Budget(() => T0);
    budget.configure(budgetCaps({ maxPerMinute: 1, budgetMode: 'queue' }));
    const first = attempt();
    budget.admit(first);
    void budget.before(first); // room in the minute and nobody waiting: it goes at once, no promise
    budget.admit(attempt());
    assert.throws(
      () => budget.admit(attempt({ kind: 'steer', method: 'POST', validUntil: T0 + 100_000 })),
      /its turn would come at 2026-11-23T12:02:02\.000Z; the signal's validUntil 2026-11-23T12:01:40\.000Z comes first/,
    );
    budget.close();
  });
});
