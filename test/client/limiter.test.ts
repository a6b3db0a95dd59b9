/**
 * The client room's edges (src/client), part 1: the limiter under aborts, caps and long
 * queues; the transport's shared 429 pause, the attempt hook refusing or delaying, bodies over
 * the limit both ways, a reset steering request. A loopback stub (test/helpers/stub-server.ts)
 * answers each test as it needs; time is a fake clock.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import FakeTimers from '@sinonjs/fake-timers';
import { Limiter, mapLimit, onAbort } from '../../src/client';
import { SWEEP_MS } from '../../src/client/abort-hub';
import { turns } from '../helpers/stub-server';

describe('client coverage: the limiter under aborts, caps and long queues', () => {
  it('a limit below 1 is taken as 1: a second holder waits until the first releases', async () => {
    for (const limit of [0, -3, Number.NaN]) {
      const limiter = new Limiter(limit);
      await limiter.acquire();
      let second = false;
      const pending = limiter.acquire().then(() => {
        second = true;
      });
      await turns(2);
      assert.equal(second, false, `limit ${limit}: the second waits`);
      assert.deepEqual([limiter.inFlight, limiter.queued], [1, 1]);
      limiter.release();
      await pending;
      assert.equal(second, true);
      assert.deepEqual([limiter.inFlight, limiter.queued], [1, 0], 'the slot passed straight on');
      limiter.release();
      assert.equal(limiter.inFlight, 0);
      limiter.release(); // one release too many never goes below zero
      assert.equal(limiter.inFlight, 0);
    }
  });

  it('an aborted signal is refused at once with its reason and takes no slot, even with slots free', async () => {
    const limiter = new Limiter(2);
    const reason = new Error('node closed');
    await assert.rejects(limiter.acquire(AbortSignal.abort(reason)), (e) => e === reason);
    const bare = new AbortController();
    bare.abort();
    await assert.rejects(limiter.acquire(bare.signal), { name: 'AbortError' });
    assert.equal(limiter.inFlight, 0);
  });

  it('waiters whose signal aborts leave the queue with its reason; the slot then passes over them to the next; one listener per signal', async () => {
    const limiter = new Limiter(1);
    await limiter.acquire();
    const node = new AbortController();
    const order: string[] = [];
    const track = (name: string, p: Promise<void>) =>
      p.then(
        () => order.push(`${name} granted`),
        (e: Error) => order.push(`${name} ${e.message}`),
      );
    const all = [
      track('a', limiter.acquire(node.signal)),
      track('b', limiter.acquire(node.signal)),
      track('c', limiter.acquire()),
      track('d', limiter.acquire(node.signal)),
    ];
    assert.equal(limiter.queued, 4);
    assert.equal(
      getEventListeners(node.signal, 'abort').length,
      1,
      'one listener for the three waiters that share the signal',
    );
    node.abort(new Error('aborted by the node'));
    await turns(2);
    assert.deepEqual(order, ['a aborted by the node', 'b aborted by the node', 'd aborted by the node']);
    assert.equal(limiter.queued, 1);
    assert.equal(getEventListeners(node.signal, 'abort').length, 0);
    limiter.release(); // skips a, b (aborted) and grants c
    await Promise.all(all);
    assert.deepEqual(order.at(-1), 'c granted');
    assert.deepEqual([limiter.inFlight, limiter.queued], [1, 0]);
    limiter.release(); // d aborted too: nothing left to grant
    assert.equal(limiter.inFlight, 0);
  });

  it("a waiter granted the slot leaves its signal's watch; the signal aborting later changes nothing; an idle signal loses its listener after a sweep period", async () => {
    const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() });
    try {
      const limiter = new Limiter(1);
      await limiter.acquire();
      const ctl = new AbortController();
      const acquired = limiter.acquire(ctl.signal);
      assert.equal(getEventListeners(ctl.signal, 'abort').length, 1);
      limiter.release();
      await acquired;
      // The one listener stays while the signal may wait again soon (a polling node's, every few seconds)...
      assert.ok(getEventListeners(ctl.signal, 'abort').length <= 1);
      // ...and goes once the signal had no waiter through a whole sweep period (checked as other waiters arrive).
      for (let i = 0; i < 2; i++) {
        clock.tick(SWEEP_MS);
        onAbort(new AbortController().signal, () => undefined)();
      }
      assert.equal(getEventListeners(ctl.signal, 'abort').length, 0);
      ctl.abort();
      assert.deepEqual([limiter.inFlight, limiter.queued], [1, 0]);
      limiter.release();
    } finally {
      clock.uninstall();
    }
  });

  it('3000 waiters, every seventh aborted, are served in order through the queue compaction', async () => {
    const limiter = new Limiter(1);
    await limiter.acquire();
    const gone = new AbortController();
    const granted: number[] = [];
    const rejected: number[] = [];
    const all = Array.from({ length: 3000 }, (_, i) =>
      limiter.acquire(i % 7 === 3 ? gone.signal : undefined).then(
        () => {
          granted.push(i);
          limiter.release();
        },
        () => rejected.push(i),
      ),
    );
    gone.abort();
    limiter.release();
    await Promise.all(all);
    const expected = Array.from({ length: 3000 }, (_, i) => i);
    assert.deepEqual(
      granted,
      expected.filter((i) => i % 7 !== 3),
      'FIFO, aborted ones skipped',
    );
    assert.deepEqual(
      rejected,
      expected.filter((i) => i % 7 === 3),
    );
    assert.deepEqual([limiter.inFlight, limiter.queued], [0, 0]);
  });

  it('run() frees the slot when the work throws, and waits for a slot like acquire()', async () => {
    const limiter = new Limiter(1);
    await assert.rejects(
      limiter.run(async () => {
        throw new Error('work failed');
      }),
      /work failed/,
    );
    assert.equal(limiter.inFlight, 0);
    let inside = 0;
    let most = 0;
    const work = async () => {
      inside++;
      most = Math.max(most, inside);
      await turns(1);
      inside--;
      return inside;
    };
    await Promise.all([limiter.run(work), limiter.run(work), limiter.run(work)]);
    assert.equal(most, 1);
    const ctl = new AbortController();
    await limiter.acquire();
    const waiting = limiter.run(work, ctl.signal);
    ctl.abort(new Error('gone'));
    await assert.rejects(waiting, /gone/);
    limiter.release();
    assert.equal(limiter.inFlight, 0);
  });

  it('mapLimit keeps the input order with a limit of 0 (taken as 1) and of more than the items; an empty list gives []', async () => {
    let inside = 0;
    let most = 0;
    const fn = async (x: number) => {
      inside++;
      most = Math.max(most, inside);
      await turns(1);
      inside--;
      return x * 10;
    };
    assert.deepEqual(await mapLimit([3, 1, 2], 0, fn), [30, 10, 20]);
    assert.equal(most, 1);
    most = 0;
    assert.deepEqual(await mapLimit([3, 1, 2], 50, fn), [30, 10, 20]);
    assert.equal(most, 3);
    assert.deepEqual(await mapLimit([], 4, fn), []);
  });
});
