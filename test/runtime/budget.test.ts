/**
 * The request budget of a config node (src/runtime/budget.ts), on the client and the
 * runtime against the simulator on 127.0.0.1:0: counts exact against the simulator's request
 * log, refuse and queue at a cap, retries stopping at a cap, steering in queue mode never sent
 * after its validUntil, and budgets that survive a redeploy (same registry) but not a new
 * process (a new registry). Time is @sinonjs/fake-timers or an injected clock; nothing sleeps.
 */
import assert from 'node:assert/strict';
import { packageTimers } from '../helpers/clock';
import { DEFAULT_SITES } from '../../src/simulator';
import { AbortedError, ApiError, BudgetError } from '../../src/client';
import { Budget, BudgetRegistry, budgetCaps, QUEUE_MAX_WAIT_MS, type Runtime } from '../../src/runtime';
import type { Attempt } from '../../src/client';
import { clientFor } from '../helpers/sim';
import { useBudgetRuntimes } from '../helpers/budget-runtimes';

const DEVICE = DEFAULT_SITES[0].battery!.deviceReference;
const HOME_DEVICE = DEFAULT_SITES[1].battery!.deviceReference;
const SITE = DEFAULT_SITES[0].siteReference;
const MIN = 60_000;

/** What a budget's counts are, by window, in one object. */
function windows(b: Budget) {
  const stats = b.stats();
  return { minute: stats.lastMinute, hour: stats.lastHour, day: stats.lastDay, total: stats.total };
}

/** Awaits a promise's settling while the fake clock stands still (a few loop turns). */
async function settled<T>(p: Promise<T>): Promise<{ ok: boolean; value?: T; error?: unknown }> {
  return p.then(
    (value) => ({ ok: true, value }),
    (error) => ({ ok: false, error }),
  );
}

describe('request budget: counting (injected clock)', () => {
  const attempt = (retry = false): Attempt => ({
    kind: 'read',
    method: 'GET',
    url: '/devices/d/measurement?property=soc',
    retry,
  });

  it('counts sent, retried, 429s and failures per last minute, hour and day, and forgets each window in time', () => {
    let now = Date.UTC(2026, 10, 23, 12, 0, 0);
    const budget = new Budget(() => now);
    budget.configure(budgetCaps({}));
    // Without a queue, before() counts the attempt or throws at once: it returns no promise here.
    for (let i = 0; i < 5; i++) {
      const request = attempt(i >= 3);
      void budget.before(request);
      budget.after(request, i === 1 ? '429' : i === 2 ? 'failure' : 'ok');
    }
    const counts = { sent: 5, retried: 2, rateLimited: 1, failed: 1, refused: 0 };
    assert.deepEqual(windows(budget), { minute: counts, hour: counts, day: counts, total: counts });
    now += 62_000;
    assert.deepEqual(windows(budget).minute, { sent: 0, retried: 0, rateLimited: 0, failed: 0, refused: 0 });
    assert.deepEqual(windows(budget).hour, counts);
    now += 60 * MIN;
    assert.equal(windows(budget).hour.sent, 0);
    assert.deepEqual(windows(budget).day, counts);
    now += 24 * 60 * MIN;
    assert.equal(windows(budget).day.sent, 0);
    assert.deepEqual(windows(budget).total, counts, 'the total since counting began stays');
  });

  it('caps hold in every sliding window: maxPerMinute frees 60-61 s after the oldest attempt', () => {
    let now = Date.UTC(2026, 10, 23, 12, 0, 0, 500);
    const budget = new Budget(() => now);
    budget.configure(budgetCaps({ maxPerMinute: 2 }));
    // Without a queue, before() counts the attempt or throws at once: it returns no promise here.
    void budget.before(attempt());
    now += 30_000;
    void budget.before(attempt());
    const refused = (() => {
      try {
        void budget.before(attempt());
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    assert.ok(refused instanceof BudgetError);
    assert.equal(refused.field, 'maxPerMinute');
    assert.deepEqual(
      { ...refused.budget },
      { cap: 'maxPerMinute', limit: 2, count: 2, freesAt: Date.UTC(2026, 10, 23, 12, 1, 1) },
    );
    assert.match(
      refused.message,
      /^GET \/devices\/d\/measurement not sent: request budget maxPerMinute reached \(2 of 2 requests in the last 60 s\); frees at 2026-11-23T12:01:01\.000Z/,
    );
    now = Date.UTC(2026, 10, 23, 12, 1, 0, 999);
    assert.throws(() => budget.before(attempt()), BudgetError, 'still within 60 s of the first (to the second)');
    now = Date.UTC(2026, 10, 23, 12, 1, 1);
    assert.doesNotThrow(() => budget.before(attempt()));
    assert.equal(budget.stats().total.refused, 2);
  });

  it('refuses settings out of the limits table, naming the setting', () => {
    assert.throws(
      () => budgetCaps({ maxPerMinute: -1 }),
      /maxPerMinute must be a whole number of requests per minute from 0 to 1000000 \(0 = no limit\); got -1/,
    );
    assert.throws(() => budgetCaps({ maxPerDay: 1.5 }), /maxPerDay must be a whole number/);
    assert.throws(() => budgetCaps({ budgetMode: 'drop' }), /budgetMode must be "refuse".*"queue".*got "drop"/);
    assert.deepEqual(
      budgetCaps({}),
      { maxPerMinute: 0, maxPerDay: 0, budgetMode: 'refuse' },
      'a flow saved without them: no caps',
    );
  });

  it('warns from 80 % of a cap, in steps of 5, and ends the warning when the window frees', () => {
    let now = Date.UTC(2026, 10, 23, 12, 0, 0);
    const budget = new Budget(() => now);
    budget.configure(budgetCaps({ maxPerDay: 20 }));
    const seen: unknown[] = [];
    const off = budget.onWarning((w) => seen.push(w));
    // Without a queue, before() counts the attempt or throws at once: it returns no promise here.
    for (let i = 0; i < 15; i++) void budget.before(attempt());
    assert.deepEqual(seen, []);
    void budget.before(attempt());
    assert.deepEqual(seen, [{ cap: 'maxPerDay', percent: 80 }]);
    void budget.before(attempt());
    void budget.before(attempt());
    assert.deepEqual(seen.at(-1), { cap: 'maxPerDay', percent: 90 });
    assert.deepEqual(budget.stats().usage, { maxPerMinute: null, maxPerDay: 90 });
    now += 24 * 60 * MIN + MIN;
    budget.configure(budgetCaps({ maxPerDay: 20 })); // looked at again (a redeploy, or the warning's timer)
    assert.equal(seen.at(-1), null);
    off();
  });
});

describe('request budget: against the simulator', function () {
  this.timeout(20_000);
  const runtimes = useBudgetRuntimes('cfg-budget', Date.UTC(2026, 10, 23, 12, 0, 0));
  const { s, runtime, fake } = runtimes;
  const log = () => s.sim.requestLog;
  const read = (rt: Runtime, device = DEVICE) => rt.client.getMeasurement(device, 'soc');

  it('counts every attempt exactly as the simulator logged it: sent, retried, 429s, failures', async () => {
    s.sim.setFaults({ rate500: 0.25, rate429: 0.2, resetRate: 0.1, retryAfterSeconds: 0 });
    const budget = new Budget();
    const client = clientFor(s, { retries: 3, retryBaseMs: 1, retryMaxMs: 2, attempts: budget });
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 40 }, (_, i) => client.getMeasurement(i % 2 ? DEVICE : HOME_DEVICE, 'soc')),
      );
      const entries = log();
      const st = budget.stats();
      assert.equal(st.total.sent, entries.length);
      assert.equal(st.total.retried, entries.length - 40, 'every attempt after the first of each read');
      assert.equal(st.total.rateLimited, entries.filter((e) => e.status === 429).length);
      assert.equal(
        st.total.failed,
        entries.filter((e) => e.status !== 429 && (e.status === 0 || e.status >= 400)).length,
      );
      assert.ok(st.total.rateLimited > 0 && st.total.failed > 0 && st.total.retried > 0, JSON.stringify(st.total));
      assert.deepEqual(st.lastMinute, st.total);
      assert.deepEqual(st.lastDay, st.total);
      assert.ok(results.some((r) => r.status === 'fulfilled'));
    } finally {
      client.close();
    }
  });

  it('refuse: a read at maxPerMinute fails at once (Catch-able, names the cap, the count and when it frees); nothing is sent', async () => {
    await fake();
    const rt = await runtime({ maxPerMinute: 3 });
    for (let i = 0; i < 3; i++) await read(rt);
    const result = await settled(read(rt));
    assert.equal(result.ok, false);
    const error = result.error as BudgetError;
    assert.ok(error instanceof BudgetError && error instanceof ApiError);
    assert.equal(error.code, 'EMS_BUDGET');
    assert.equal(error.field, 'maxPerMinute');
    assert.match(
      error.message,
      /^GET \/devices\/dvc_\w+\/measurement not sent: request budget maxPerMinute reached \(3 of 3 requests in the last 60 s\); frees at 2026-11-23T12:01:01\.000Z \(budgetMode "refuse"\)$/,
    );
    assert.equal(log().length, 3);
    await runtimes.clock!.tickAsync(61_000);
    await read(rt);
    assert.equal(log().length, 4);
    assert.deepEqual(
      { sent: rt.budget.stats().total.sent, refused: rt.budget.stats().total.refused },
      { sent: 4, refused: 1 },
    );
  });

  it('queue: a read at maxPerMinute waits until the window frees, then goes; one that would wait past the bound is refused at once', async () => {
    await fake();
    const rt = await runtime({ maxPerMinute: 2, maxPerDay: 4, budgetMode: 'queue' });
    await read(rt);
    await read(rt);
    let done = false;
    const waiting = read(rt).then(() => {
      done = true;
    });
    await runtimes.clock!.tickAsync(30_000);
    assert.equal(done, false);
    assert.equal(log().length, 2, 'nothing sent while it waits');
    assert.equal(rt.budget.stats().queued, 1);
    await runtimes.clock!.tickAsync(31_000);
    await waiting;
    assert.equal(log().length, 3);
    await read(rt);
    // maxPerDay 4 is reached: it would free in about 24 h, more than the queue waits.
    const result = await settled(read(rt));
    assert.ok(result.error instanceof BudgetError);
    assert.equal(result.error.field, 'maxPerDay');
    assert.match(
      result.error.message,
      /maxPerDay reached \(4 of 4 requests in the last 24 h\); frees at 2026-11-24T12:01:00\.000Z, later than budgetMode "queue" waits \(10 minutes\)/,
    );
    assert.equal(log().length, 4);
    assert.equal(QUEUE_MAX_WAIT_MS, 600_000);
  });

  it('queue: an aborted wait sends nothing and leaves no timer', async () => {
    await fake();
    const rt = await runtime({ maxPerMinute: 1, budgetMode: 'queue' });
    await read(rt);
    const pending = settled(read(rt));
    await runtimes.clock!.tickAsync(1000);
    const closing = rt.close();
    const result = await pending;
    await closing;
    assert.equal(result.ok, false);
    assert.ok(result.error instanceof AbortedError, String(result.error));
    assert.equal(rt.budget.stats().queued, 0);
    assert.equal(packageTimers(runtimes.clock!), 0);
    await runtimes.clock!.tickAsync(120_000);
    assert.equal(log().length, 1);
  });

  it('retries count and stop before they would break a cap (refuse and queue alike)', async () => {
    s.sim.setFaults({ rate500: 1 });
    for (const budgetMode of ['refuse', 'queue'] as const) {
      s.sim.clearLog();
      const budget = new Budget();
      budget.configure(budgetCaps({ maxPerMinute: 3, budgetMode }));
      const client = clientFor(s, { retries: 5, retryBaseMs: 1, retryMaxMs: 2, attempts: budget });
      try {
        const result = await settled(client.getMeasurement(DEVICE, 'soc'));
        const error = result.error as BudgetError;
        assert.ok(error instanceof BudgetError, String(error));
        assert.equal(error.field, 'maxPerMinute');
        assert.match(
          error.message,
          /^retry of GET \/devices\/\w+\/measurement not sent: request budget maxPerMinute reached \(3 of 3 .*a retry is not made when it would break a cap$/,
        );
        assert.equal(log().length, 3, `${budgetMode}: three attempts sent, the fourth not`);
        assert.deepEqual(budget.stats().total, { sent: 3, retried: 2, rateLimited: 0, failed: 3, refused: 1 });
      } finally {
        client.close();
      }
    }
  });

  it('queue: steering waits only while it would still be sent before its validUntil; nothing is sent after it', async () => {
    await fake();
    const t0 = Date.now();
    const rt = await runtime({ maxPerMinute: 1, budgetMode: 'queue' });
    const steer = (validUntil: number) => rt.client.steerEss(SITE, { setting: { value: 1, unit: 'kW' }, validUntil });
    await steer(t0 + 15 * MIN);
    // The window frees at t0 + 61 s: a signal valid 30 s is refused at once, naming both times.
    const short = await settled(steer(t0 + 30_000));
    assert.ok(short.error instanceof BudgetError);
    assert.match(
      short.error.message,
      /^POST \/sites\/\w+\/steering\/ess not sent: request budget maxPerMinute reached .* frees at 2026-11-23T12:01:01\.000Z; the signal's validUntil 2026-11-23T12:00:30\.000Z comes first, and nothing is sent after it$/,
    );
    // A read waits first; a signal valid 90 s queues behind it. At t0 + 61 s the read goes and the
    // window is full again until t0 + 122 s, after the signal's end: it is refused then, never sent.
    const r1 = settled(read(rt));
    await runtimes.clock!.tickAsync(1);
    const s2 = settled(steer(t0 + 90_000));
    const s3 = settled(steer(t0 + 10 * MIN));
    await runtimes.clock!.tickAsync(61_000);
    assert.equal((await r1).ok, true);
    const late = await s2;
    assert.ok(late.error instanceof BudgetError, String(late.error));
    assert.match(late.error.message, /validUntil 2026-11-23T12:01:30\.000Z comes first/);
    await runtimes.clock!.tickAsync(61_000);
    assert.equal((await s3).ok, true);
    const steering = log().filter((e) => e.method === 'POST');
    assert.equal(steering.length, 2);
    for (const e of steering)
      assert.ok(e.time < (e.body as { validUntil: number }).validUntil, 'sent before its validUntil');
    assert.equal(log().length, 3);
  });

  it('a refusal names the path without its query and with every secret masked', async () => {
    const key = 'k-SECRET-budget-0099';
    const budget = new Budget();
    budget.configure(budgetCaps({ maxPerMinute: 1 }));
    const client = clientFor(s, { retries: 0, auth: { type: 'header', apiKey: key }, attempts: budget });
    try {
      await settled(client.raw('GET', `/echo/${key}?token=${key}`));
      const result = await settled(client.raw('GET', `/echo/${key}/again?token=${key}`));
      const error = result.error as BudgetError;
      assert.ok(error instanceof BudgetError, String(error));
      assert.match(error.message, /^GET \/echo\/\*\*\*\/again not sent: request budget maxPerMinute reached/);
      assert.equal(error.request.path, '/echo/***/again');
      assert.ok(!JSON.stringify({ ...error, message: error.message }).includes(key));
      assert.equal(log().length, 1);
    } finally {
      client.close();
    }
  });

  it('survives a redeploy (same registry, caps read again), not a new process (a new registry)', async () => {
    const registry = new BudgetRegistry();
    const first = await runtime({ maxPerMinute: 100 }, registry, 'cfg-x');
    await read(first);
    await read(first);
    await first.close();
    const second = await runtime({ maxPerMinute: 50, maxPerDay: 1000, budgetMode: 'queue' }, registry, 'cfg-x');
    assert.equal(second.budget, first.budget);
    const st = second.budget.stats();
    assert.equal(st.lastMinute.sent, 2);
    assert.deepEqual(st.caps, { maxPerMinute: 50, maxPerDay: 1000, budgetMode: 'queue' });
    await read(second);
    assert.equal(second.budget.stats().total.sent, 3);
    const other = await runtime({}, registry, 'cfg-y');
    assert.equal(other.budget.stats().total.sent, 0, 'another config node counts apart');
    const fresh = await runtime({ maxPerMinute: 50 }, new BudgetRegistry(), 'cfg-x');
    assert.equal(fresh.budget.stats().total.sent, 0, 'a new process starts from zero');
    registry.forget('cfg-x');
    assert.equal(registry.peek('cfg-x'), undefined);
    assert.equal(registry.budget('cfg-x').stats().total.sent, 0, 'a removed config node is forgotten');
  });
});
