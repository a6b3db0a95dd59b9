/**
 * The shared polling schedule: pollers of one interval are spread over it (in slots of at
 * least 250 ms when there are many), each runs once per interval, a slow poll is skipped
 * rather than piled up, a throwing poll is reported, and stop() ends it all.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { ValidationError } from '../../src/protocol';
import { ApiError } from '../../src/client';
import { PollScheduler } from '../../src/runtime';
import { PollBackoff } from '../../src/nodes/shared/poll-backoff';

/** Resolves when `test()` holds, checked after every poll (`onPoll` is called by the tasks). */
function whenever(test: () => boolean, ms = 10_000): { onPoll: () => void; done: Promise<void> } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const timer = setTimeout(() => reject(new Error('timed out')), ms);
  return {
    onPoll: () => {
      if (test()) {
        clearTimeout(timer);
        resolve();
      }
    },
    done,
  };
}

/** Counts the timer ticks that runs happen in: runs of one tick are synchronous, one batch. */
function batches() {
  let count = 0;
  let open = false;
  return {
    mark(): number {
      if (!open) {
        count++;
        open = true;
        queueMicrotask(() => {
          open = false;
        });
      }
      return count;
    },
    get count() {
      return count;
    },
  };
}

describe('core: PollScheduler', () => {
  let scheduler: PollScheduler | undefined;
  afterEach(() => scheduler?.stop());

  it('with 40 pollers of 1 s, starts them in a few slots (of 250 ms) over the interval, each once per turn', async () => {
    scheduler = new PollScheduler();
    const order: number[] = [];
    const tick: number[] = [];
    const tickCounter = batches();
    const reached = whenever(() => order.length >= 80);
    for (let i = 0; i < 40; i++)
      scheduler.add(1000, () => {
        order.push(i);
        tick.push(tickCounter.mark());
        reached.onPoll();
      });
    await reached.done;
    scheduler.stop();
    // Every poller once in the first 40 runs, in the order they were added, then again in that order.
    const added = Array.from({ length: 40 }, (_, i) => i);
    assert.deepEqual(
      [...order.slice(0, 40)].sort((x, y) => x - y),
      added,
    );
    assert.deepEqual(order.slice(0, 80), [...added, ...added]);
    // Not 40 wake-ups, and not one burst: 1 s / 250 ms slots, plus the first run.
    const ticks = new Set(tick.slice(0, 40)).size;
    assert.ok(ticks >= 2 && ticks <= 6, `the first 40 runs came in ${ticks} ticks`);
  });

  it('gives few pollers a tick of their own (interval / n apart)', async () => {
    scheduler = new PollScheduler();
    const tick: number[] = [];
    const tickCounter = batches();
    const reached = whenever(() => tick.length >= 3);
    for (let i = 0; i < 3; i++)
      scheduler.add(600, () => {
        tick.push(tickCounter.mark());
        reached.onPoll();
      });
    await reached.done;
    assert.deepEqual(tick, [1, 2, 3]);
  });
  it('skips a poller whose previous run is still going, and reports a throwing one', async () => {
    const errors: unknown[] = [];
    scheduler = new PollScheduler((e) => errors.push(e));
    let started = 0;
    let release!: () => void;
    const hanging = new Promise<void>((r) => {
      release = r;
    });
    const reached = whenever(() => errors.length >= 3);
    scheduler.add(100, () => {
      started++;
      return hanging;
    });
    scheduler.add(100, () => {
      reached.onPoll();
      throw new Error('poll failed');
    });
    // The throwing poller is reported after its run; the check runs on the next poll.
    scheduler.add(100, () => reached.onPoll());
    await reached.done;
    assert.equal(started, 1, 'the hanging poll was not started again');
    assert.match(String(errors[0]), /poll failed/);
    release();
  });

  describe('backoff ({ nextInTurns } from a task), on fake timers', () => {
    let clock: FakeTimers.Clock;
    beforeEach(() => {
      clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'], now: 1_000_000 });
    });
    afterEach(() => clock.uninstall());

    const refused = () =>
      new ApiError({
        code: 'ECONNREFUSED',
        message: 'GET /devices connection to 127.0.0.1:9 failed (ECONNREFUSED)',
        request: { method: 'GET', path: '/devices' },
      });

    it('a poller that fails runs at 2, 4, 8 then every 10 intervals, back to 1 on success; logs once a minute; stop leaves no timer', async () => {
      const intervalMs = 5_000;
      const t0 = Date.now();
      let up = false;
      const attempts: number[] = [];
      const logged: number[] = [];
      const backoff = new PollBackoff(intervalMs, () => Date.now());
      scheduler = new PollScheduler();
      const remove = scheduler.add(intervalMs, () => {
        backoff.started();
        attempts.push(Date.now() - t0);
        return (up ? Promise.resolve() : Promise.reject(refused())).then(
          () => {
            backoff.success();
            return undefined;
          },
          (err) => {
            const delay = backoff.failure(err);
            if (delay.log) logged.push(Date.now() - t0);
            return { nextInTurns: delay.nextInTurns };
          },
        );
      });
      await clock.tickAsync(300_000);
      // First run after 50 ms, then gaps of 2, 4, 8, 10, 10, ... intervals.
      const gaps = attempts.slice(1).map((t, i) => (t - attempts[i]) / intervalMs);
      assert.equal(attempts[0], 50);
      assert.deepEqual(gaps.slice(0, 7), [2, 4, 8, 10, 10, 10, 10]);
      // Same error: logged at the first failure, then only when a minute has passed since.
      for (let i = 1; i < logged.length; i++)
        assert.ok(logged[i] - logged[i - 1] >= 60_000, `logged at ${logged.join(', ')}`);
      // Tries at 50 ms, 10, 30, 70, 120, 170, 220 and 270 s; logs at 50 ms, 70, 170 and 270 s.
      assert.equal(attempts.length, 8);
      assert.deepEqual(logged, [50, 70_050, 170_050, 270_050]);
      // The service comes back: the next try succeeds, and the poller is back at the interval.
      up = true;
      const attemptsBefore = attempts.length;
      await clock.tickAsync(10 * intervalMs);
      await clock.tickAsync(5 * intervalMs);
      const after = attempts.slice(attemptsBefore);
      assert.ok(after.length >= 6, `${after.length} tries after recovery`);
      assert.deepEqual(
        after.slice(1).map((t, i) => (t - after[i]) / intervalMs),
        Array(after.length - 1).fill(1),
      );
      remove();
      assert.equal(clock.countTimers(), 0, 'no timer left');
    });

    it('a new error text is logged at once; an own-settings error does not back off', async () => {
      const intervalMs = 1_000;
      const backoff = new PollBackoff(intervalMs, () => Date.now());
      const first = backoff.failure(refused());
      assert.deepEqual([first.log, first.backingOff, first.nextInTurns], [true, true, 2]);
      const same = backoff.failure(refused());
      assert.deepEqual([same.log, same.nextInTurns], [false, 4]);
      const other = backoff.failure(
        new ApiError({
          code: 'HTTP_503',
          status: 503,
          message: 'GET /devices failed: HTTP 503 (requestId r1)',
          request: { method: 'GET', path: '/devices' },
        }),
      );
      assert.deepEqual([other.log, other.nextInTurns], [true, 8]);
      // Only the request id differs: the same error.
      const again = backoff.failure(
        new ApiError({
          code: 'HTTP_503',
          status: 503,
          message: 'GET /devices failed: HTTP 503 (requestId r2)',
          request: { method: 'GET', path: '/devices' },
        }),
      );
      assert.deepEqual([again.log, again.nextInTurns], [false, 10]);
      await clock.tickAsync(60_000);
      assert.equal(backoff.failure(refused()).log, true, 'a different text than the last logged one');
      const own = backoff.failure(new ValidationError('device', 'must be a reference'));
      assert.deepEqual([own.log, own.backingOff, own.nextInTurns], [true, false, 1]);
    });
  });
});

/**
 * The runtime room's edges (src/runtime), part 3: the request budget's queue (aborts before
 * and while waiting, a retry beside waiters, caps lifted, deadlines that pass behind others,
 * closing while busy, a warning listener that throws); the steering queue refusing, dropping
 * and aborting; the bounded fan-out; the shared clock and the poll scheduler at their edges.
 * Time is a fake clock; the client is a fake that records what it was asked to send.
 */
describe('runtime coverage: the bounded fan-out, the shared clock and the poll scheduler at their edges', () => {
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
