/**
 * Site planner (src/plan/site-plan.ts) against an independent MILP (test/helpers/milp-site.ts:
 * HiGHS, with a binary per slot for charge-or-discharge and one for import-or-export), on 320
 * seeded days of a generator of its own (test/helpers/site-days.ts): the planner's cost is
 * within 0.01 % of the MILP's optimum on every day the MILP can plan, no further above it than
 * the certified gap it reports (msg.plan.solver.gap), and it refuses exactly the days the MILP
 * finds infeasible. Every plan is checked from its own output too: never
 * charging and discharging at once, never importing and exporting at once, the balance in every
 * slot, and the parts adding up to the total; with gridCharge or gridDischarge false, no charge
 * beyond the PV surplus and no discharge beyond the load net of PV.
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/protocol';
import { planSite, type SitePlan } from '../../src/plan';
import { makeDay, plannerInput, type RawDay } from '../helpers/site-days';
import { loadHighs, solveMilp } from '../helpers/milp-site';

const DAYS = 320;

function checkPhysics(d: RawDay, plan: SitePlan): void {
  plan.slots.forEach((s, k) => {
    const where = `seed ${d.seed} slot ${k}`;
    assert.ok(
      s.chargeKW <= 1e-9 || s.dischargeKW <= 1e-9,
      `${where}: charges ${s.chargeKW} and discharges ${s.dischargeKW} at once`,
    );
    assert.ok(
      s.importKW <= 1e-9 || s.exportKW <= 1e-9,
      `${where}: imports ${s.importKW} and exports ${s.exportKW} at once`,
    );
    const raw = d.slots[k];
    const balance = raw.pvKW - s.curtailKW + s.importKW + s.dischargeKW - raw.loadKW - s.exportKW - s.chargeKW;
    assert.ok(Math.abs(balance) <= 1e-6, `${where}: balance off by ${balance} kW`);
    assert.ok(
      s.curtailKW >= -1e-9 && s.curtailKW <= raw.pvKW + 1e-9,
      `${where}: curtails ${s.curtailKW} of ${raw.pvKW} kW`,
    );
    assert.ok(
      s.exportKW <= d.exportLimitKW + 1e-9,
      `${where}: exports ${s.exportKW} above the limit ${d.exportLimitKW}`,
    );
    if (!d.gridCharge)
      assert.ok(
        s.chargeKW <= Math.max(0, raw.pvKW - raw.loadKW) + 1e-9,
        `${where}: charges ${s.chargeKW} from the grid`,
      );
    if (!d.gridDischarge)
      assert.ok(
        s.dischargeKW <= Math.max(0, raw.loadKW - raw.pvKW) + 1e-9,
        `${where}: discharges ${s.dischargeKW} into the grid`,
      );
  });
  const cost = plan.cost;
  assert.ok(
    Math.abs(cost.import - cost.export + cost.wear + cost.peak - cost.endValue - cost.total) <=
      1e-9 * Math.max(1, Math.abs(cost.total)),
    `seed ${d.seed}: the parts do not add up`,
  );
}

describe('site planner: exact against an independent MILP (HiGHS, charge-or-discharge and import-or-export binaries)', function () {
  this.timeout(120_000);
  const kinds = new Map<string, number>();
  let planned = 0;
  let refused = 0;
  let exportAbove = 0;

  before(loadHighs);

  it(`plans ${DAYS} seeded days at the MILP's optimum (within 0.01 %) and refuses only those it finds infeasible`, () => {
    const far: string[] = [];
    const gapOff: string[] = [];
    for (let seed = 1; seed <= DAYS; seed++) {
      const day = makeDay(seed);
      for (const k of day.kinds) kinds.set(k, (kinds.get(k) ?? 0) + 1);
      if (day.slots.some((s) => s.px > s.pi)) exportAbove++;
      const milp = solveMilp(day);
      let plan: SitePlan | undefined;
      try {
        plan = planSite(plannerInput(day) as never);
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        assert.equal(
          milp.status,
          'infeasible',
          `seed ${seed} (${day.kinds.join(', ')}): refused (${err.message}) but the MILP plans it at ${milp.cost}`,
        );
        refused++;
        continue;
      }
      assert.equal(milp.status, 'optimal', `seed ${seed}: planned but the MILP finds no plan`);
      checkPhysics(day, plan);
      planned++;
      const tol = 1e-4 * Math.max(Math.abs(milp.cost), 0.01);
      if (!(Math.abs(plan.cost.total - milp.cost) <= tol))
        far.push(`seed ${seed} (${day.kinds.join(', ')}): planner ${plan.cost.total}, MILP ${milp.cost}`);
      // the certified gap is honest: the plan is no further above the optimum than it says (MILP gap 1e-9, rounding)
      if (!(plan.cost.total - milp.cost <= plan.solver.gap + 1e-8 * Math.max(1, Math.abs(milp.cost))))
        gapOff.push(`seed ${seed}: planner ${plan.cost.total}, MILP ${milp.cost}, gap ${plan.solver.gap}`);
    }
    assert.deepEqual(far, []);
    assert.deepEqual(gapOff, [], 'a plan further from the optimum than its certified gap');
    assert.ok(planned >= 300, `only ${planned} days planned`);
  });

  it('the days cover every kind the check is for', () => {
    for (const k of [
      'negative midday',
      'feed-in tariff',
      'negative export',
      'zero export',
      'tight export',
      'peak',
      'peak so far',
      'target',
      'socEnd',
      'cycle cost',
      'end value',
      'mixed slots',
      'no grid charge',
      'no grid discharge',
      'least SOC before selling',
    ]) {
      assert.ok((kinds.get(k) ?? 0) >= 15, `only ${kinds.get(k) ?? 0} days of ${k}`);
    }
    assert.ok(exportAbove >= 60, `only ${exportAbove} days with an export price above the import price`);
    assert.ok(refused <= 20, `${refused} days refused`);
  });
});
