import assert from 'node:assert/strict';
import { mapBounded, fleetWindow } from '../../src/runtime/fleet';

async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

describe('fleet: bounded fan-out', () => {
  it('runs every item, at most `limit` at once, keeps the order, records failures per item', async () => {
    let running = 0;
    let most = 0;
    const mapped = await mapBounded(
      Array.from({ length: 50 }, (_, i) => i),
      4,
      async (i) => {
        running++;
        most = Math.max(most, running);
        await new Promise((res) => setImmediate(res));
        running--;
        if (i % 10 === 3) throw new Error(`item ${i}`);
        return i * 2;
      },
    );
    assert.equal(most, 4);
    assert.equal(mapped.length, 50);
    assert.deepEqual(mapped[5], { ok: true, value: 10 });
    assert.equal(mapped.filter((x) => !x.ok).length, 5);
    assert.equal((mapped[13] as { error: Error }).error.message, 'item 13');
  });

  it('items not started when the signal aborts settle as not sent', async () => {
    const ctl = new AbortController();
    const mapped = await mapBounded(
      [1, 2, 3, 4],
      1,
      async (i) => {
        if (i === 2) ctl.abort();
        return i;
      },
      { signal: ctl.signal, aborted: () => new Error('closed') },
    );
    assert.deepEqual(
      mapped.map((x) => x.ok),
      [true, true, false, false],
    );
  });

  it("the window is twice the client's concurrency", () => {
    assert.equal(fleetWindow({ concurrency: 6 }), 12);
    assert.equal(fleetWindow(undefined), 12);
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
});
