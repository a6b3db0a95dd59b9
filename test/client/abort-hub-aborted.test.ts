/**
 * isAborted (abort-hub.ts): whether a signal has aborted, answered by its hub when one watches it
 * (AbortSignal's own getter is slow once a process holds thousands of signals), and the same
 * answer as the signal's own in every state; a wait joined on a signal that aborted already
 * hears of it at once instead of never.
 */
import assert from 'node:assert/strict';
import { isAborted, joinAbort, leaveAbort, onAbort } from '../../src/client/abort-hub';

function waiter(): { notifyAbort(): void; abortSlot: number; told: number } {
  return {
    abortSlot: -1,
    told: 0,
    notifyAbort() {
      this.told++;
    },
  };
}

describe('abort hub: isAborted and waits on aborted signals', () => {
  it('answers as the signal does: not watched, watched, aborted while watched, no signal', () => {
    const plain = new AbortController();
    assert.equal(isAborted(plain.signal), false);
    assert.equal(isAborted(AbortSignal.abort()), true);
    assert.equal(isAborted(undefined), false);
    const watched = new AbortController();
    const first = waiter();
    const hub = joinAbort(watched.signal, first);
    assert.equal(isAborted(watched.signal), false);
    watched.abort();
    assert.equal(isAborted(watched.signal), true);
    assert.equal(first.told, 1);
    leaveAbort(hub, first);
    assert.equal(isAborted(watched.signal), true, 'still known after the wait ended');
  });

  it('a wait joined on a signal that aborted already is told on the next microtask', async () => {
    const aborted = new AbortController();
    const before = waiter();
    leaveAbort(joinAbort(aborted.signal, before), before); // watched, then idle
    aborted.abort();
    const late = waiter();
    const hub = joinAbort(aborted.signal, late);
    const neverWatched = waiter();
    joinAbort(AbortSignal.abort(), neverWatched);
    let called = 0;
    onAbort(aborted.signal, () => called++);
    assert.deepEqual([late.told, neverWatched.told, called], [0, 0, 0], 'not from within the call');
    await Promise.resolve();
    assert.deepEqual([late.told, neverWatched.told, called], [1, 1, 1]);
    leaveAbort(hub, late); // harmless after the abort
    assert.equal(late.told, 1);
  });
});
