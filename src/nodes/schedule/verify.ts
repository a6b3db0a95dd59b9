/**
 * The delivery check of `ems-schedule` (the check itself: runtime/delivery-check.ts, as site steer's
 * `verify` uses it): each accepted request opens, per component, one window per slot of its run, checked when
 * it ends, one report per slot on output 2. The next request for the same site and component ends the window
 * in progress; a stop lets the windows in force run to their end; a close or redeploy cancels them without a
 * report (the rules in users' words: docs/nodes/ems-schedule.md, "Delivery check"). Every timer is a
 * deadline on the node's SharedClock (one timer per node). Nothing here throws or rejects.
 */
import type { Asked, DeliveryComponent, DeliveryReport } from '../../protocol';
import {
  type CheckDevices,
  componentsOf,
  DeliveryCheck,
  type DeliveryCheckHook,
  type PlayRun,
  type Runtime,
  type SharedClock,
  type SteeringCommand,
} from '../../runtime';
import { endReplaced, MAX_OPEN, type NodeMessage, VerifyCommon, type VerifyDeps, warnNotStarted } from '../shared';

/** Site steer's (VerifyDeps), and the node's one timer. */
export interface ScheduleVerifyDeps extends VerifyDeps {
  clock: SharedClock;
}

/** One slot's window. */
interface SlotWindow {
  index: number;
  from: number;
  until: number;
}

const ROLES = ['battery', 'pv', 'meter'] as const;
const keyOf = (a: Asked) => JSON.stringify({ ...a, percentOfW: undefined });

/** The windows of one component of one request: one check at a time, the next opened as the one before ends. */
class SlotChain {
  check?: DeliveryCheck;
  private windowIndex = -1;
  private timer?: unknown;
  private stopped = false;

  constructor(
    readonly askedKey: string,
    readonly windows: SlotWindow[],
    private readonly clock: SharedClock,
    private readonly open: (slotWindow: SlotWindow) => DeliveryCheck,
    private readonly idle: () => void,
  ) {}

  /** The window in progress (its check open). */
  get window(): SlotWindow | undefined {
    return this.check?.active ? this.windows[this.windowIndex] : undefined;
  }

  /** Checks from the first window on; `kept`: its check is running already (taken over). */
  start(kept?: DeliveryCheck): void {
    if (this.stopped) return;
    if (!kept) return this.advance();
    this.windowIndex = 0;
    this.follow(kept);
  }

  private advance(): void {
    this.timer = undefined;
    if (this.stopped) return;
    this.windowIndex++;
    if (this.windowIndex >= this.windows.length) return this.idle();
    this.follow(this.open(this.windows[this.windowIndex]));
  }

  private follow(check: DeliveryCheck): void {
    this.check = check;
    const next = this.windows[this.windowIndex + 1];
    if (next) this.timer = this.clock.setTimeout(() => this.advance(), next.from - this.clock.now());
    else
      void check.done.then(() => {
        if (this.check === check) this.idle();
      });
  }

  /** No later window is opened; returns the check in progress (left running). */
  detach(): DeliveryCheck | undefined {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const check = this.check;
    this.check = undefined;
    return check;
  }

  /** A later request replaced the component at `now`: the window in progress reports up to now (endReplaced). */
  end(now: number): void {
    const check = this.detach();
    if (check?.active) endReplaced(check, now);
  }

  /** No report (the node closes). */
  cancel(): void {
    this.detach()?.cancel();
  }
}

export class ScheduleVerify implements DeliveryCheckHook {
  /** Per `site|component`, the windows of the request in force. */
  private readonly chains = new Map<string, SlotChain>();
  /** Per site, the devices of the schedule's message (a resumed schedule: without a message); the report. */
  private readonly common: VerifyCommon;
  /** The slot index each open check reports (a check taken over reports the new schedule's index). */
  private readonly slotOf = new WeakMap<DeliveryCheck, { index: number }>();
  private warned = false;
  private closed = false;
  /** The config node's runtime (known once a chain began: the request went through it). */
  private runtime?: Runtime;

  constructor(private readonly deps: ScheduleVerifyDeps) {
    this.common = new VerifyCommon(deps);
  }

  /** Components with a request being checked (tests, diagnostics). */
  get size(): number {
    return this.chains.size;
  }

  /** Resolves once every window opened so far has taken its first reading (tests). */
  async settled(): Promise<void> {
    await this.common.settled();
    await Promise.allSettled([...this.chains.values()].map((c) => c.check?.started));
  }

  /** The devices (TypedInputs) for `site`, with the schedule's message (`msg` types read it). */
  async prepare(site: string, msg?: NodeMessage): Promise<CheckDevices> {
    return this.common.evaluate(site, ROLES, msg);
  }

  /** A request of `run` was accepted (now): ends the windows it replaces, opens one per slot and component. */
  sent(run: PlayRun, cmd: SteeringCommand): void {
    if (!this.deps.settings.on || this.closed || this.deps.signal.aborted) return;
    try {
      const now = this.deps.clock.now();
      const { asked, ends } = componentsOf(cmd);
      const windows = run.slots
        .filter((s) => s.end > now)
        .map((slot) => ({
          index: slot.index,
          from: Math.max(slot.start, now),
          until: Math.min(slot.end, cmd.validUntil ?? slot.end),
        }));
      for (const component of ends) {
        const key = `${cmd.site}|${component}`;
        const componentAsked = asked.find((x) => x.component === component)?.asked;
        const prev = this.chains.get(key);
        const inProgress = prev?.window;
        // A request that asks the same thing until the same slot end (a new schedule whose slot in progress is
        // the one in force) keeps the window in progress, which then reports the new schedule's slot index.
        const same =
          componentAsked &&
          inProgress &&
          windows[0] &&
          prev!.askedKey === keyOf(componentAsked) &&
          inProgress.until === windows[0].until;
        const kept = same ? prev!.detach() : (prev?.end(now), undefined);
        const label = kept && this.slotOf.get(kept);
        if (label) label.index = windows[0].index;
        if (prev) this.chains.delete(key);
        if (!componentAsked || windows.length === 0) continue;
        if (this.chains.size >= MAX_OPEN) {
          if (!this.warned)
            this.deps.node.warn(
              `delivery check: more than ${MAX_OPEN} components checked at once; further ones are not checked`,
            );
          this.warned = true;
          kept?.cancel();
          continue;
        }
        const chain: SlotChain = new SlotChain(
          keyOf(componentAsked),
          windows,
          this.deps.clock,
          (win) => this.open(cmd.site, component, componentAsked, win),
          () => {
            if (this.chains.get(key) === chain) this.chains.delete(key);
          },
        );
        this.chains.set(key, chain);
        if (kept) chain.start(kept);
        else this.begin(chain, cmd.site, componentAsked);
      }
    } catch (e) {
      this.warn(e); // the request went out; its check must not fail it
    }
  }

  /** Starts a chain once its devices (and a `%` curtailment's PV power) are known. */
  private begin(chain: SlotChain, site: string, asked: Asked): void {
    const started = (async () => {
      this.runtime = await this.deps.runtime();
      if (!this.common.devices.has(site)) await this.prepare(site);
      if (asked.kind === 'max' && asked.value.unit === '%')
        asked.percentOfW = await this.common.pvPower(this.runtime, site);
      if (!this.closed) chain.start();
    })().catch((e) => this.warn(e));
    this.common.track(started);
  }

  private open(site: string, component: DeliveryComponent, asked: Asked, slotWindow: SlotWindow): DeliveryCheck {
    // No signal: close() cancels what is open (a listener per check on the node's signal would pile up).
    const label = { index: slotWindow.index };
    const check = new DeliveryCheck(
      {
        site,
        component,
        asked,
        from: slotWindow.from,
        until: slotWindow.until,
        devices: this.common.devices.get(site) ?? {},
      },
      this.runtime!,
      {
        tolerance: this.deps.settings.tolerance,
        clock: this.deps.clock,
        onReport: (r) => this.report(r, label.index),
      },
    );
    this.slotOf.set(check, label);
    return check;
  }

  private report(delivery: DeliveryReport, index: number): void {
    if (this.closed || this.deps.signal.aborted) return;
    this.common.report(delivery, { slots: [index] });
  }

  private warn(e: unknown): void {
    if (!this.closed) warnNotStarted(this.deps.node, e);
  }

  /** Cancels every open window (no report); nothing is checked after this. */
  close(): void {
    this.closed = true;
    for (const c of this.chains.values()) c.cancel();
    this.chains.clear();
    this.common.devices.clear();
  }
}
