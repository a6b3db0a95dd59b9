/**
 * The abort hub (src/client/abort-hub.ts) under the limiter and the attempt deadline: one
 * listener per signal, kept while the signal keeps waiting (a polling node's), removed once the
 * signal stayed idle through a sweep period. Time is a fake clock (Date).
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import FakeTimers from '@sinonjs/fake-timers';
import { Limiter, onAbort } from '../../src/client';
import { SWEEP_MS } from '../../src/client/abort-hub';

describe('abort hub: one listener per signal, kept while in use', () => {
  it('a signal waiting again within a sweep period keeps its one listener (not added and removed per wait)', async () => {
    const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() });
    try {
      const limiter = new Limiter(1);
      await limiter.acquire();
      const ctl = new AbortController();
      for (let i = 0; i < 4; i++) {
        const pending = limiter.acquire(ctl.signal);
        limiter.release();
        await pending;
        clock.tick(SWEEP_MS / 2);
      }
      assert.equal(getEventListeners(ctl.signal, 'abort').length, 1);
      const waiting = limiter.acquire(ctl.signal);
      ctl.abort(new Error('closed'));
      await assert.rejects(waiting, /closed/);
      assert.equal(getEventListeners(ctl.signal, 'abort').length, 0);
      assert.deepEqual([limiter.inFlight, limiter.queued], [1, 0]);
      limiter.release();
    } finally {
      clock.uninstall();
    }
  });

  it('waiters of one signal hear its abort once each, in the order they came; a removed waiter does not', () => {
    const ctl = new AbortController();
    const heard: number[] = [];
    const offs = [0, 1, 2, 3].map((i) => onAbort(ctl.signal, () => heard.push(i)));
    offs[2]();
    assert.equal(getEventListeners(ctl.signal, 'abort').length, 1);
    ctl.abort();
    assert.deepEqual(heard, [0, 1, 3]);
    assert.equal(getEventListeners(ctl.signal, 'abort').length, 0);
  });
});
