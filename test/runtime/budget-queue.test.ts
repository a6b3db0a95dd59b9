/**
 * The request budget's 'queue' mode keeps its promise from the moment a request arrives
 * (src/runtime/budget.ts, budget-turns.ts): a request that could not go within the queue's
 * bound (10 minutes) is refused at once, also while others wait for a concurrency slot ahead
 * of it; the rest go in order as the caps allow. Runtime against the simulator on 127.0.0.1:0;
 * time is @sinonjs/fake-timers (Date and timers; the simulator follows them), nothing sleeps.
 */
import assert from 'node:assert/strict';
import { BudgetError, type Attempt } from '../../src/client';
import { Budget, budgetCaps } from '../../src/runtime';
import { useBudgetRuntimes } from '../helpers/budget-runtimes';
import FakeTimers from '@sinonjs/fake-timers';
import { QUEUE_MAX_WAIT_MS } from '../../src/runtime/budget';
import { BudgetRegistry } from '../../src/runtime/budget-registry';
import { useCrashWatch } from '../helpers/faults';

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

interface Outcome {
  ok: boolean;
  error?: unknown;
}

const EDGE_T0 = Date.UTC(2026, 5, 1, 12);
const MIN = 60_000;

async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

const read = (o: Partial<Attempt> = {}): Attempt => ({
  kind: 'read',
  method: 'GET',
  url: '/devices/d/measurement?property=soc',
  retry: false,
  ...o,
});

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

/**
 * The runtime room's edges (src/runtime), part 3: the request budget's queue (aborts before
 * and while waiting, a retry beside waiters, caps lifted, deadlines that pass behind others,
 * closing while busy, a warning listener that throws); the steering queue refusing, dropping
 * and aborting; the bounded fan-out; the shared clock and the poll scheduler at their edges.
 * Time is a fake clock; the client is a fake that records what it was asked to send.
 */
describe("runtime coverage: the request budget's queue at its edges", () => {
  const crashes = useCrashWatch();
  let clock: ReturnType<typeof FakeTimers.install>;
  let budget: Budget;
  beforeEach(() => {
    clock = FakeTimers.install({ now: EDGE_T0, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    budget = new Budget(() => clock.now);
  });
  afterEach(() => {
    budget.close();
    clock.uninstall();
    assert.deepEqual(crashes.events, []);
  });

  /** Settles into 'sent' or the error's message (a refusal thrown at once too), without waiting on it. */
  const track = (call: () => void | Promise<void>) => {
    const box = { v: 'waiting' };
    void Promise.resolve()
      .then(call)
      .then(
        () => {
          box.v = 'sent';
        },
        (e: Error) => {
          box.v = e.message;
        },
      );
    return box;
  };
  const steer = (validUntil: number): Attempt => ({
    kind: 'steer',
    method: 'POST',
    url: '/sites/s/steering/ess',
    retry: false,
    validUntil,
  });

  it('an attempt whose signal aborted already is not queued nor counted; one aborted while it waits leaves the queue', async () => {
    budget.configure(budgetCaps({ maxPerMinute: 1, budgetMode: 'queue' }));
    await budget.before(read());
    await assert.rejects(
      Promise.resolve(budget.before(read({ signal: AbortSignal.abort(new Error('node closed')) }))),
      /node closed/,
    );
    const ctl = new AbortController();
    const waiting = track(() => budget.before(read({ signal: ctl.signal })));
    const next = track(() => budget.before(read()));
    await turns();
    assert.equal(budget.stats().queued, 2);
    ctl.abort(new Error('redeployed'));
    await turns();
    assert.equal(waiting.v, 'redeployed');
    assert.equal(budget.stats().queued, 1);
    await clock.tickAsync(61_000);
    assert.equal(next.v, 'sent', 'the one behind it went when the minute freed');
    assert.deepEqual([budget.stats().total.sent, budget.stats().total.refused], [2, 0]);
  });

  it('a retry does not wait behind queued attempts while there is room; at the cap it is refused, never queued', async () => {
    budget.configure(budgetCaps({ maxPerMinute: 2, budgetMode: 'queue' }));
    await budget.before(read());
    await budget.before(read());
    const queued = track(() => budget.before(read()));
    await turns();
    clock.setSystemTime(EDGE_T0 + 61_000); // the minute freed; the queue's timer has not run yet
    assert.equal(budget.before(read({ retry: true })), undefined, 'a retry goes at once beside the queue');
    assert.equal(budget.before(read({ retry: true })), undefined);
    assert.throws(
      () => budget.before(read({ retry: true })),
      (e) =>
        e instanceof BudgetError &&
        /^retry of GET \/devices\/d\/measurement not sent/.test(e.message) &&
        /a retry is not made when it would break a cap$/.test(e.message),
    );
    assert.equal(queued.v, 'waiting');
    await clock.tickAsync(130_000);
    assert.equal(queued.v, 'sent');
    assert.deepEqual([budget.stats().total.retried, budget.stats().total.refused], [2, 1]);
  });

  it('lifting the caps lets every waiting attempt go at once', async () => {
    budget.configure(budgetCaps({ maxPerMinute: 1, budgetMode: 'queue' }));
    await budget.before(read());
    const waiting = [track(() => budget.before(read())), track(() => budget.before(read()))];
    await turns();
    assert.deepEqual(
      waiting.map((w) => w.v),
      ['waiting', 'waiting'],
    );
    budget.configure(budgetCaps({}));
    await turns();
    assert.deepEqual(
      waiting.map((w) => w.v),
      ['sent', 'sent'],
    );
    assert.deepEqual([budget.stats().queued, clock.countTimers()], [0, 0]);
  });

  it('behind others, a steering attempt is refused when its validUntil comes, a read when its 10 minutes of queueing pass; each says why', async () => {
    budget.configure(budgetCaps({ maxPerMinute: 1, budgetMode: 'queue' }));
    await budget.before(read());
    const reads = Array.from({ length: 12 }, () => track(() => budget.before(read())));
    const steering = track(() => budget.before(steer(EDGE_T0 + 100_000)));
    await clock.tickAsync(100_000);
    assert.deepEqual(
      reads.slice(0, 2).map((r) => r.v),
      ['sent', 'waiting'],
    );
    assert.match(
      steering.v,
      /^POST \/sites\/s\/steering\/ess not sent: request budget maxPerMinute reached \(1 of 1 requests in the last 60 s\)/,
    );
    assert.match(
      steering.v,
      /the signal's validUntil 2026-06-01T12:01:40(\.000)?Z comes first, and nothing is sent after it$/,
    );
    await clock.tickAsync(QUEUE_MAX_WAIT_MS);
    const values = reads.map((r) => r.v);
    assert.deepEqual(values.slice(0, 9), Array(9).fill('sent'), 'one a minute (and a second) for nine minutes');
    for (const late of values.slice(9)) assert.match(late, /later than budgetMode "queue" waits \(10 minutes\)$/);
    assert.equal(budget.stats().queued, 0);
  });

  it('a cap lowered while attempts wait refuses at once those the window would free too late', async () => {
    budget.configure(budgetCaps({ maxPerMinute: 1, budgetMode: 'queue' }));
    await budget.before(read());
    const readTracked = track(() => budget.before(read()));
    const steerTracked = track(() => budget.before(steer(EDGE_T0 + 5 * MIN)));
    await turns();
    budget.configure(budgetCaps({ maxPerMinute: 1, maxPerDay: 1, budgetMode: 'queue' }));
    await turns();
    assert.match(
      readTracked.v,
      /request budget maxPerDay reached \(1 of 1 requests in the last 24 h\).*later than budgetMode "queue" waits/,
    );
    assert.match(steerTracked.v, /request budget maxPerDay reached.*the signal's validUntil .* comes first/);
    assert.equal(clock.countTimers(), 0);
  });

  it('closing while attempts wait refuses them naming the removal; the registry forgets an unknown id harmlessly', async () => {
    const reg = new BudgetRegistry(() => clock.now);
    const rb = reg.budget('cfg');
    rb.configure(budgetCaps({ maxPerMinute: 1, budgetMode: 'queue' }));
    await rb.before(read());
    const waiting = track(() => rb.before(read()));
    await turns();
    assert.equal(clock.countTimers(), 1);
    reg.forget('nope');
    assert.equal(reg.size, 1);
    clock.setSystemTime(EDGE_T0 + 61_000); // the minute freed, the queue not looked at yet: no cap is over when it closes
    reg.forget('cfg');
    await turns();
    assert.match(
      waiting.v,
      /^GET \/devices\/d\/measurement not sent: request budget maxPerMinute reached \(0 of 1 requests in the last 60 s\); the config node was removed while it waited$/,
    );
    assert.equal(clock.countTimers(), 0, 'no timer left');
    assert.equal(reg.peek('cfg'), undefined);
  });

  it('a warning listener that throws does not break counting; without a warning the current one is null', () => {
    budget.configure(budgetCaps({ maxPerMinute: 10 }));
    assert.equal(budget.currentWarning, null);
    const seen: unknown[] = [];
    budget.onWarning(() => {
      throw new Error('listener bug');
    });
    budget.onWarning((w) => seen.push(w));
    // Under the cap before() counts each attempt at once: it returns no promise here.
    for (let i = 0; i < 8; i++) void budget.before(read());
    assert.deepEqual(budget.currentWarning, { cap: 'maxPerMinute', percent: 80 });
    assert.deepEqual(seen.at(-1), { cap: 'maxPerMinute', percent: 80 });
    assert.equal(budget.stats().total.sent, 8);
  });
});
