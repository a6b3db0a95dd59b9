/**
 * The site planner's peak search (src/plan/peak-search.ts) on the MILP check's seeded days
 * (test/helpers/site-days.ts) that have a peak cost, many with the never-both rules binding (a
 * feed-in tariff above the import price, negative prices): the certified gap it reports
 * (msg.plan.solver.gap) is within 1e-6 of the plan's cost on every such day, reached in a
 * bounded number of DP passes (the branch and bound closes intervals of the peak level with a
 * Lagrangian bound, not only with the monotone one). The cost itself is checked against the MILP
 * in site-plan-milp.test.ts; this test needs no solver.
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/protocol';
import { planSite, type SitePlan } from '../../src/plan';
import { makeDay, plannerInput } from '../helpers/site-days';

describe('site planner: the peak search certifies its gap', function () {
  this.timeout(60_000);

  it('within 1e-6 of the cost on every seeded day with a peak cost, in at most 100 DP passes', () => {
    let days = 0;
    let bound = 0;
    const far: string[] = [];
    for (let seed = 1; seed <= 320; seed++) {
      const day = makeDay(seed);
      let plan: SitePlan;
      try {
        plan = planSite(plannerInput(day) as never);
      } catch (err) {
        if (err instanceof ValidationError) continue;
        throw err;
      }
      if (!(plan.cost.peak > 0)) continue;
      days++;
      if (day.slots.some((s) => s.px > s.pi || s.pi < 0)) bound++;
      const { gap, passes } = plan.solver;
      if (!(gap <= 1e-6 * Math.max(1, Math.abs(plan.cost.total))) || passes > 100)
        far.push(`seed ${seed} (${day.kinds.join(', ')}): gap ${gap}, ${passes} passes`);
    }
    assert.ok(days >= 80, `only ${days} days with a peak cost`);
    assert.ok(bound >= 20, `only ${bound} of them with an export price above the import price or a negative price`);
    assert.deepEqual(far, []);
  });
});
