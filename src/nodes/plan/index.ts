/**
 * `ems-plan` ("price plan"): the battery planner (src/plan, planBattery) as a node. Prices alone
 * go to the price-only planner, as before byte for byte; anything of the site model (import and
 * export prices or formulas, PV and load forecasts, grid limits, efficiencies, wear, a SOC target,
 * an end value, a peak cost: from the message or the node's settings) to the site planner. Pure:
 * no config node (so no `server`, and not the scaffold, which wants one), no I/O. A message of
 * prices and the current SOC becomes ONE message: `payload` the plan's slots as `ems-schedule`
 * takes them, `plan` the whole plan, `chart` series for a Dashboard 2 chart. `now` is the clock:
 * slots that ended are dropped, the one in progress starts now. Where each setting comes from,
 * and how a refusal names it: message.ts.
 *
 * With `replan` on (replan.ts) the node keeps the last prices and plans again at each
 * quarter hour, on a fresh SOC and on a delivery report that says no or partly, and sends only
 * what changed (`msg.replan` says what). One timer per node, cleared on close.
 */
import { type BatteryPlanInput, isSitePlan, planBattery, type PricePlan, scheduleSlots, type SitePlan } from '../../plan';
import { copyWith, type DoneFn, fail, fmt, type Node, type NodeMessage, type RED, type SendFn, Status, translator, upgrade } from '../shared';
import { chartOf } from './chart';
import { checkDefaults } from './check';
import { gather, located, round, socGiven, type Msg, type PlanProps } from './message';
import { Replanner, isDelivery, kindOf, notReplanning, readingOf, type Trigger } from './replan';

/** The status key of each trigger's name. */
const TRIGGER: Record<Trigger, string> = { input: 'triggerInput', soc: 'triggerSoc', timer: 'triggerTimer', delivery: 'triggerDelivery' };

export = function (RED: RED): void {
  function EmsPlanNode(this: Node, saved: PlanProps) {
    const type = 'ems-plan';
    upgrade(saved); // its saved properties, upgraded in place (version 2: the site model's settings and re-planning)
    RED.nodes.createNode(this, saved);
    const node = this;
    const config = saved;
    (node as unknown as { props: PlanProps }).props = config; // as the scaffold's nodes: the upgraded properties
    const status = new Status(node, translator(RED, type));
    const f = { node, status };
    const r = config.replan === true || config.replan === 'true' ? new Replanner() : undefined;
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
      return isSitePlan(plan) ? status.t('plannedSite', { count, cost: fmt(plan.cost.total), charged }) : status.t('planned', { count, value: fmt(plan.value), charged });
    }

    /** Without re-planning: one plan per message, all its slots. */
    function once(msg: NodeMessage, send: SendFn, done: DoneFn): void {
      let out: NodeMessage;
      let plan: PricePlan | SitePlan;
      try {
        if (isDelivery(msg)) throw notReplanning(msg);
        plan = planFrom(msg, Date.now()).plan;
        out = copyWith(msg, { payload: scheduleSlots(plan), plan, chart: chartOf(plan) });
      } catch (err) {
        fail(f, done, err, msg);
        return;
      }
      status.ok(summary(plan));
      send(out);
      done();
    }

    /** A re-plan: from `msg` (new prices) or the kept one; sends the changed slots, arms the timer. */
    function run(trigger: Trigger, send: SendFn, done?: DoneFn, msg?: NodeMessage): void {
      const rp = r!;
      const now = Date.now();
      const source = trigger === 'input' ? msg! : rp.kept!;
      let out: NodeMessage | undefined;
      let text: string;
      if (trigger === 'input' && !rp.socFor(now) && !socGiven(msg!)) {
        // prices before any SOC: kept, planned once a SOC comes
        rp.kept = msg;
        status.ended(status.t('waitingSoc'));
        done?.();
        return;
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
        const changed = rp.changed(slots, input);
        if (changed.length) {
          const first = changed[0];
          const base: NodeMessage = trigger === 'input' ? msg! : { ...rp.kept };
          if (trigger !== 'input') delete base._msgid; // a message of its own (Node-RED gives it an id)
          out = copyWith(base, {
            payload: slots.slice(first), plan, chart: chartOf(plan),
            replan: { trigger, at: now, soc: Number((input.battery as Msg).soc), socFrom, changed: changed.map((k) => k - first), slots: slots.length },
          });
          rp.handed(slots);
        }
        const what = status.t(TRIGGER[trigger]);
        text = trigger === 'input' ? summary(plan) : changed.length ? status.t('replanned', { trigger: what, changed: changed.length, count: slots.length }) : status.t('unchanged', { trigger: what });
      } catch (err) {
        if (trigger !== 'input' && rp.kept && endedAll(rp.kept, now)) {
          rp.ended();
          status.ended(status.t('ended'));
          done?.();
          return;
        }
        if (rp.kept) rp.arm(now, tick);
        fail(f, done, err, trigger === 'input' || trigger === 'timer' ? source : msg);
        return;
      }
      rp.arm(now, tick);
      status.ok(text);
      if (out) send(out);
      done?.();
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

    function tick(): void {
      if (r?.kept) run('timer', (m) => node.send(m as NodeMessage));
    }

    node.on('input', (msg: NodeMessage, send: SendFn, done: DoneFn) => {
      if (!r) {
        once(msg, send, done);
        return;
      }
      try {
        const kind = kindOf(msg);
        if (kind === 'delivery') {
          if (r.report(msg.payload as Msg) && r.kept) run('delivery', send, done, msg);
          else done();
          return;
        }
        if (kind === 'soc') {
          const [value, field] = readingOf(msg)!;
          const soc = r.read(value, field, Date.now());
          if (r.kept) run('soc', send, done, msg);
          else {
            status.ended(status.t('waiting', { soc: fmt(soc) }));
            done();
          }
          return;
        }
        run('input', send, done, msg);
      } catch (err) {
        fail(f, done, err, msg);
      }
    });

    node.on('close', (_removed: boolean, done: () => void) => {
      r?.close();
      status.close();
      done();
    });
  }

  RED.nodes.registerType('ems-plan', EmsPlanNode);
};
