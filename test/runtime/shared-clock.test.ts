/**
 * The schedule node's delivery check: with `verify` on, one report per slot on
 * output 2, against the simulator, in a real Node-RED runtime. Date is @sinonjs/fake-timers
 * (the simulator's clock follows it); the node's one timer runs on the delivery check's clock
 * (setDeliveryClock), the same fake clock, so `clock.countTimers()` counts the node's timers
 * and nothing else (reads and requests keep their real timers: each step waits, bounded, for
 * what it causes). yes, partly and no appear per slot on a battery that empties in a merged
 * run and is then charged; unknown on a failed read; one timer while playing, a 96-slot day
 * included; stop lets the windows run out, a redeploy cancels them, a dry run checks nothing.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { SharedClock } from '../../src/runtime/shared-clock';

const T0 = Date.UTC(2026, 5, 1, 12);

describe('SharedClock: one timer for many deadlines', () => {
  it('holds one timer on its base clock for the earliest deadline; deadlines due together run in the order set; a throw does not stop the others', async () => {
    const base = FakeTimers.createClock(0);
    const shared = new SharedClock({
      now: () => base.now,
      setTimeout: (fn, ms) => base.setTimeout(fn, ms),
      clearTimeout: (t) => base.clearTimeout(t as FakeTimers.TimerId),
    });
    const ran: string[] = [];
    shared.setTimeout(() => ran.push('b'), 2000);
    const gone = shared.setTimeout(() => ran.push('x'), 500);
    shared.setTimeout(() => {
      ran.push('c');
      throw new Error('boom');
    }, 2000);
    shared.setTimeout(() => ran.push('a'), 1000);
    shared.setTimeout(() => ran.push('d'), 2000);
    assert.equal(base.countTimers(), 1);
    shared.clearTimeout(gone);
    assert.equal(base.countTimers(), 1);
    base.tick(1000);
    assert.deepEqual(ran, ['a']);
    assert.equal(base.countTimers(), 1);
    base.tick(1000);
    assert.deepEqual(ran, ['a', 'b', 'c', 'd']);
    assert.equal(base.countTimers(), 0);
    shared.setTimeout(() => ran.push('long'), 30 * 86_400_000); // beyond setTimeout's range: chained
    base.tick(30 * 86_400_000);
    assert.deepEqual(ran.at(-1), 'long');
    shared.setTimeout(() => ran.push('never'), 10);
    shared.close();
    assert.equal(base.countTimers(), 0);
    base.tick(100);
    assert.notEqual(ran.at(-1), 'never');
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
});
