/**
 * The shared polling schedule: pollers of one interval are spread over it (in slots of at
 * least 250 ms when there are many), each runs once per interval, a slow poll is skipped
 * rather than piled up, a throwing poll is reported, and stop() ends it all.
 */
import assert from 'node:assert/strict';
import { PollScheduler } from '../src/api';

/** Resolves when `test()` holds, checked after every poll (`onPoll` is called by the tasks). */
function whenever(test: () => boolean, ms = 10_000): { onPoll: () => void; done: Promise<void> } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const done = new Promise<void>((res, rej) => { resolve = res; reject = rej; });
  const timer = setTimeout(() => reject(new Error('timed out')), ms);
  return { onPoll: () => { if (test()) { clearTimeout(timer); resolve(); } }, done };
}

/** Counts the timer ticks that runs happen in: runs of one tick are synchronous, one batch. */
function batches() {
  let n = 0;
  let open = false;
  return {
    mark(): number {
      if (!open) {
        n++;
        open = true;
        queueMicrotask(() => { open = false; });
      }
      return n;
    },
    get count() { return n; },
  };
}

describe('core: PollScheduler', () => {
  let s: PollScheduler | undefined;
  afterEach(() => s?.stop());

  it('with 40 pollers of 1 s, starts them in a few slots (of 250 ms) over the interval, each once per turn', async () => {
    s = new PollScheduler();
    const order: number[] = [];
    const tick: number[] = [];
    const b = batches();
    const w = whenever(() => order.length >= 80);
    for (let i = 0; i < 40; i++) s.add(1000, () => { order.push(i); tick.push(b.mark()); w.onPoll(); });
    await w.done;
    s.stop();
    // Every poller once in the first 40 runs, then again in the same order.
    assert.deepEqual([...order.slice(0, 40)].sort((x, y) => x - y), Array.from({ length: 40 }, (_, i) => i));
    assert.deepEqual(order.slice(40, 80), order.slice(0, 40));
    // Not 40 wake-ups, and not one burst: 1 s / 250 ms slots, plus the first run.
    const ticks = new Set(tick.slice(0, 40)).size;
    assert.ok(ticks >= 2 && ticks <= 6, `the first 40 runs came in ${ticks} ticks`);
  });

  it('gives few pollers a tick of their own (interval / n apart)', async () => {
    s = new PollScheduler();
    const tick: number[] = [];
    const b = batches();
    const w = whenever(() => tick.length >= 3);
    for (let i = 0; i < 3; i++) s.add(600, () => { tick.push(b.mark()); w.onPoll(); });
    await w.done;
    assert.deepEqual(tick, [1, 2, 3]);
  });
  it('skips a poller whose previous run is still going, and reports a throwing one', async () => {
    const errors: unknown[] = [];
    s = new PollScheduler((e) => errors.push(e));
    let started = 0;
    let release!: () => void;
    const hanging = new Promise<void>((r) => { release = r; });
    const w = whenever(() => errors.length >= 3);
    s.add(100, () => { started++; return hanging; });
    s.add(100, () => { w.onPoll(); throw new Error('poll failed'); });
    // The throwing poller is reported after its run; the check runs on the next poll.
    s.add(100, () => w.onPoll());
    await w.done;
    assert.equal(started, 1, 'the hanging poll was not started again');
    assert.match(String(errors[0]), /poll failed/);
    release();
  });
});
