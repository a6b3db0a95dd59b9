/**
 * Renewal of steering signals: shortly before a signal expires, the same components are
 * sent again with a new validity, until stop, redeploy or Node-RED stops. A renewal never
 * starts after the signal's validUntil, so a flow that dies lets the site fall back by itself.
 * A renewal never reaches beyond the config node's maxValidity: its validUntil is clamped to
 * the moment it is sent plus maxValidity (the chain goes on; each link stays within the cap).
 */
import { MINUTE_MS, QUARTER_HOUR_MS, formatClock, formatPower, quarterHourValidUntil } from '../../protocol';
import { isNotSteering, type SteeringCommand, type SteeringResult } from '../../runtime';
import { english, type Translate } from './status';
import type { SteerSettings } from './steer-command';

/**
 * What a renewal reports for the node's status: renewed (with the command sent), expired,
 * failed; in a group, not sent here (another instance leads the site or renewed it already, or
 * Redis is unreachable: the chain stops on this instance, the leader goes on with it).
 */
export type RenewalEvent = 'renewed' | 'expired' | 'failed' | 'not-steering';

export interface RenewalDeps {
  /** Sends `cmd`, the renewal of `prev` (the signal in force). */
  send(cmd: SteeringCommand, prev: SteeringCommand): Promise<SteeringResult>;
  /** What to show; a renewal that went out passes its command and the queue's result; 'not-steering' the error. */
  status(event: RenewalEvent, cmd?: SteeringCommand, result?: SteeringResult, err?: Error): void;
  warn(text: string): void;
  settings(): SteerSettings;
  /** The config node's maxValidity, ms (undefined = no cap). */
  maxValidityMs?: () => number | undefined;
  now?: () => number;
  /** Timer functions, for tests (default the global setTimeout / clearTimeout). */
  timers?: { setTimeout(fn: () => void, ms: number): unknown; clearTimeout(t: unknown): void };
}

/** How long before expiry a renewal is sent: 20 % of the validity, at least 2 s, at most 60 s. */
export function renewLead(validForMs: number): number {
  return Math.min(60_000, Math.max(2_000, validForMs * 0.2));
}

export class Renewal {
  private readonly timers = new Map<string, unknown>();
  /** Bumped per site by stop() and schedule(): a renewal in flight from an older generation does not re-arm. */
  private readonly generation = new Map<string, number>();
  private closed = false;
  /** Renewals sent, for tests. */
  count = 0;

  constructor(private readonly deps: RenewalDeps) {}

  private now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  private setTimer(fn: () => void, ms: number): unknown {
    return this.deps.timers ? this.deps.timers.setTimeout(fn, ms) : setTimeout(fn, ms);
  }

  private clearTimer(t: unknown): void {
    if (this.deps.timers) this.deps.timers.clearTimeout(t);
    else clearTimeout(t as NodeJS.Timeout);
  }

  /** (Re)schedules the renewal of `cmd`'s site, replacing any earlier one. */
  schedule(cmd: SteeringCommand, sentAt = this.now()): void {
    if (this.closed || cmd.validUntil === undefined) return;
    this.stop(cmd.site);
    const validFor = cmd.validUntil - Math.max(cmd.validFrom ?? sentAt, sentAt);
    const at = cmd.validUntil - renewLead(validFor);
    const timer = this.setTimer(() => this.fire(cmd, validFor), Math.max(0, at - this.now()));
    this.timers.set(cmd.site, timer);
    if (!this.generation.has(cmd.site)) this.generation.set(cmd.site, 0);
  }

  /** Stops renewing a site; true if a renewal was pending. */
  stop(site: string): boolean {
    const timer = this.timers.get(site);
    // Nothing scheduled and no renewal ever sent for the site: nothing to end. Every new signal
    // stops its site's renewal, so this keeps a node with renewal off (or steering thousands of
    // sites) from keeping an entry per site it ever steered.
    if (timer === undefined && !this.generation.has(site)) return false;
    this.generation.set(site, (this.generation.get(site) ?? 0) + 1);
    if (timer !== undefined) this.clearTimer(timer);
    return this.timers.delete(site);
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) this.clearTimer(t);
    this.timers.clear();
  }

  get pending(): number {
    return this.timers.size;
  }

  /** Sites the renewal keeps anything for (a timer, or a chain a stop must be able to end); for tests and diagnostics. */
  get sitesKept(): number {
    return this.generation.size;
  }

  private fire(cmd: SteeringCommand, validFor: number): void {
    this.timers.delete(cmd.site);
    const now = this.now();
    if (this.closed || now >= cmd.validUntil!) {
      this.deps.status('expired');
      return;
    }
    const next: SteeringCommand = { ...cmd, validFrom: undefined, validUntil: this.nextValidUntil(cmd, validFor, now) };
    delete next.validFrom;
    const gen = this.generation.get(cmd.site);
    // A stop (or a newer signal) while this renewal is in flight ends the chain here.
    const superseded = () => this.closed || this.generation.get(cmd.site) !== gen;
    this.deps.send(next, cmd).then(
      (result) => {
        this.count++;
        if (superseded()) return;
        this.deps.status('renewed', next, result);
        this.schedule(next, now);
      },
      (err: Error) => {
        if (superseded()) return;
        if (isNotSteering(err)) return this.deps.status('not-steering', next, undefined, err);
        this.deps.warn(`renewal failed: ${err.message}`);
        this.deps.status('failed');
        // One more try while the current signal still holds; after that the site falls back.
        const retryAt = Math.min(this.now() + 5_000, cmd.validUntil! - 1_000);
        if (retryAt > this.now())
          this.timers.set(
            cmd.site,
            this.setTimer(() => this.fire(cmd, validFor), retryAt - this.now()),
          );
      },
    );
  }

  /** The next validUntil, clamped to now + maxValidity. */
  private nextValidUntil(cmd: SteeringCommand, validFor: number, now: number): number {
    const next = this.uncappedValidUntil(cmd, validFor, now);
    const cap = this.deps.maxValidityMs?.();
    return cap !== undefined && cap > 0 ? Math.min(next, now + cap) : next;
  }

  private uncappedValidUntil(cmd: SteeringCommand, validFor: number, now: number): number {
    const settings = this.deps.settings();
    if (settings.validity === 'quarter-hour') {
      const quarterEnd = quarterHourValidUntil(now);
      return quarterEnd > cmd.validUntil! ? quarterEnd : quarterEnd + QUARTER_HOUR_MS;
    }
    if (settings.validity === 'duration') return Math.max(now + settings.duration * MINUTE_MS, cmd.validUntil! + 1);
    return cmd.validUntil! + validFor;
  }
}

const steerTexts = english('ems-site-steer');

/**
 * What a command sets, for node status: "ESS −50 kW, curtailment 300 kW until 14:15", in the
 * language of `t` (the node's status texts; en-US by default).
 */
export function describeCommand(cmd: SteeringCommand, until = false, t: Translate = steerTexts): string {
  const parts: string[] = [];
  if (cmd.energyStorageSetting) parts.push(t('ess', { power: minus(cmd.energyStorageSetting) }));
  if (cmd.productionCurtailment) parts.push(t('curtailment', { power: formatPower(cmd.productionCurtailment) }));
  if (cmd.maximizeGridImport !== undefined) parts.push(t(cmd.maximizeGridImport ? 'maxImportOn' : 'maxImportOff'));
  if (cmd.gridTarget) parts.push(t('gridTarget', { power: minus(cmd.gridTarget.setpoint) }));
  const gridLimits = cmd.gridLimits;
  if (gridLimits?.upperLimit && gridLimits.lowerLimit)
    parts.push(t('gridLimits', { lower: minus(gridLimits.lowerLimit), upper: minus(gridLimits.upperLimit) }));
  else if (gridLimits?.upperLimit) parts.push(t('gridUpperLimit', { power: minus(gridLimits.upperLimit) }));
  else if (gridLimits?.lowerLimit) parts.push(t('gridLowerLimit', { power: minus(gridLimits.lowerLimit) }));
  if (cmd.kind === 'cancel-grid-target') parts.push(t('cancelGridTarget'));
  const text = parts.join(', ');
  return until ? withUntil(text, cmd, t) : text;
}

/** A command's description (describeCommand without `until`) with the end of its validity: "ESS −50 kW until 14:15". */
export function withUntil(text: string, cmd: SteeringCommand, t: Translate = steerTexts): string {
  return cmd.validUntil ? t('until', { what: text, time: formatClock(cmd.validUntil) }) : text;
}

/** A power with a typographic minus: "−50 kW" (no regular expression: this runs for every message's status). */
function minus(v: { value: number; unit: string }): string {
  const text = formatPower(v);
  return text.charCodeAt(0) === 45 /* '-' */ ? `−${text.slice(1)}` : text;
}
