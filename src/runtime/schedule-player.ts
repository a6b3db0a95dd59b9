/**
 * Plays a checked schedule (protocol/schedule.ts) on the config node's SteeringQueue, so a
 * schedule and site-steer nodes share one ordered queue per site. Each run goes out at its
 * start, never earlier (a future validFrom would replace the setting in force at once,
 * assumption A18), with validUntil = its end: a dead flow lets the site fall back at the end of
 * the current run at the latest. Clock and timers are injected for tests.
 */
import { settingKey } from '../protocol';
import type { ScheduleRun } from '../protocol';
import type { SteeringCommand, SteeringResult } from './steering-queue';

/** A run as played: the site it steers and the number of slots of the schedule it came from. */
export interface PlayRun extends ScheduleRun {
  site: string;
  total: number;
}

/** What the player keeps between restarts: the runs not yet sent and the one sent last. */
export interface PlayerState {
  runs: PlayRun[];
  inForce?: PlayRun;
  /** Stopped by the user (the request in force runs out; nothing is played). */
  stopped?: boolean;
}

interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(t: unknown): void;
}

export interface PlayerDeps {
  /** Sends a command (the config node's SteeringQueue.submit). */
  submit(cmd: SteeringCommand): Promise<SteeringResult>;
  now?: () => number;
  timers?: Timers;
  /** A request of `run` went out. */
  sent?(run: PlayRun, cmd: SteeringCommand, result: SteeringResult): void;
  /** A request of `run` failed (the client retried already). */
  failed?(run: PlayRun, cmd: SteeringCommand, err: Error): void;
  /** `run` was not sent: its end had passed when its turn came. */
  skipped?(run: PlayRun, reason: string): void;
  /** Everything was sent and the last request ran out. */
  done?(): void;
  /** The state changed (run sent or skipped, schedule played or stopped, done): save it. */
  changed?(state: PlayerState): void;
}

/** A run whose end is closer than this when its turn comes is not sent. */
export const MIN_LEFT_MS = 1000;
/** Longest single wait of the timer (it is armed again; setTimeout takes at most 24.8 days). */
const MAX_WAIT_MS = 24 * 3_600_000;

/**
 * The commands of a run: one per steering type it sets (asset steering: the ESS endpoint when ESS
 * alone; grid target; grid limits). Components the run does not set are left out (partial update).
 */
export function commandsOf(run: Pick<PlayRun, 'site' | 'setting' | 'end'>): SteeringCommand[] {
  const { site, setting: c, end: validUntil } = run;
  const out: SteeringCommand[] = [];
  const asset =
    c.energyStorageSetting !== undefined || c.productionCurtailment !== undefined || c.maximizeGridImport !== undefined;
  if (asset) {
    const onlyEss = c.productionCurtailment === undefined && c.maximizeGridImport === undefined;
    const cmd: SteeringCommand = { site, kind: onlyEss ? 'ess' : 'combined' };
    if (c.energyStorageSetting) cmd.energyStorageSetting = c.energyStorageSetting;
    if (c.productionCurtailment) cmd.productionCurtailment = c.productionCurtailment;
    if (c.maximizeGridImport !== undefined) cmd.maximizeGridImport = c.maximizeGridImport;
    out.push({ ...cmd, validUntil });
  }
  if (c.gridTarget) out.push({ site, kind: 'grid-target', gridTarget: c.gridTarget, validUntil });
  if (c.gridLimits) out.push({ site, kind: 'grid-limits', gridLimits: c.gridLimits, validUntil });
  return out;
}

/** A run cut to end at `end` (its slots too). */
function cut(r: PlayRun, end: number): PlayRun {
  const slots = r.slots.filter((s) => s.start < end).map((s) => ({ ...s, end: Math.min(s.end, end) }));
  return { ...r, end, slots, last: slots.length ? slots[slots.length - 1].index : r.first };
}

const same = (a: PlayRun, b: PlayRun) =>
  a.site === b.site && a.end === b.end && settingKey(a.setting) === settingKey(b.setting);

export class SchedulePlayer {
  private runs: PlayRun[] = [];
  /** The run sent last (its requests may still be under way). */
  private inForce?: PlayRun;
  private timer: unknown;
  private timerAt?: number;
  private playing = false;
  private stopped = false;
  private closed = false;
  private inFlight = 0;
  private idle: Array<() => void> = [];
  private readonly now: () => number;

  constructor(private readonly deps: PlayerDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The runs not yet sent. */
  get pending(): readonly PlayRun[] {
    return this.runs;
  }

  /** The run sent last, while it lasts. */
  get current(): PlayRun | undefined {
    return this.inForce && this.inForce.end > this.now() ? this.inForce : undefined;
  }

  /** Whether a schedule is playing (runs to send, or the last request still in force). */
  get active(): boolean {
    return this.playing;
  }

  /** Whether the last schedule was stopped (rather than played to its end). */
  get wasStopped(): boolean {
    return this.stopped;
  }

  /** When the timer fires next (epoch ms), or undefined when none is set. */
  get nextAt(): number | undefined {
    return this.timer === undefined ? undefined : this.timerAt;
  }

  /** What the player keeps (to save). */
  state(): PlayerState {
    const state: PlayerState = { runs: [...this.runs] };
    if (this.inForce) state.inForce = this.inForce;
    if (this.stopped) state.stopped = true;
    return state;
  }

  /**
   * Plays `runs` (one schedule, sorted), replacing the schedule playing from `from` (the new
   * schedule's first slot) on: old runs from then on are dropped, an old run that reaches beyond
   * it is cut there. The old run in force is sent again cut there when the new schedule starts
   * later (else its components the new first slot does not set run out at its end). Runs that
   * ended are skipped; the one in progress goes out at once.
   */
  play(runs: readonly PlayRun[], from = runs[0]?.start ?? this.now()): void {
    if (this.closed) return;
    const now = this.now();
    const kept = this.runs.filter((r) => r.start < from).map((r) => (r.end > from ? cut(r, from) : r));
    if (this.inForce && this.inForce.end > from && from > now) kept.unshift(cut(this.inForce, from));
    this.runs = [...kept, ...runs].filter((r) => r.end > now).sort((a, b) => a.start - b.start);
    this.playing = true;
    this.stopped = false;
    this.step(false);
  }

  /** Plays a saved state (after a restart or redeploy); returns how many runs ended meanwhile. */
  resume(state: PlayerState): number {
    if (this.closed) return 0;
    const now = this.now();
    this.inForce = state.inForce;
    this.stopped = state.stopped === true;
    this.runs = this.stopped ? [] : [...state.runs].sort((a, b) => a.start - b.start);
    const passed = this.runs.filter((r) => r.end - MIN_LEFT_MS <= now).length;
    this.playing = this.runs.length > 0 || (!this.stopped && this.inForce !== undefined && this.inForce.end > now);
    if (this.playing) this.step(false);
    else this.call(() => this.deps.changed?.(this.state()));
    return passed;
  }

  /** Stops playing: nothing more is sent; the request in force runs out at its end. True if a schedule was playing. */
  stop(): boolean {
    const was = this.playing && this.runs.length > 0;
    this.runs = [];
    this.playing = false;
    this.stopped = true;
    this.clearTimer();
    this.call(() => this.deps.changed?.(this.state()));
    return was;
  }

  /** Stops the timer for good; resolves once no request is under way. */
  close(): Promise<void> {
    this.closed = true;
    this.clearTimer();
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  /** Sends what is due, arms the timer for what comes next, and reports the new state. */
  private step(late: boolean): void {
    const now = this.now();
    while (this.runs.length && this.runs[0].start <= now) {
      const run = this.runs.shift()!;
      // A run whose end has passed (or is under MIN_LEFT_MS away) when its turn comes, a timer that
      // fired late, is never sent: `skipped`.
      if (now >= run.end - MIN_LEFT_MS) {
        if (late)
          this.call(() =>
            this.deps.skipped?.(
              run,
              `its turn came at ${new Date(now).toISOString()}, ${now >= run.end ? 'after its end' : 'less than 1 s before its end'} (${new Date(run.end).toISOString()})`,
            ),
          );
        continue;
      }
      // Exactly what this player sent last (same site, setting and end): a resumed or replaced
      // schedule sends nothing twice.
      if (this.inForce && same(this.inForce, run)) continue;
      this.send(run);
    }
    this.arm(now);
    this.call(() => this.deps.changed?.(this.state()));
  }

  /** One timer per player: the next run's start, or, once everything is sent, the end of the last request. */
  private arm(now: number): void {
    this.clearTimer();
    if (this.closed || !this.playing) return;
    const at = this.runs.length
      ? this.runs[0].start
      : this.inForce && this.inForce.end > now
        ? this.inForce.end
        : undefined;
    if (at === undefined) {
      this.finish();
      return;
    }
    const wait = Math.min(Math.max(0, at - now), MAX_WAIT_MS);
    this.timerAt = now + wait;
    this.timer = this.setTimer(() => this.fire(), wait);
  }

  private fire(): void {
    this.timer = undefined;
    if (this.closed) return;
    if (this.runs.length === 0 && this.inForce && this.inForce.end <= this.now()) {
      this.finish();
      this.call(() => this.deps.changed?.(this.state()));
      return;
    }
    this.step(true);
  }

  private finish(): void {
    if (!this.playing) return;
    this.playing = false;
    if (this.inForce && this.inForce.end <= this.now()) this.inForce = undefined;
    this.call(() => this.deps.done?.());
  }

  private send(r: PlayRun): void {
    this.inForce = r;
    this.inFlight++;
    let failed = false;
    const each = commandsOf(r).map((cmd) => {
      let submitted: Promise<SteeringResult>;
      try {
        submitted = this.deps.submit(cmd);
      } catch (e) {
        submitted = Promise.reject(e);
      }
      return submitted.then(
        (result) => this.call(() => this.deps.sent?.(r, cmd, result)),
        (err: unknown) => {
          failed = true;
          this.call(() => this.deps.failed?.(r, cmd, err instanceof Error ? err : new Error(String(err))));
        },
      );
    });
    void Promise.all(each).then(() => {
      // A run that did not go out whole is not "in force": a replacement or a restart sends it again.
      if (failed && this.inForce === r) this.inForce = undefined;
      if (--this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
      this.call(() => this.deps.changed?.(this.state()));
    });
  }

  /** Runs a callback of the node; a throw from it must not stop the player. */
  private call(fn: () => void): void {
    try {
      fn();
    } catch {
      /* the node reports its own failures */
    }
  }

  private setTimer(fn: () => void, ms: number): unknown {
    return this.deps.timers ? this.deps.timers.setTimeout(fn, ms) : setTimeout(fn, ms);
  }

  private clearTimer(): void {
    if (this.timer === undefined) return;
    if (this.deps.timers) this.deps.timers.clearTimeout(this.timer);
    else clearTimeout(this.timer as NodeJS.Timeout);
    this.timer = undefined;
  }
}

/**
 * The delivery check's part in a schedule (nodes/schedule/verify.ts): told of every
 * request the service accepted, it measures each slot the run covers, from the acceptance (or
 * the slot's start) to the slot's end, and reports per slot. Its timers are deadlines on the
 * node's SharedClock, as the player's are, so the node keeps one timer.
 */
export interface DeliveryCheckHook {
  /** A request of a run went out (accepted at the clock's now): measure each of the run's slots once it ends. */
  sent(run: PlayRun, cmd: SteeringCommand, result: SteeringResult): void;
  /** The node closes: pending checks are dropped, no report follows. */
  close(): void;
}

/** The hook with verify off (or a dry run): checks nothing. */

export function noDeliveryCheck(): DeliveryCheckHook {
  return { sent: () => undefined, close: () => undefined };
}
