/**
 * `ems-plan` ("price plan"): the battery planner (src/plan, planBattery) as a node. Prices alone
 * go to the price-only planner, as before byte for byte; anything of the site model (import and
 * export prices or formulas, PV and load forecasts, grid limits, efficiencies, wear, a SOC target,
 * an end value, a peak cost: from the message or the node's settings) to the site planner. Pure:
 * no config node (the scaffold's `configNode: false`: no `server`), no I/O. A message of
 * prices and the current SOC becomes ONE message: `payload` the plan's slots as `ems-schedule`
 * takes them, `plan` the whole plan, `chart` series for a Dashboard 2 chart. `now` is the clock:
 * slots that ended are dropped, the one in progress starts now. Where each setting comes from,
 * and how a refusal names it: message.ts.
 *
 * With `replan` on (replan.ts) the node keeps the last prices and plans again at each
 * quarter hour, on a fresh SOC and on a delivery report that says no or partly, and sends only
 * what changed (`msg.replan` says what). One timer per node, cleared on close.
 */
import type { BatteryPlanInput, PricePlan, SitePlan } from '../../plan';
import { copyWith, fail, flowNode, fmt, lazyFunctions, type Node, type NodeMessage, type RED } from '../shared';
import { chartOf } from './chart';
import { checkDefaults } from './check';
import { gather, located, round, socGiven, type Msg, type PlanProps } from './message';
import { Replanner, isDelivery, kindOf, notReplanning, readingOf, type Trigger } from './replan';

// The planner (a dozen modules) loads on the node's first plan, not while Node-RED starts.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const planner = lazyFunctions(() => require('../../plan') as typeof import('../../plan'));
const handOn = planner('handOn');
const isSitePlan = planner('isSitePlan');
const planBattery = planner('planBattery');
const scheduleSlots = planner('scheduleSlots');

/** The status key of each trigger's name. */
const TRIGGER: Record<Trigger, string> = {
  input: 'triggerInput',
  soc: 'triggerSoc',
  timer: 'triggerTimer',
  delivery: 'triggerDelivery',
};

export = function (RED: RED): void {
  function EmsPlanNode(this: Node, saved: PlanProps) {
    // Its saved properties upgraded in place (version 2: the site model's settings and re-planning; 3: idle; 4: grid charge and discharge); no config node.
    const f = flowNode(RED, this, saved, { configNode: false });
    const { props: config, status } = f;
    const r = config.replan === true || config.replan === 'true' ? new Replanner() : undefined;
    const leaveIdle = config.idle === 'self-consumption';

    /** The slots left to the site (idle: self-consumption, a site plan with forecasts), else undefined: every slot steered. */
    function idleOf(plan: PricePlan | SitePlan): boolean[] | undefined {
      return leaveIdle && isSitePlan(plan) && plan.slots.some((s) => s.selfConsumption)
        ? plan.slots.map((s) => s.selfConsumption)
        : undefined;
    }

    /** The messages that hand on `slots` from `first`: the schedule (or `stop`), after a `stop` when the old schedule must not go on. */
    function handed(
      base: NodeMessage,
      slots: ReturnType<typeof scheduleSlots>,
      idle: boolean[] | undefined,
      first: number,
      fields: (index: number[]) => NodeMessage,
    ): NodeMessage[] {
      const h = handOn(slots, idle, first);
      const out = copyWith(base, { ...fields(h.index), payload: h.payload });
      return h.stopFirst ? [{ topic: base.topic, payload: 'stop' }, out] : [out];
    }
    // The node's own settings are checked once, at deploy (a bad one is reported, and refused again per message that uses it).
    try {
      checkDefaults(config);
    } catch (err) {
      fail(f, undefined, err);
    }

    /** Plans from a message; `soc` (first, with `socFirst`) the SOC the node keeps. */
    function planFrom(msg: Msg, now: number, soc?: { value: number; from: string }, socFirst = false) {
      const g = gather(msg, config, now, soc, socFirst);
      let plan: PricePlan | SitePlan;
      try {
        plan = planBattery({ ...g.input, now } as unknown as BatteryPlanInput);
      } catch (err) {
        throw located(err, g.from);
      }
      return { plan, ...g };
    }

    /** The status text of a plan: its slots, value (price plan) or cost (site plan), and the energy charged. */
    function summary(plan: PricePlan | SitePlan): string {
      const count = plan.slots.length;
      const charged = fmt(round(plan.chargedKWh, 1));
      return isSitePlan(plan)
        ? status.t('plannedSite', { count, cost: fmt(plan.cost.total), charged })
        : status.t('planned', { count, value: fmt(plan.value), charged });
    }

    /** Without re-planning: one plan per message, all its slots. */
    function once(msg: NodeMessage): NodeMessage[] {
      if (isDelivery(msg)) throw notReplanning(msg);
      const { plan } = planFrom(msg, Date.now());
      const out = handed(msg, scheduleSlots(plan), idleOf(plan), 0, () => ({ plan, chart: chartOf(plan) }));
      status.ok(summary(plan));
      return out;
    }

    /** A re-plan: from `msg` (new prices) or the kept one; answers the changed slots (none: no message), arms the timer; throws when it fails. */
    function run(trigger: Trigger, msg?: NodeMessage): NodeMessage[] | undefined {
      const rp = r!;
      const now = Date.now();
      const source = trigger === 'input' ? msg! : rp.kept!;
      let out: NodeMessage[] = [];
      let text: string;
      if (trigger === 'input' && !rp.socFor(now) && !socGiven(msg!)) {
        // prices before any SOC: kept, planned once a SOC comes
        rp.kept = msg;
        status.ended(status.t('waitingSoc'));
        return undefined;
      }
      try {
        const { plan, input, from } = planFrom(source, now, rp.socFor(now), trigger !== 'input');
        const socFrom = from['battery.soc'].startsWith('msg.') ? 'message' : from['battery.soc'];
        if (trigger === 'input') {
          if (socFrom === 'message') rp.read((input.battery as Msg).soc, from['battery.soc'], now);
          rp.kept = msg;
        }
        rp.planned(input, plan.soc, now);
        const slots = scheduleSlots(plan);
        const idle = idleOf(plan);
        const changed = rp.changed(slots, input, idle);
        if (changed.length) {
          const base: NodeMessage = trigger === 'input' ? msg! : { ...rp.kept };
          if (trigger !== 'input') delete base._msgid; // a message of its own (Node-RED gives it an id)
          const soc = Number((input.battery as Msg).soc);
          out = handed(base, slots, idle, changed[0], (index) => ({
            plan,
            chart: chartOf(plan),
            replan: {
              trigger,
              at: now,
              soc,
              socFrom,
              changed: index.flatMap((k, j) => (changed.includes(k) ? [j] : [])),
              slots: slots.length,
              ...(idle ? { selfConsumption: idle.filter(Boolean).length } : {}),
            },
          }));
          rp.handed(slots, idle);
        }
        const what = status.t(TRIGGER[trigger]);
        text =
          trigger === 'input'
            ? summary(plan)
            : changed.length
              ? status.t('replanned', { trigger: what, changed: changed.length, count: slots.length })
              : status.t('unchanged', { trigger: what });
      } catch (err) {
        if (trigger !== 'input' && rp.kept && endedAll(rp.kept, now)) {
          rp.ended();
          status.ended(status.t('ended'));
          return undefined;
        }
        if (rp.kept) rp.arm(now, tick);
        throw err;
      }
      rp.arm(now, tick);
      status.ok(text);
      return out;
    }

    /** Whether every kept price slot has ended (the plan is over: no error, no timer, until new prices come). */
    function endedAll(kept: Msg, now: number): boolean {
      try {
        const { until } = gather(kept, config, now, { value: 50, from: 'plan' }, true);
        return until !== undefined && until <= now;
      } catch {
        return false;
      }
    }

    /** The quarter-hour re-plan: a message of the node's own; a failure reaches Catch nodes with the kept message. */
    function tick(): void {
      if (r?.kept) f.emit(() => run('timer'), r.kept);
    }

    // Synchronous: each message is answered (or refused) before the next one is taken.
    f.onInput((msg) => {
      if (!r) return once(msg);
      const kind = kindOf(msg);
      if (kind === 'delivery') return r.report(msg.payload as Msg) && r.kept ? run('delivery', msg) : undefined;
      if (kind === 'soc') {
        const [value, field] = readingOf(msg)!;
        const soc = r.read(value, field, Date.now());
        if (r.kept) return run('soc', msg);
        status.ended(status.t('waiting', { soc: fmt(soc) }));
        return undefined;
      }
      return run('input', msg);
    });

    f.onClose(() => r?.close());
  }

  RED.nodes.registerType('ems-plan', EmsPlanNode);
};
