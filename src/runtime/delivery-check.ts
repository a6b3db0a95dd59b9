/**
 * The delivery check: over a window in which a steering component was asked, the device's
 * energy counters are read at the start and at the end, and the average power they give is
 * compared with what was asked (protocol/delivery.ts: formulas and verdicts). Used by the site
 * steer node (nodes/shared/steer-verify.ts) and the schedule node. Never "yes" without data:
 * what cannot be measured gives `followed: "unknown"` with the reason. One timer at a time, on
 * an injected clock (delivery-clock.ts); nothing throws from a timer or a read.
 */
import { validateReference, DEVICE_ROLE, averageFromCounters, measuredReport, unknownReport, watts } from '../protocol';
import type {
  Asked,
  DeliveryComponent,
  DeliveryReport,
  DeliverySource,
  DeviceRole,
  Reading,
  ReportInput,
  Tolerance,
  SteeringCommand,
} from '../protocol';
import type { ReadCoalescer } from './coalescer';
import { deliveryClock, type CheckClock } from './delivery-clock';
import { readCounters, readingOf } from './delivery-readings';

export { deliveryClock, deliveryNow, setDeliveryClock, type CheckClock } from './delivery-clock';
export { readingOf } from './delivery-readings';

export type { DeliveryReport, Asked, DeliveryComponent } from '../protocol';

/** A window shorter than this (between the readings' timestamps) is not judged. */
const MIN_WINDOW_MS = 60_000;
/** setTimeout's longest delay; longer waits are chained. */
const MAX_TIMER_MS = 2_000_000_000;

/** The devices to measure with: the site's battery (ESS), PV (curtailment) and grid meter (grid target, grid limits). */
export interface CheckDevices {
  battery?: string;
  pv?: string;
  meter?: string;
}

/** The window of a check (a `from` later than now is waited for) and the devices it reads. */
export interface CheckRequest extends Pick<ReportInput, 'site' | 'component' | 'asked' | 'from' | 'until'> {
  devices: CheckDevices;
}

export interface CheckOptions {
  /** Default 10 % of the asked power, at least 1000 W. */
  tolerance?: Tolerance;
  /** A report every this many ms while the window lasts (0 / unset: one at its end). */
  everyMs?: number;
  clock?: CheckClock;
  /** Aborting cancels the check (no report). */
  signal?: AbortSignal;
  /** Every report, the last one included (not called for a cancelled check). */
  onReport?: (r: DeliveryReport) => void;
}

/** What a check needs of the runtime: its read coalescer. */
export interface CheckRuntime {
  reads: Pick<ReadCoalescer, 'read'>;
}

type Taken = { ok: true; reading: Reading } | { ok: false; reason: string };

const text = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 300);

export class DeliveryCheck {
  /** The last report (a cancelled check: an unknown one that was not sent). Never rejects. */
  readonly done: Promise<DeliveryReport>;
  private resolveDone!: (r: DeliveryReport) => void;
  private readonly clock: CheckClock;
  private readonly ctl = new AbortController();
  private readonly role: DeviceRole;
  private readonly device?: string;
  private readonly deviceError?: string;
  private timer?: unknown;
  private begun = false;
  private finished = false;
  private cancelled = false;
  /** The reading at the start of the part under way, and when that part began (local clock). */
  private start?: Promise<Taken>;
  private partFrom = 0;
  /** Reports go out in order. */
  private chain: Promise<void> = Promise.resolve();
  private resolveStarted!: () => void;
  /** Resolves once the window's first reading was taken (or failed), or the check ended before it. */
  readonly started: Promise<void> = new Promise((resolve) => {
    this.resolveStarted = resolve;
  });

  constructor(
    readonly req: CheckRequest,
    private readonly rt: CheckRuntime,
    private readonly opts: CheckOptions = {},
  ) {
    this.clock = opts.clock ?? deliveryClock();
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    this.role = DEVICE_ROLE[req.component];
    const given = req.devices[this.role];
    if (given === undefined || given === '') this.deviceError = `no ${this.role} device given (${this.role}Device)`;
    else {
      try {
        this.device = validateReference(given, `${this.role}Device`);
      } catch (e) {
        this.deviceError = text(e);
      }
    }
    if (opts.signal?.aborted) {
      this.cancel();
      return;
    }
    // Listens only while the check runs: a node's signal outlives many checks.
    const onAbort = () => this.cancel();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    void this.done.then(() => opts.signal?.removeEventListener('abort', onAbort));
    // A window that has begun is read at once (not on the next timer turn).
    if (req.from <= this.clock.now()) this.begin();
    else this.at(req.from, () => this.begin());
  }

  /**
   * Ends the window now (a later request replaced the setting): the last report covers up to now.
   * (`everyMs` cuts the window into parts of that length, one report each.)
   */
  end(): void {
    if (this.finished) return;
    if (!this.begun) {
      this.finish(this.input(this.req.from, this.req.from), 'replaced before its start', false);
      return;
    }
    this.boundary(true);
  }

  /** Stops the check without a report (the node closed or was redeployed: it cannot send one); so does the signal. */
  cancel(reason = 'cancelled before the window ended'): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.ctl.abort(); // reads in flight too
    if (!this.finished) this.finish(this.input(this.partFrom || this.req.from, this.clock.now()), reason, false);
    else this.resolveDone(unknownReport(this.input(this.partFrom || this.req.from, this.clock.now()), reason));
  }

  get active(): boolean {
    return !this.finished;
  }

  private finish(i: ReportInput, reason: string, emit: boolean): void {
    this.finished = true;
    this.resolveStarted();
    this.clearTimer();
    this.ctl.abort();
    const report = unknownReport(i, reason);
    if (emit) this.emit(report);
    this.resolveDone(report);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Runs `fn` at `when` (chained for long waits); a throw is contained. */
  private at(when: number, fn: () => void): void {
    this.clearTimer();
    const wait = Math.max(0, when - this.clock.now());
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        if (this.finished) return;
        try {
          if (wait > MAX_TIMER_MS) this.at(when, fn);
          else fn();
        } catch (e) {
          this.finish(this.input(this.partFrom, this.clock.now()), `check failed: ${text(e)}`, true);
        }
      },
      Math.min(wait, MAX_TIMER_MS),
    );
  }

  private begin(): void {
    this.begun = true;
    this.partFrom = this.clock.now();
    this.start = this.take();
    void this.start.then(() => this.resolveStarted());
    this.next();
  }

  /** Arms the end of the part under way: the window's end, or `everyMs` after the part began. */
  private next(): void {
    const every = this.opts.everyMs ?? 0;
    const end = every > 0 ? Math.min(this.req.until, this.partFrom + every) : this.req.until;
    this.at(end, () => this.boundary(end >= this.req.until));
  }

  /** The end of a part: read, report; the reading starts the next part unless this was the last. */
  private boundary(last: boolean): void {
    const from = this.partFrom;
    const startP = this.start!;
    const now = this.clock.now();
    const endP = this.take();
    if (last) {
      this.finished = true;
      this.clearTimer();
    } else {
      this.start = endP;
      this.partFrom = now;
      this.next();
    }
    this.chain = this.chain
      .then(async () => {
        const report = this.report(await startP, await endP, from, now);
        if (this.cancelled) return;
        this.emit(report);
        if (last) this.resolveDone(report);
      })
      .catch(() => undefined);
  }

  private emit(r: DeliveryReport): void {
    try {
      this.opts.onReport?.(r);
    } catch {
      /* a listener's throw must not end the check */
    }
  }

  private input(from: number, until: number, source: DeliverySource = 'energy counters'): ReportInput {
    const input: ReportInput = {
      site: this.req.site,
      component: this.req.component,
      asked: this.req.asked,
      from,
      until,
      source,
      tolerance: this.opts.tolerance,
    };
    if (this.device) input.device = this.device;
    return input;
  }

  /** A failed read, a missing device, a window under MIN_WINDOW_MS or readings without counters and power: unknown. */
  private report(a: Taken, b: Taken, from: number, until: number): DeliveryReport {
    if (this.deviceError) return unknownReport(this.input(from, until), this.deviceError);
    if (!a.ok) return unknownReport(this.input(from, until), `start reading failed: ${a.reason}`);
    if (!b.ok) return unknownReport(this.input(from, until), `end reading failed: ${b.reason}`);
    const [ra, rb] = [a.reading, b.reading];
    if (rb.at - ra.at < MIN_WINDOW_MS) {
      return unknownReport(
        this.input(ra.at, rb.at),
        `window too short to measure: ${Math.round((rb.at - ra.at) / 1000)} s between the readings (at least ${MIN_WINDOW_MS / 1000} s)`,
      );
    }
    const avg = averageFromCounters(this.role, ra, rb);
    const ends = ra.power !== undefined && rb.power !== undefined ? { startW: ra.power, endW: rb.power } : undefined;
    if ('watts' in avg) return measuredReport(this.input(ra.at, rb.at), avg.watts, ends);
    if (ends) {
      const report = measuredReport(this.input(ra.at, rb.at, 'power'), (ends.startW + ends.endW) / 2);
      report.reason = `from the device's power at the window's ends (${avg.reason})${report.reason ? `; ${report.reason}` : ''}`;
      return report;
    }
    return unknownReport(this.input(ra.at, rb.at), avg.reason);
  }

  /**
   * A reading now, through the read coalescer (a window's end and the next window's start on the
   * same device share one request; fallbacks for a device that refuses: delivery-readings.ts). Never rejects.
   */
  private take(): Promise<Taken> {
    if (this.deviceError) return Promise.resolve({ ok: false, reason: this.deviceError });
    const localAt = this.clock.now();
    return readCounters(this.rt.reads, this.device!, this.role, this.ctl.signal).then(
      (answer) => ({ ok: true, reading: readingOf(answer, localAt) }) as Taken,
      (e) => ({ ok: false, reason: text(e) }) as Taken,
    );
  }
}

/**
 * What a command asks, per component, as a check compares it; `ends` lists the components
 * whose window it ends without asking anything (a cancel ends the grid target).
 */
export function componentsOf(cmd: SteeringCommand): {
  asked: Array<{ component: DeliveryComponent; asked: Asked }>;
  ends: DeliveryComponent[];
} {
  const asked: Array<{ component: DeliveryComponent; asked: Asked }> = [];
  if (cmd.kind === 'cancel-grid-target') return { asked, ends: ['gridTarget'] };
  if (cmd.energyStorageSetting)
    asked.push({ component: 'energyStorage', asked: { kind: 'setpoint', value: cmd.energyStorageSetting } });
  if (cmd.productionCurtailment)
    asked.push({ component: 'curtailment', asked: { kind: 'max', value: cmd.productionCurtailment } });
  if (cmd.maximizeGridImport !== undefined)
    asked.push({ component: 'maximizeGridImport', asked: { kind: 'flag', value: cmd.maximizeGridImport } });
  if (cmd.gridTarget) {
    const deadband = cmd.gridTarget.deadband;
    asked.push({
      component: 'gridTarget',
      asked: { kind: 'setpoint', value: cmd.gridTarget.setpoint, ...(deadband ? { deadbandW: watts(deadband) } : {}) },
    });
  }
  const gridLimits = cmd.gridLimits;
  if (gridLimits)
    asked.push({
      component: 'gridLimits',
      asked: {
        kind: 'range',
        ...(gridLimits.upperLimit ? { upper: gridLimits.upperLimit } : {}),
        ...(gridLimits.lowerLimit ? { lower: gridLimits.lowerLimit } : {}),
      },
    });
  return { asked, ends: asked.map((a) => a.component) };
}

/**
 * Checks one window: reads at `from` (or now, if later) and at `until`, resolves with the
 * report (also given to `onReport`, with any `everyMs` reports before it). Never rejects; a
 * cancelled check resolves with an unknown report that was not given to `onReport`.
 */
export function check(req: CheckRequest, rt: CheckRuntime, opts: CheckOptions = {}): Promise<DeliveryReport> {
  return new DeliveryCheck(req, rt, opts).done;
}
