/**
 * The runtime room's edges (src/runtime), part 1: fleet reads' errors and battery capacities;
 * the schedule player closed, failing, or with callbacks that throw. Reads and submits are
 * fakes that record what they were asked; time is a fake clock.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import {
  SchedulePlayer,
  commandsOf,
  MIN_LEFT_MS,
  type PlayRun,
  type PlayerState,
} from '../../src/runtime/schedule-player';
import type { SteeringCommand, SteeringResult } from '../../src/runtime/steering-queue';
import { useCrashWatch, watchTimers } from '../helpers/faults';

/** Waits a few turns of the event loop (in-process promises only). */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

const T0 = Date.UTC(2026, 5, 1, 12);
const QUARTER_MS = 15 * 60_000;
const run = (i: number, setting: PlayRun['setting'], n = 1): PlayRun => ({
  site: 'ste_a',
  total: 4,
  start: T0 + i * QUARTER_MS,
  end: T0 + (i + n) * QUARTER_MS,
  first: i,
  last: i + n - 1,
  setting,
  slots: Array.from({ length: n }, (_, k) => ({
    index: i + k,
    start: T0 + (i + k) * QUARTER_MS,
    end: T0 + (i + k + 1) * QUARTER_MS,
  })),
});
const ess = (v: number) => ({ energyStorageSetting: { value: v, unit: 'kW' as const } });

describe('runtime coverage: the schedule player closed, failing, or with callbacks that throw', () => {
  const crashes = useCrashWatch();
  let clock: ReturnType<typeof FakeTimers.createClock>;
  beforeEach(() => {
    clock = FakeTimers.createClock(T0);
  });
  afterEach(() => assert.deepEqual(crashes.events, []));

  it('commands of a run: maximizeGridImport false is sent (not dropped); grid limits go alone', () => {
    const cmds = commandsOf({
      site: 's',
      end: T0 + QUARTER_MS,
      setting: { maximizeGridImport: false, gridLimits: { upperLimit: { value: 5, unit: 'kW' } } },
    });
    assert.deepEqual(cmds, [
      { site: 's', kind: 'combined', maximizeGridImport: false, validUntil: T0 + QUARTER_MS },
      {
        site: 's',
        kind: 'grid-limits',
        gridLimits: { upperLimit: { value: 5, unit: 'kW' } },
        validUntil: T0 + QUARTER_MS,
      },
    ]);
  });

  it('a submit that throws, or rejects with a non-Error, is reported as failed; the run is not "in force", so a replay sends it again', async () => {
    const events: string[] = [];
    let mode: 'throw' | 'string' | 'ok' = 'throw';
    const sent: SteeringCommand[] = [];
    const player = new SchedulePlayer({
      submit: (cmd) => {
        sent.push(cmd);
        if (mode === 'throw') throw new Error('queue closed');
        if (mode === 'string') return Promise.reject('refused');
        return Promise.resolve({ sent: true } as unknown as SteeringResult);
      },
      now: () => clock.now,
      timers: clock,
      failed: (r, _c, err) => events.push(`failed ${r.first}: ${err.constructor.name} ${err.message}`),
      sent: (r) => events.push(`sent ${r.first}`),
    });
    player.play([run(0, ess(1), 2)]);
    await turns();
    mode = 'string';
    player.play([run(0, ess(1), 2)]);
    await turns();
    assert.equal(player.state().inForce, undefined);
    mode = 'ok';
    player.play([run(0, ess(1), 2)]);
    await turns();
    assert.deepEqual(events, ['failed 0: Error queue closed', 'failed 0: Error refused', 'sent 0']);
    assert.equal(sent.length, 3, 'sent again each time it failed');
    assert.equal(player.state().inForce?.first, 0);
    await player.close();
  });

  it('callbacks that throw do not stop the player: the next run still goes out at its start', async () => {
    const sent: number[] = [];
    const boom = () => {
      throw new Error('node bug');
    };
    const player = new SchedulePlayer({
      submit: (cmd) => {
        sent.push(cmd.validUntil!);
        return Promise.resolve({} as SteeringResult);
      },
      now: () => clock.now,
      timers: clock,
      sent: boom,
      changed: boom,
      done: boom,
      skipped: boom,
    });
    player.play([run(0, ess(1)), run(1, ess(2))]);
    await turns();
    await clock.tickAsync(QUARTER_MS);
    await turns();
    await clock.tickAsync(QUARTER_MS);
    assert.deepEqual(sent, [T0 + QUARTER_MS, T0 + 2 * QUARTER_MS]);
    assert.equal(player.active, false, 'done, though done() threw');
  });

  it('close() waits for the requests under way; play() and resume() after it do nothing', async () => {
    let settle!: () => void;
    const submits: SteeringCommand[] = [];
    const player = new SchedulePlayer({
      submit: (cmd) => {
        submits.push(cmd);
        return new Promise((r) => {
          settle = () => r({} as SteeringResult);
        });
      },
      now: () => clock.now,
      timers: clock,
    });
    player.play([run(0, ess(1)), run(1, ess(2))]);
    let closed = false;
    const closing = player.close().then(() => {
      closed = true;
    });
    await turns();
    assert.equal(closed, false, 'a request is under way');
    assert.equal(clock.countTimers(), 0, 'no timer after close');
    settle();
    await closing;
    player.play([run(2, ess(3))]);
    assert.equal(player.resume({ runs: [run(3, ess(4))] }), 0);
    await clock.tickAsync(4 * QUARTER_MS);
    assert.equal(submits.length, 1);
    assert.equal(await player.close().then(() => 'closed'), 'closed', 'nothing under way: at once');
  });

  it('a run whose turn comes less than 1 s before its end is skipped, saying so', async () => {
    const events: string[] = [];
    const player = new SchedulePlayer({
      submit: () => Promise.resolve({} as SteeringResult),
      now: () => clock.now,
      // A timer that fires late: the run's start passed by the time it runs.
      timers: {
        setTimeout: (fn, ms) => clock.setTimeout(fn, ms + QUARTER_MS - MIN_LEFT_MS / 2),
        clearTimeout: (t) => clock.clearTimeout(t as never),
      },
      skipped: (_r, reason) => events.push(reason),
    });
    player.play([run(1, ess(1))]);
    await clock.tickAsync(2 * QUARTER_MS);
    assert.equal(events.length, 1);
    assert.match(events[0], /less than 1 s before its end/);
  });

  it('resuming a state whose run in force ended and nothing left: not playing, the state saved as is; resuming a stopped one plays nothing', () => {
    const saved: PlayerState[] = [];
    const player = new SchedulePlayer({
      submit: () => Promise.resolve({} as SteeringResult),
      now: () => clock.now,
      timers: clock,
      changed: (s) => saved.push(s),
    });
    const ended = { ...run(-2, ess(1)) };
    assert.equal(player.resume({ runs: [], inForce: ended }), 0);
    assert.equal(player.active, false);
    assert.equal(player.current, undefined);
    assert.deepEqual(saved.at(-1), { runs: [], inForce: ended });
    assert.equal(player.resume({ runs: [run(1, ess(2))], inForce: run(0, ess(1)), stopped: true }), 0);
    assert.equal(player.active, false);
    assert.equal(player.wasStopped, true);
    assert.equal(clock.countTimers(), 0);
  });

  it('without injected timers it uses the real ones, and stop() leaves none of its own pending', async () => {
    const timers = watchTimers();
    try {
      const player = new SchedulePlayer({
        submit: () => Promise.resolve({} as SteeringResult),
        now: () => T0 - QUARTER_MS,
      });
      player.play([run(0, ess(1))]);
      assert.equal(player.nextAt, T0, "armed for the run's start");
      assert.ok(
        timers.pending().some((f) => f.includes('schedule-player')),
        timers.pending().join('\n'),
      );
      assert.equal(player.stop(), true);
      assert.equal(player.nextAt, undefined);
      await turns();
      assert.deepEqual(
        timers.pending().filter((f) => f.includes('schedule-player')),
        [],
      );
      assert.equal(player.stop(), false, 'stopping again: nothing was playing');
    } finally {
      timers.stop();
    }
  });
  it('playing an empty schedule drops what was to come (the request in force runs out); with the system clock and timers', async () => {
    const timers = watchTimers();
    try {
      const base = Date.now();
      const submits: SteeringCommand[] = [];
      const events: string[] = [];
      const player = new SchedulePlayer({
        submit: (cmd) => {
          submits.push(cmd);
          return Promise.resolve({} as SteeringResult);
        },
        done: () => events.push('done'),
      });
      const soon: PlayRun = { ...run(0, ess(1)), start: base + 3_600_000, end: base + 3_600_000 + QUARTER_MS };
      player.play([soon]);
      assert.equal(player.nextAt, soon.start);
      player.play([]);
      assert.deepEqual([player.pending.length, player.nextAt, player.active, submits.length], [0, undefined, false, 0]);
      assert.deepEqual(events, ['done']);
      await turns();
      assert.deepEqual(
        timers.pending().filter((f) => f.includes('schedule-player')),
        [],
      );
    } finally {
      timers.stop();
    }
  });
});
