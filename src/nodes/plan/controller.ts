/**
 * What an `ems-plan` node does with a message (index.ts wires it). Without re-planning: one plan
 * per message, all its slots. With `replan` on: the Replanner (replan.ts) keeps the last prices
 * and the SOC, and each trigger (new prices, a fresh SOC, a delivery report that says no or
 * partly, the quarter-hour timer) plans again and sends only what changed. Synchronous: each
 * message is answered (or refused) before the next one is taken.
 */
import type { BatteryPlanInput, PricePlan, SitePlan } from '../../plan';
import { copyWith, fail, type FlowNode, fmt, lazyFunctions, type NodeMessage } from '../shared';
import { chartOf } from './chart';
import { checkDefaults } from './check';
import { located } from './located';

// The planner (a dozen modules) loads on the node's first plan, not while Node-RED starts.
const planner = lazyFunctions(() => require('../../plan') as typeof import('../../plan'));
const handOn = planner('handOn');
const isSitePlan = planner('isSitePlan');
const planBattery = planner('planBattery');
const scheduleSlots = planner('scheduleSlots');
import type { PlanProps } from './fields';
import { gather, round, socGiven, type Msg } from './message';
import { Replanner, isDelivery, kindOf, notReplanning, readingOf, type Trigger } from './replan';

/** The status key of each trigger's name. */
const TRIGGER: Record<Trigger, string> = {
  input: 'triggerInput',
  soc: 'triggerSoc',
  timer: 'triggerTimer',
  delivery: 'triggerDelivery',
};

type Plan = PricePlan | SitePlan;
type Slots = ReturnType<typeof scheduleSlots>;

/** A plan made on a trigger, with what it hands on. */
interface Replanned {
  trigger: Trigger;
  now: number;
  plan: Plan;
  input: Msg;
  slots: Slots;
  idle: boolean[] | undefined;
  /** The indices of the slots that changed. */
  changed: number[];
  /** Where the SOC came from: 'message', or the name of the source the node keeps. */
  socFrom: string;
}

export class PlanController {
  private readonly config: PlanProps;
  /** The re-planning state (kept prices, SOC, timer), when `replan` is on. */
  private readonly replanner: Replanner | undefined;
  /** Slots whose battery just follows PV and load are left to the site (idle: self-consumption). */
  private readonly leaveIdle: boolean;

  constructor(private readonly flow: FlowNode<PlanProps>) {
    this.config = flow.props;
    this.replanner = this.config.replan === true || this.config.replan === 'true' ? new Replanner() : undefined;
    this.leaveIdle = this.config.idle === 'self-consumption';
    // The node's own settings are checked once, at deploy (a bad one is reported, and refused again per message that uses it).
    try {
      checkDefaults(this.config);
    } catch (err) {
      fail(flow, undefined, err);
    }
  }

  onInput(msg: NodeMessage): NodeMessage[] | undefined {
    const replanner = this.replanner;
    if (!replanner) return this.once(msg);
    const kind = kindOf(msg);
    if (kind === 'delivery')
      return replanner.report(msg.payload as Msg) && replanner.kept ? this.run('delivery', msg) : undefined;
    if (kind === 'soc') {
      const [value, field] = readingOf(msg)!;
      const soc = replanner.read(value, field, Date.now());
      if (replanner.kept) return this.run('soc', msg);
      this.flow.status.ended(this.flow.status.t('waiting', { soc: fmt(soc) }));
      return undefined;
    }
    return this.run('input', msg);
  }

  onClose(): void {
    this.replanner?.close();
  }

  /** The slots left to the site (idle: self-consumption, a site plan with forecasts), else undefined: every slot steered. */
  private idleOf(plan: Plan): boolean[] | undefined {
    return this.leaveIdle && isSitePlan(plan) && plan.slots.some((s) => s.selfConsumption)
      ? plan.slots.map((s) => s.selfConsumption)
      : undefined;
  }

  /** The messages that hand on `slots` from `first`: the schedule (or `stop`), after a `stop` when the old schedule must not go on. */
  private handed(
    base: NodeMessage,
    slots: Slots,
    idle: boolean[] | undefined,
    first: number,
    fields: (index: number[]) => NodeMessage,
  ): NodeMessage[] {
    const handing = handOn(slots, idle, first);
    const out = copyWith(base, { ...fields(handing.index), payload: handing.payload });
    return handing.stopFirst ? [{ topic: base.topic, payload: 'stop' }, out] : [out];
  }

  /** Plans from a message; `soc` (first, with `socFirst`) the SOC the node keeps. */
  private planFrom(msg: Msg, now: number, soc?: { value: number; from: string }, socFirst = false) {
    const gathered = gather(msg, this.config, now, soc, socFirst);
    let plan: Plan;
    try {
      plan = planBattery({ ...gathered.input, now } as unknown as BatteryPlanInput);
    } catch (err) {
      throw located(err, gathered.from);
    }
    return { plan, ...gathered };
  }

  /** The status text of a plan: its slots, value (price plan) or cost (site plan), and the energy charged. */
  private summary(plan: Plan): string {
    const { t } = this.flow.status;
    const count = plan.slots.length;
    const charged = fmt(round(plan.chargedKWh, 1));
    return isSitePlan(plan)
      ? t('plannedSite', { count, cost: fmt(plan.cost.total), charged })
      : t('planned', { count, value: fmt(plan.value), charged });
  }

  /** Without re-planning: one plan per message, all its slots. */
  private once(msg: NodeMessage): NodeMessage[] {
    if (isDelivery(msg)) throw notReplanning(msg);
    const { plan } = this.planFrom(msg, Date.now());
    const out = this.handed(msg, scheduleSlots(plan), this.idleOf(plan), 0, () => ({ plan, chart: chartOf(plan) }));
    this.flow.status.ok(this.summary(plan));
    return out;
  }

  /** A re-plan: from `msg` (new prices) or the kept one; answers the changed slots (none: no message), arms the timer; throws when it fails. */
  private run(trigger: Trigger, msg?: NodeMessage): NodeMessage[] | undefined {
    const replanner = this.replanner!;
    const { status } = this.flow;
    const now = Date.now();
    if (trigger === 'input' && !replanner.socFor(now) && !socGiven(msg!)) {
      // prices before any SOC: kept, planned once a SOC comes
      replanner.kept = msg;
      status.ended(status.t('waitingSoc'));
      return undefined;
    }
    let out: NodeMessage[];
    let text: string;
    try {
      const made = this.replan(trigger, now, msg);
      out = made.changed.length ? this.changedMessages(made, msg) : [];
      text = this.replanText(made);
    } catch (err) {
      if (trigger !== 'input' && replanner.kept && this.endedAll(replanner.kept, now)) {
        replanner.ended();
        status.ended(status.t('ended'));
        return undefined;
      }
      if (replanner.kept) replanner.arm(now, this.tick);
      throw err;
    }
    replanner.arm(now, this.tick);
    status.ok(text);
    return out;
  }

  /** Plans on `trigger` from `msg` (new prices) or the kept message, and records the plan with the Replanner. */
  private replan(trigger: Trigger, now: number, msg?: NodeMessage): Replanned {
    const replanner = this.replanner!;
    const source = trigger === 'input' ? msg! : replanner.kept!;
    const { plan, input, from } = this.planFrom(source, now, replanner.socFor(now), trigger !== 'input');
    const socFrom = from['battery.soc'].startsWith('msg.') ? 'message' : from['battery.soc'];
    if (trigger === 'input') {
      if (socFrom === 'message') replanner.read((input.battery as Msg).soc, from['battery.soc'], now);
      replanner.kept = msg;
    }
    replanner.planned(input, plan.soc, now);
    const slots = scheduleSlots(plan);
    const idle = this.idleOf(plan);
    const changed = replanner.changed(slots, input, idle);
    return { trigger, now, plan, input, slots, idle, changed, socFrom };
  }

  /** The messages handing on the changed slots (on the input message, or a message of the node's own), with `replan` saying what changed. */
  private changedMessages(made: Replanned, msg?: NodeMessage): NodeMessage[] {
    const replanner = this.replanner!;
    const { trigger, plan, slots, idle, changed } = made;
    const base: NodeMessage = trigger === 'input' ? msg! : { ...replanner.kept };
    if (trigger !== 'input') delete base._msgid; // a message of its own (Node-RED gives it an id)
    const soc = Number((made.input.battery as Msg).soc);
    const out = this.handed(base, slots, idle, changed[0], (index) => ({
      plan,
      chart: chartOf(plan),
      replan: {
        trigger,
        at: made.now,
        soc,
        socFrom: made.socFrom,
        changed: index.flatMap((k, j) => (changed.includes(k) ? [j] : [])),
        slots: slots.length,
        ...(idle ? { selfConsumption: idle.filter(Boolean).length } : {}),
      },
    }));
    replanner.handed(slots, idle);
    return out;
  }

  /** The status text of a re-plan: the plan's summary on new prices, else what changed and why. */
  private replanText(made: Replanned): string {
    const { t } = this.flow.status;
    if (made.trigger === 'input') return this.summary(made.plan);
    const what = t(TRIGGER[made.trigger]);
    return made.changed.length
      ? t('replanned', { trigger: what, changed: made.changed.length, count: made.slots.length })
      : t('unchanged', { trigger: what });
  }

  /** Whether every kept price slot has ended (the plan is over: no error, no timer, until new prices come). */
  private endedAll(kept: Msg, now: number): boolean {
    try {
      const { until } = gather(kept, this.config, now, { value: 50, from: 'plan' }, true);
      return until !== undefined && until <= now;
    } catch {
      return false;
    }
  }

  /** The quarter-hour re-plan: a message of the node's own; a failure reaches Catch nodes with the kept message. */
  private readonly tick = (): void => {
    if (this.replanner?.kept) this.flow.emit(() => this.run('timer'), this.replanner.kept);
  };
}
