/**
 * The runtime room's edges (src/runtime), part 3: the request budget's queue (aborts before
 * and while waiting, a retry beside waiters, caps lifted, deadlines that pass behind others,
 * closing while busy, a warning listener that throws); the steering queue refusing, dropping
 * and aborting; the bounded fan-out; the shared clock and the poll scheduler at their edges.
 * Time is a fake clock; the client is a fake that records what it was asked to send.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { BudgetError, EmptyRequestError, ApiError, type Attempt, type EmsClient } from '../src/client';
import { ValidationError, checkMaxValidity } from '../src/protocol';
import type { SteeringRequest } from '../src/protocol/endpoints';
import { Budget, budgetCaps, QUEUE_MAX_WAIT_MS } from '../src/runtime/budget';
import { BudgetRegistry } from '../src/runtime/budget-registry';
import { SteeringQueue, requestForCommand } from '../src/runtime/steering-queue';
import { mapBounded } from '../src/runtime/fleet';
import { SharedClock } from '../src/runtime/shared-clock';
import { PollScheduler } from '../src/runtime/poll-scheduler';
import { useCrashWatch } from './helpers/faults';

const T0 = Date.UTC(2026, 5, 1, 12);
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

describe("runtime coverage: the request budget's queue at its edges", () => {
  const crashes = useCrashWatch();
  let clock: ReturnType<typeof FakeTimers.install>;
  let budget: Budget;
  beforeEach(() => {
    clock = FakeTimers.install({ now: T0, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
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
    clock.setSystemTime(T0 + 61_000); // the minute freed; the queue's timer has not run yet
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
    const steering = track(() => budget.before(steer(T0 + 100_000)));
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
    const steerTracked = track(() => budget.before(steer(T0 + 5 * MIN)));
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
    clock.setSystemTime(T0 + 61_000); // the minute freed, the queue not looked at yet: no cap is over when it closes
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

interface Sent {
  req: SteeringRequest;
  signal?: AbortSignal;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

function fakeSteeringClient(): { client: EmsClient; sent: Sent[] } {
  const sent: Sent[] = [];
  const client = {
    sendSteering: (req: SteeringRequest, o?: { signal?: AbortSignal }) =>
      new Promise((resolve, reject) => sent.push({ req, signal: o?.signal, resolve, reject })),
  } as unknown as EmsClient;
  return { client, sent };
}

describe('runtime coverage: the steering queue refusing, dropping and aborting', () => {
  const crashes = useCrashWatch();
  afterEach(() => assert.deepEqual(crashes.events, []));
  const until = () => Date.now() + 10 * MIN;
  const kW = (value: number) => ({ value, unit: 'kW' as const });

  it('a command without validUntil, or that sets nothing, is refused; nothing is sent', async () => {
    const { client, sent } = fakeSteeringClient();
    const queue = new SteeringQueue(client);
    await assert.rejects(
      queue.submit({ site: 's', kind: 'ess', energyStorageSetting: kW(1) }),
      (e) => e instanceof ValidationError && e.field === 'validUntil' && /is required/.test(e.message),
    );
    await assert.rejects(
      queue.submit({ site: 's', kind: 'ess', validUntil: until() }),
      (e) => e instanceof EmptyRequestError && e.code === 'EMS_EMPTY',
    );
    assert.throws(
      () => requestForCommand({ site: 's', kind: 'combined', validUntil: until() }),
      (e) => e instanceof EmptyRequestError,
    );
    assert.equal(sent.length, 0);
  });

  it('maxValidity: a validUntil that is not a time, or one given through another field, is refused naming that field', () => {
    const now = T0;
    assert.throws(
      () => checkMaxValidity(Number.NaN, 60 * MIN, now),
      (e) =>
        e instanceof ValidationError &&
        e.field === 'validUntil' &&
        /must be at most 1 h .*; got NaN; nothing was sent/.test(e.message),
    );
    assert.throws(
      () => checkMaxValidity(now + 2 * 60 * MIN, 60 * MIN, now, 'msg.duration', '120 min'),
      (e) =>
        e instanceof ValidationError &&
        e.field === 'msg.duration' &&
        e.message.includes(
          `must give a validUntil at most 1 h (the config node's maxValidity, 60 min) from now; got 120 min (validUntil ${new Date(now + 2 * 60 * MIN).toISOString()})`,
        ),
    );
    assert.throws(
      () => checkMaxValidity(now + 2 * 60 * MIN, 60 * MIN, now, 'msg.payload.validUntil'),
      (e) => e instanceof ValidationError && /must be at most 1 h/.test(e.message),
    );
    assert.throws(
      () => checkMaxValidity(now + 2 * 60 * MIN, 60 * MIN, now, 'msg.until'),
      (e) =>
        e instanceof ValidationError &&
        e.field === 'msg.until' &&
        /; got 2026-06-01T14:00:00\.000Z \(validUntil 2026-06-01T14:00:00\.000Z\)/.test(e.message),
    );
    assert.doesNotThrow(() => checkMaxValidity(now + 2 * 60 * MIN, 0, now), 'no limit');
  });

  it("dropOwner drops only that owner's queued components, describing each; the others still go out; queued() counts per site", async () => {
    const { client, sent } = fakeSteeringClient();
    const queue = new SteeringQueue(client);
    const ownerA = {};
    const ownerB = {};
    const validUntil = until();
    const busy = queue.submit(
      { site: 's1', kind: 'ess', energyStorageSetting: kW(1), validUntil: validUntil },
      { owner: ownerA },
    ); // in flight
    const dropped = [
      queue
        .submit({ site: 's1', kind: 'combined', maximizeGridImport: true, validUntil: validUntil }, { owner: ownerA })
        .catch((e: ApiError) => e),
      queue.submit({ site: 's1', kind: 'cancel-grid-target' }, { owner: ownerA }).catch((e: ApiError) => e),
      queue
        .submit({ site: 's2', kind: 'ess', energyStorageSetting: kW(2), validUntil: validUntil }, { owner: ownerA })
        .catch((e: ApiError) => e),
    ];
    const kept = queue.submit(
      { site: 's1', kind: 'grid-target', gridTarget: { setpoint: kW(-3) }, validUntil: validUntil },
      { owner: ownerB },
    );
    assert.deepEqual(
      [queue.queued(), queue.queued('s1'), queue.queued('s2')],
      [2, 2, 0],
      "s2 went out at once; s1 waits with two components (b's grid target replaced a's cancel)",
    );
    const desc = queue.dropOwner(ownerA, 'redeployed');
    assert.deepEqual(desc.sort(), ['s1 maximizeGridImport=true']);
    const gone = await dropped[0];
    assert.ok(
      gone instanceof ApiError &&
        gone.code === 'EMS_DROPPED' &&
        gone.message === 'steering not sent (redeployed): maximizeGridImport for s1',
      String(gone),
    );
    // The cancel was merged with b's grid target (later wins): it stays, b's setpoint replaced it.
    assert.deepEqual([queue.queued('s1')], [1]);
    sent[0].resolve({ requestId: 'r1' });
    sent.find((x) => x.req.site === 's2')?.resolve({ requestId: 'r2' });
    await busy;
    await turns();
    const last = sent.at(-1)!;
    assert.equal(last.req.endpoint, 'grid-target');
    last.resolve({ requestId: 'r3' });
    assert.equal((await kept).merged, true);
    assert.ok(!((await dropped[1]) instanceof Error));
  });

  it('dropOwner describes a queued grid target by its setpoint and a cancel as "cancel"', async () => {
    const { client, sent } = fakeSteeringClient();
    const queue = new SteeringQueue(client);
    const owner = {};
    void queue.submit({ site: 's', kind: 'ess', energyStorageSetting: kW(1), validUntil: until() }); // in flight
    const gridTarget = queue
      .submit(
        { site: 's', kind: 'grid-target', gridTarget: { setpoint: kW(-3) }, validUntil: until() },
        { owner: owner },
      )
      .catch(() => 'dropped');
    const inFlight = queue.submit({ site: 't', kind: 'ess', energyStorageSetting: kW(1), validUntil: until() });
    const cancel = queue.submit({ site: 't', kind: 'cancel-grid-target' }, { owner: owner }).catch(() => 'dropped');
    assert.deepEqual(queue.dropOwner(owner).sort(), ['s gridTarget=-3 kW', 't gridTarget=cancel']);
    assert.deepEqual(await Promise.all([gridTarget, cancel]), ['dropped', 'dropped']);
    for (const x of sent) x.resolve({});
    await inFlight;
  });

  it('a command whose components go in two requests resolves once both went out; a failure of either rejects it with that error', async () => {
    const { client, sent } = fakeSteeringClient();
    const queue = new SteeringQueue(client);
    const validUntil = until();
    const both = queue.submit({
      site: 's',
      kind: 'combined',
      energyStorageSetting: kW(1),
      gridTarget: { setpoint: kW(2) },
      validUntil: validUntil,
    });
    let settled = false;
    void both.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    await turns();
    assert.deepEqual(sent.map((x) => x.req.endpoint).sort(), ['combined']);
    sent[0].resolve({ requestId: 'a' });
    await turns();
    assert.equal(settled, false, 'one of two requests answered');
    assert.deepEqual(
      sent.map((x) => x.req.endpoint),
      ['combined', 'grid-target'],
    );
    sent[1].reject(new Error('grid target refused'));
    await assert.rejects(both, /grid target refused/);
  });

  it('a queued group whose every caller aborted goes to the client already aborted (the client then sends nothing)', async () => {
    const { client, sent } = fakeSteeringClient();
    const queue = new SteeringQueue(client);
    const first = queue.submit({ site: 's', kind: 'ess', energyStorageSetting: kW(1), validUntil: until() });
    const ctl = new AbortController();
    const later = queue
      .submit({ site: 's', kind: 'ess', energyStorageSetting: kW(2), validUntil: until() }, { signal: ctl.signal })
      .catch((e: Error) => e.message);
    ctl.abort();
    sent[0].resolve({});
    await first;
    await turns();
    assert.equal(sent.length, 2);
    assert.equal(sent[1].signal?.aborted, true);
    sent[1].reject(new Error('aborted before sending'));
    assert.equal(await later, 'aborted before sending');
  });
});

describe('runtime coverage: the bounded fan-out, the shared clock and the poll scheduler at their edges', () => {
  it('mapBounded: a limit of 0 or NaN runs one at a time; a non-Error thrown becomes an Error; once aborted, the rest are not started', async () => {
    let inside = 0;
    let most = 0;
    const started: number[] = [];
    const ctl = new AbortController();
    const out = await mapBounded(
      [1, 2, 3, 4],
      Number.NaN,
      async (x) => {
        started.push(x);
        inside++;
        most = Math.max(most, inside);
        await turns(1);
        inside--;
        if (x === 2) throw 'two';
        if (x === 3) ctl.abort();
        return x;
      },
      { signal: ctl.signal },
    );
    assert.equal(most, 1);
    assert.deepEqual(started, [1, 2, 3]);
    assert.deepEqual(
      out.map((r) => (r.ok ? r.value : r.error.message)),
      [1, 'two', 3, 'not sent: aborted'],
    );
    assert.deepEqual(await mapBounded([], 0, async () => 1), []);
  });

  it('shared clock: a deadline set after close never runs; a non-finite delay is "now"; one cleared by an earlier one in the same turn does not run', () => {
    const base = FakeTimers.createClock(T0);
    const sc = new SharedClock({
      now: () => base.now,
      setTimeout: (fn, ms) => base.setTimeout(fn, ms),
      clearTimeout: (t) => base.clearTimeout(t as never),
    });
    const ran: string[] = [];
    sc.setTimeout(() => {
      ran.push('a');
      sc.clearTimeout(second);
    }, Number.NaN);
    const second = sc.setTimeout(() => ran.push('b'), 0);
    sc.setTimeout(() => ran.push('c'), Number.POSITIVE_INFINITY);
    assert.equal(sc.size, 3);
    base.tick(0);
    assert.deepEqual(ran, ['a', 'c'], 'NaN and Infinity count as 0; b was cleared by a');
    assert.equal(sc.armed, false);
    sc.setTimeout(() => ran.push('d'), 1000);
    sc.close();
    const id = sc.setTimeout(() => ran.push('e'), 0);
    assert.equal(typeof id, 'number');
    assert.deepEqual([sc.size, sc.armed, base.countTimers()], [0, false, 0]);
    base.tick(5000);
    assert.deepEqual(ran, ['a', 'c']);
  });

  it('shared clock: a deadline that closes the clock stops the turn; the ones due with it do not run', () => {
    const base = FakeTimers.createClock(T0);
    const sc = new SharedClock({
      now: () => base.now,
      setTimeout: (fn, ms) => base.setTimeout(fn, ms),
      clearTimeout: (t) => base.clearTimeout(t as never),
    });
    const ran: string[] = [];
    sc.setTimeout(() => {
      ran.push('closer');
      sc.close();
    }, 10);
    sc.setTimeout(() => ran.push('after'), 10);
    base.tick(10);
    assert.deepEqual(ran, ['closer']);
    assert.equal(base.countTimers(), 0);
  });

  it("poll scheduler: a poller that removes itself (twice) from its tick stops its group's timer; removing one of two, twice, or after stop() is harmless", async () => {
    const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const errors: unknown[] = [];
      const ps = new PollScheduler((e) => errors.push(e));
      let runs = 0;
      let removeSelf: () => void = () => undefined;
      removeSelf = ps.add(1000, () => {
        runs++;
        removeSelf();
        removeSelf(); // twice: harmless
      });
      await clock.tickAsync(5000);
      assert.deepEqual([runs, ps.size, clock.countTimers()], [1, 0, 0], "the emptied group's timer is gone");

      let kept = 0;
      const one = ps.add(1000, () => undefined);
      ps.add(1000, () => {
        kept++;
      });
      ps.add(250, () => undefined);
      assert.equal(ps.size, 3, 'across two intervals');
      one();
      one(); // the group still has the other poller: not found in it, nothing happens
      assert.equal(ps.size, 2);
      await clock.tickAsync(3000);
      assert.ok(kept >= 2, `the neighbour still polls (${kept})`);
      const late = ps.add(1000, () => undefined);
      ps.stop();
      late(); // after stop(): nothing to remove
      assert.deepEqual([ps.size, clock.countTimers(), errors.length], [0, 0, 0]);
    } finally {
      clock.uninstall();
    }
  });

  it('poll scheduler: a task that throws or rejects is reported and polled again next turn; one still running is skipped', async () => {
    const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const errors: string[] = [];
      const ps = new PollScheduler((e) => errors.push((e as Error).message));
      let count = 0;
      ps.add(100, () => {
        count++;
        throw new Error(`sync ${count}`);
      });
      let release!: () => void;
      let slow = 0;
      ps.add(100, () => {
        slow++;
        return new Promise<void>((r) => {
          release = r;
        });
      });
      await clock.tickAsync(350);
      assert.ok(count >= 3, `thrower ran every turn (${count})`);
      assert.equal(slow, 1, 'the slow one was skipped while it ran');
      assert.deepEqual(errors.slice(0, 2), ['sync 1', 'sync 2']);
      release();
      await clock.tickAsync(100);
      assert.equal(slow, 2);
      ps.stop();
    } finally {
      clock.uninstall();
    }
  });
});
