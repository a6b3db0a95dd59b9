/**
 * `ems-plan` ("price plan"): the price → battery planner (src/plan, planFromPrices) as a node.
 * Pure: no config node (so no `server`, and not the scaffold, which wants one), no I/O. A
 * message of prices and the current SOC becomes ONE message: `payload` the plan's slots (ready
 * for `ems-schedule`), `plan` the whole plan (SOC curve, value, energy), `chart` series of
 * `{x, y}` points for a Dashboard 2 chart. `now` is the clock: slots that ended are dropped, the
 * one in progress starts now. Where each setting comes from, and how a refusal names it:
 * plan-message.ts.
 */
import { planFromPrices, type PricePlan, type PricePlanInput } from '../plan';
import { copyWith, fail } from './messages';
import { upgrade } from './migrations';
import { chartOf, checkDefaults, gather, located, round, type PlanProps } from './plan-message';
import { Status, fmt, translator } from './status';
import type { DoneFn, Node, NodeMessage, RED, SendFn } from './red';

export = function (RED: RED): void {
  function EmsPlanNode(this: Node, saved: PlanProps) {
    const type = 'ems-plan';
    upgrade(saved); // its saved properties, upgraded in place (no steps yet: version 1)
    RED.nodes.createNode(this, saved);
    const node = this;
    const config = saved;
    const status = new Status(node, translator(RED, type));
    const f = { node, status };
    // The node's own settings are checked once, at deploy (a bad one is reported, and refused again per message that uses it).
    try {
      checkDefaults(config);
    } catch (err) {
      fail(f, undefined, err);
    }

    node.on('input', (msg: NodeMessage, send: SendFn, done: DoneFn) => {
      let out: NodeMessage;
      let plan: PricePlan;
      try {
        const { input, from } = gather(msg, config);
        try {
          plan = planFromPrices({ ...input, now: Date.now() } as unknown as PricePlanInput);
        } catch (err) {
          throw located(err, from);
        }
        out = copyWith(msg, { payload: plan.slots, plan, chart: chartOf(plan) });
      } catch (err) {
        fail(f, done, err, msg);
        return;
      }
      status.ok(status.t('planned', { count: plan.slots.length, value: fmt(plan.value), charged: fmt(round(plan.chargedKWh, 1)) }));
      send(out);
      done();
    });

    node.on('close', (_removed: boolean, done: () => void) => {
      status.close();
      done();
    });
  }

  RED.nodes.registerType('ems-plan', EmsPlanNode);
};
