/**
 * Playing a schedule (runtime/schedule-player.ts): the player runs on a
 * @sinonjs/fake-timers clock (its `now` and timers injected, as is the steering queue's `now`),
 * and sends through the real SteeringQueue and EmsClient to the simulator on 127.0.0.1:0,
 * whose clock is frozen and moved in step with the fake one: the simulator's request log then
 * shows the (simulated) time each request arrived. Hours pass in no time; nothing sleeps.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { MINUTE_MS, QUARTER_HOUR_MS } from '../../src/protocol/time';
import { parseSlots, type ScheduleSettings } from '../../src/protocol/schedule';
import { runsOf } from '../../src/protocol/schedule-runs';
import { EmsClient } from '../../src/client';
import { SteeringQueue, type SteeringCommand, type SteeringResult } from '../../src/runtime';
import { SchedulePlayer, commandsOf, type PlayRun, type PlayerState } from '../../src/runtime/schedule-player';
import { DEFAULT_SITES, startSimulator, type StartedSimulator } from '../../src/simulator';
import { turns } from '../helpers/red';

const SITE = DEFAULT_SITES[0].siteReference;
const SETTINGS: ScheduleSettings = {
  essUnit: 'kW',
  curtailmentUnit: 'kW',
  gridUnit: 'kW',
  maxEssPower: 0,
  maxCurtailment: 0,
  maxGridPower: 0,
  maxGridLimit: 0,
  allowMaximizeGridImport: true,
};
/** The first slot's start: a quarter hour ahead of real time (the client refuses a validUntil before Date.now()). */
const T0 = Math.ceil((Date.now() + 2 * 3_600_000) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
const slotAt = (i: number, extra: Record<string, unknown>) => ({
  start: T0 + i * QUARTER_HOUR_MS,
  end: T0 + (i + 1) * QUARTER_HOUR_MS,
  ...extra,
});
const steerRoute = /^POST \/sites\/:ref\/steering/;

describe('schedule: playing', () => {
  let simulator: StartedSimulator;
  let client: EmsClient;
  let clock: ReturnType<typeof FakeTimers.createClock>;
  let q0: SteeringQueue;
  let inflight: Array<Promise<unknown>>;
  let events: string[];
  let sent: Array<{ run: PlayRun; cmd: SteeringCommand; result: SteeringResult; at: number }>;
  let saved: PlayerState | undefined;

  beforeEach(async () => {
    simulator = await startSimulator({ frozen: true, startTime: T0 - 2 * MINUTE_MS });
    client = new EmsClient({ baseUrl: simulator.url, retries: 0 });
    clock = FakeTimers.createClock(T0 - 2 * MINUTE_MS);
    q0 = new SteeringQueue(client, { maxValidityMs: 1440 * MINUTE_MS, now: () => clock.now });
    inflight = [];
    events = [];
    sent = [];
    saved = undefined;
  });
  afterEach(async () => {
    client.close();
    await simulator.close();
  });

  function player(): SchedulePlayer {
    return new SchedulePlayer({
      submit: (cmd) => {
        const pending = q0.submit(cmd);
        inflight.push(pending.catch(() => undefined));
        return pending;
      },
      now: () => clock.now,
      timers: clock,
      sent: (run, cmd, result) => sent.push({ run, cmd, result, at: clock.now }),
      failed: (run, _cmd, err) => events.push(`failed ${run.first}: ${err.message}`),
      skipped: (run, reason) => events.push(`skipped ${run.first}: ${reason}`),
      done: () => events.push('done'),
      changed: (state) => {
        saved = JSON.parse(JSON.stringify(state));
      },
    });
  }

  const runsFor = (slots: unknown[], now = clock.now) =>
    runsOf(parseSlots(slots, SETTINGS, now), 1440 * MINUTE_MS, now).map((r) => ({
      ...r,
      site: SITE,
      total: slots.length,
    }));
  /** Requests under way settle (real I/O, bounded by the client's timeout). */
  async function settle(): Promise<void> {
    while (inflight.length) await Promise.all(inflight.splice(0));
    await turns();
  }
  /** Moves both clocks to the player's next timer, fires it, and waits for what it sent. */
  async function step(p: SchedulePlayer): Promise<void> {
    const at = p.nextAt;
    assert.ok(at !== undefined, 'a timer is set');
    simulator.sim.clock.advance(at - clock.now);
    await clock.tickAsync(at - clock.now);
    await settle();
  }
  /** Moves both clocks by `ms` (no timer due in between). */
  async function wait(ms: number): Promise<void> {
    simulator.sim.clock.advance(ms);
    await clock.tickAsync(ms);
    await settle();
  }
  const log = () => simulator.sim.requestLog.filter((e) => steerRoute.test(e.route));

  it('96 quarter hours: each run sent at its start with validUntil its end, one request per change of setting, one timer', async () => {
    // Runs of 8, 3, 1 and 12 slots, values cycling through five settings: 96 slots, 16 changes.
    const lengths = [8, 3, 1, 12];
    const values = [-200, -100, 0, 150, 50];
    const perSlot: number[] = [];
    for (let k = 0; perSlot.length < 96; k++)
      for (let j = 0; j < lengths[k % 4] && perSlot.length < 96; j++) perSlot.push(values[k % 5]);
    const slots = perSlot.map((v, i) => slotAt(i, { energyStorage: v }));
    // The expected runs, grouped by hand: [first slot, last slot].
    const expected: Array<[number, number]> = [];
    perSlot.forEach((v, i) =>
      i > 0 && perSlot[i - 1] === v ? (expected[expected.length - 1][1] = i) : expected.push([i, i]),
    );
    assert.equal(expected.length, 16);

    const schedulePlayer = player();
    schedulePlayer.play(runsFor(slots));
    await settle();
    assert.equal(log().length, 0, "nothing before the first slot's start");
    assert.equal(clock.countTimers(), 1, 'one timer');
    const timers: number[] = [];
    while (schedulePlayer.nextAt !== undefined) {
      await step(schedulePlayer);
      timers.push(clock.countTimers());
    }
    assert.deepEqual(events, ['done']);
    const entries = log();
    assert.equal(entries.length, expected.length, 'one request per change of setting');
    for (const [k, [first, last]] of expected.entries()) {
      const entry = entries[k];
      const body = entry.body as { setting: { value: number; unit: string }; validUntil: number; validFrom?: number };
      assert.equal(entry.path, `/sites/${SITE}/steering/ess`);
      assert.equal(entry.status, 200);
      assert.equal(entry.time, T0 + first * QUARTER_HOUR_MS, `run ${k} sent at its start`);
      assert.equal(body.validUntil, T0 + (last + 1) * QUARTER_HOUR_MS, `run ${k} valid until its end`);
      assert.ok(entry.time < body.validUntil, 'never sent after its end');
      assert.equal(body.validFrom, undefined, 'no validFrom');
      assert.deepEqual(body.setting, { value: perSlot[first], unit: 'kW' });
      assert.deepEqual(
        sent[k].run.slots.map((x) => x.index),
        Array.from({ length: last - first + 1 }, (_, i) => first + i),
      );
    }
    assert.ok(
      timers.slice(0, -1).every((n) => n === 1),
      `one timer while playing: ${timers}`,
    );
    assert.equal(timers.at(-1), 0, 'none once done');
    assert.equal(saved!.runs.length, 0);
  });

  it('the slot in progress is sent at once, valid until its end; slots that ended are skipped without a word', async () => {
    await wait(2 * MINUTE_MS + 20 * MINUTE_MS); // T0 + 20 min: slot 0 ended, slot 1 in progress
    const schedulePlayer = player();
    schedulePlayer.play(
      runsFor([slotAt(0, { energyStorage: 1 }), slotAt(1, { energyStorage: 2 }), slotAt(2, { energyStorage: 3 })]),
    );
    await settle();
    const [e] = log();
    assert.equal(log().length, 1);
    assert.equal(e.time, T0 + 20 * MINUTE_MS);
    assert.deepEqual((e.body as { setting: unknown }).setting, { value: 2, unit: 'kW' });
    assert.equal((e.body as { validUntil: number }).validUntil, T0 + 2 * QUARTER_HOUR_MS);
    assert.equal(schedulePlayer.nextAt, T0 + 2 * QUARTER_HOUR_MS);
    assert.deepEqual(events, []);
  });

  it('a timer that fires after its slot ended sends nothing for it and says so; the next slot goes out', async () => {
    const schedulePlayer = player();
    schedulePlayer.play(
      runsFor([slotAt(0, { energyStorage: 1 }), slotAt(1, { energyStorage: 2 }), slotAt(2, { energyStorage: 3 })]),
    );
    await step(schedulePlayer); // slot 0
    // The machine sleeps for 20 minutes: the clock jumps, the timer of slot 1 (due at its start)
    // fires 20 minutes late, at T0 + 35 min, after slot 1's end and within slot 2.
    clock.setSystemTime(T0 + 20 * MINUTE_MS);
    simulator.sim.clock.advance(T0 + 35 * MINUTE_MS - simulator.sim.clock.now());
    await clock.tickAsync(QUARTER_HOUR_MS);
    await settle();
    assert.equal(events.length, 1, events.join('; '));
    assert.match(events[0], /^skipped 1: its turn came at .*, after its end/);
    // Slot 2 was in progress by then: sent at once, valid until its end.
    assert.deepEqual(
      log().map((e) => (e.body as { setting: { value: number } }).setting.value),
      [1, 3],
    );
    assert.equal((log()[1].body as { validUntil: number }).validUntil, T0 + 3 * QUARTER_HOUR_MS);
    assert.equal(log()[1].time, T0 + 35 * MINUTE_MS);
  });

  it("a timer that fires early sends nothing before the slot's start: it waits the rest", async () => {
    const schedulePlayer = player();
    schedulePlayer.play(runsFor([slotAt(0, { energyStorage: 1 })]));
    // The clock goes back a minute: the timer (due in 2 minutes) fires at T0 − 1 min.
    clock.setSystemTime(clock.now - MINUTE_MS);
    await clock.tickAsync(2 * MINUTE_MS);
    await settle();
    assert.equal(clock.now, T0 - MINUTE_MS);
    assert.equal(log().length, 0);
    assert.equal(schedulePlayer.nextAt, T0);
    assert.equal(clock.countTimers(), 1);
    simulator.sim.clock.advance(MINUTE_MS);
    await step(schedulePlayer);
    assert.deepEqual(
      log().map((e) => e.time),
      [T0],
    );
  });

  it('a schedule days ahead: the one timer waits at most a day at a time, then sends at the start', async () => {
    const schedulePlayer = player();
    const start = T0 + 50 * 3_600_000;
    schedulePlayer.play(runsFor([{ start, duration: 15, energyStorage: 7 }]));
    const waits: number[] = [];
    while (log().length === 0) {
      waits.push(clock.countTimers());
      const before = clock.now;
      await step(schedulePlayer);
      assert.ok(clock.now - before <= 24 * 3_600_000, 'at most a day per wait');
    }
    assert.equal(log()[0].time, start);
    assert.deepEqual(waits, [1, 1, 1], 'one timer, armed again twice');
  });

  it('components a slot does not set are left out; one request per steering type; a failure is reported and the next slot still goes', async () => {
    const schedulePlayer = player();
    schedulePlayer.play(
      runsFor([
        slotAt(0, { curtailment: 300 }),
        slotAt(1, { energyStorage: -50, gridLimits: { upper: 100 } }),
        slotAt(2, { gridTarget: 20, deadband: 5 }),
        slotAt(3, { energyStorage: 10 }),
      ]),
    );
    for (let i = 0; i < 4; i++) {
      if (i === 2) simulator.sim.setFaults({ rate500: 1 });
      if (i === 3) simulator.sim.setFaults({ rate500: 0 });
      await step(schedulePlayer);
    }
    const ok = log().filter((e) => e.status === 200);
    assert.deepEqual(
      ok.map((e) => [e.path, e.body]),
      [
        [
          `/sites/${SITE}/steering`,
          { productionCurtailment: { value: 300, unit: 'kW' }, validUntil: T0 + QUARTER_HOUR_MS },
        ],
        [`/sites/${SITE}/steering/ess`, { setting: { value: -50, unit: 'kW' }, validUntil: T0 + 2 * QUARTER_HOUR_MS }],
        [
          `/sites/${SITE}/steering/grid-limits`,
          { upperLimit: { value: 100, unit: 'kW' }, validUntil: T0 + 2 * QUARTER_HOUR_MS },
        ],
        [`/sites/${SITE}/steering/ess`, { setting: { value: 10, unit: 'kW' }, validUntil: T0 + 4 * QUARTER_HOUR_MS }],
      ],
    );
    assert.equal(events.filter((e) => e.startsWith('failed 2:')).length, 1, events.join('; '));
    assert.deepEqual(
      commandsOf({ site: SITE, end: 1, setting: { gridTarget: { setpoint: { value: 1, unit: 'kW' } } } }).map(
        (x) => x.kind,
      ),
      ['grid-target'],
    );
  });

  it('replace: the new schedule from its first slot on; the old run in force is sent again cut there; nothing of the old after it', async () => {
    const schedulePlayer = player();
    // Old: ESS −200 for two hours (one request until T0 + 2 h), then +100.
    schedulePlayer.play(
      runsFor([
        ...Array.from({ length: 8 }, (_, i) => slotAt(i, { energyStorage: -200 })),
        slotAt(8, { energyStorage: 100 }),
      ]),
    );
    await step(schedulePlayer);
    assert.equal((log()[0].body as { validUntil: number }).validUntil, T0 + 2 * 3_600_000);
    await wait(30 * MINUTE_MS);
    // New, from T0 + 1 h: ESS −50 for an hour.
    schedulePlayer.play(
      runsFor([
        slotAt(4, { energyStorage: -50 }),
        slotAt(5, { energyStorage: -50 }),
        slotAt(6, { energyStorage: -50 }),
        slotAt(7, { energyStorage: -50 }),
      ]),
    );
    await settle();
    assert.equal(log().length, 2, 'the old run in force, sent again at once');
    assert.equal(log()[1].time, T0 + 30 * MINUTE_MS);
    assert.deepEqual(log()[1].body, { setting: { value: -200, unit: 'kW' }, validUntil: T0 + 3_600_000 });
    while (schedulePlayer.nextAt !== undefined) await step(schedulePlayer);
    assert.deepEqual(
      log()
        .slice(2)
        .map((e) => [e.time, e.body]),
      [[T0 + 3_600_000, { setting: { value: -50, unit: 'kW' }, validUntil: T0 + 2 * 3_600_000 }]],
    );
    assert.ok(
      !log().some((e) => (e.body as { setting: { value: number } }).setting.value === 100),
      "the old schedule's later slot is never sent",
    );
    assert.deepEqual(events, ['done']);
  });

  it('replace with a first slot in progress: sent at once, unless it is exactly the request in force', async () => {
    const schedulePlayer = player();
    schedulePlayer.play(runsFor([slotAt(0, { energyStorage: -200 }), slotAt(1, { energyStorage: -200 })]));
    await step(schedulePlayer);
    await wait(5 * MINUTE_MS);
    // The same two slots again (an optimiser that resends): nothing to send.
    schedulePlayer.play(runsFor([slotAt(0, { energyStorage: -200 }), slotAt(1, { energyStorage: -200 })]));
    await settle();
    assert.equal(log().length, 1);
    // Another value for the slots in progress: sent at once.
    schedulePlayer.play(runsFor([slotAt(0, { energyStorage: -100 }), slotAt(1, { energyStorage: -100 })]));
    await settle();
    assert.equal(log().length, 2);
    assert.equal(log()[1].time, T0 + 5 * MINUTE_MS);
  });

  it('stop: nothing more is sent and no timer is left; the request in force runs out at its end', async () => {
    const schedulePlayer = player();
    schedulePlayer.play(
      runsFor([
        slotAt(0, { energyStorage: -200 }),
        slotAt(1, { energyStorage: -100 }),
        slotAt(2, { energyStorage: 0 }),
      ]),
    );
    await step(schedulePlayer);
    assert.equal(schedulePlayer.stop(), true);
    assert.equal(clock.countTimers(), 0);
    assert.equal(schedulePlayer.current?.end, T0 + QUARTER_HOUR_MS);
    await wait(3 * QUARTER_HOUR_MS);
    assert.equal(log().length, 1);
    assert.deepEqual(saved, { runs: [], inForce: JSON.parse(JSON.stringify(sent[0].run)), stopped: true });
    // Resumed from that state (a redeploy after stop): it stays stopped.
    const again = player();
    again.resume(saved!);
    assert.equal(again.active, false);
    assert.equal(again.wasStopped, true);
    assert.equal(clock.countTimers(), 0);
  });

  it('resume from the saved state: the run in force is not sent again, the next one at its start', async () => {
    const schedulePlayer = player();
    schedulePlayer.play(
      runsFor([
        slotAt(0, { energyStorage: -200 }),
        slotAt(1, { energyStorage: -100 }),
        slotAt(2, { energyStorage: 0 }),
      ]),
    );
    await step(schedulePlayer);
    await wait(5 * MINUTE_MS);
    const state = saved!;
    await schedulePlayer.close();
    const again = player();
    assert.equal(again.resume(state), 0);
    await settle();
    assert.equal(log().length, 1, 'nothing twice');
    assert.equal(again.nextAt, T0 + QUARTER_HOUR_MS);
    await step(again);
    assert.deepEqual(
      log().map((e) => e.time),
      [T0, T0 + QUARTER_HOUR_MS],
    );
    // A state saved before slot 1's request went out (it was under way): it is sent at once.
    const before: PlayerState = { runs: [sent[1].run, ...state.runs.slice(1)], inForce: sent[0].run };
    await wait(MINUTE_MS);
    const third = player();
    third.resume(before);
    await settle();
    assert.equal(log().length, 3);
    assert.equal(log()[2].time, T0 + QUARTER_HOUR_MS + MINUTE_MS);
  });
});
