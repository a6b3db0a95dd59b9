/**
 * The site planner's gridCharge and gridDischarge (false: never charge from the grid, never
 * discharge into it): a constructed case each, against the same day with them on; and the
 * refusal of anything but true or false. (The MILP check's days draw them too.)
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/protocol';
import { planBattery, planSite, type SitePlan } from '../../src/plan';

const HOUR_MS = 3_600_000;
const T0 = Date.UTC(2026, 5, 1);
const prices = (imp: number[], exp: number) =>
  imp.map((p, k) => ({ start: T0 + k * HOUR_MS, end: T0 + (k + 1) * HOUR_MS, importPrice: p, exportPrice: exp }));
const bat = (o: Record<string, unknown> = {}) => ({
  capacityKWh: 10,
  maxChargeKW: 5,
  maxDischargeKW: 5,
  socMin: 10,
  socMax: 90,
  efficiency: 0.81,
  soc: 10,
  ...o,
});

describe('site planner: gridCharge and gridDischarge', () => {
  it('gridCharge false: charges only from the PV surplus, where the same day with it on charges from the grid', () => {
    const day = { prices: prices([0.05, 0.05, 0.4], 0), pvForecast: [1500, 0, 0], loadForecast: [500, 500, 3000] };
    const on = planSite({ ...day, battery: bat() } as any);
    const off = planSite({ ...day, battery: bat({ gridCharge: false }) } as any);
    assert.ok(on.slots[1].chargeKW > 1, 'with grid charging it charges in the cheap slot without PV');
    off.slots.forEach((s) =>
      assert.ok(
        s.chargeKW <= Math.max(0, s.pvKW - s.loadKW) + 1e-9 && s.importKW * s.chargeKW === 0,
        `charges ${s.chargeKW} with ${s.importKW} kW import`,
      ),
    );
    assert.ok(Math.abs(off.slots[0].chargeKW - 1) <= 1e-9, 'stores the 1 kW surplus');
    assert.ok(off.cost.total > on.cost.total);
  });

  it('gridDischarge false: discharges at most the load net of PV, where the same day with it on exports a feed-in tariff above import', () => {
    const day = { prices: prices([0.3, 0.3], 0.35), loadForecast: [1000, 1000] };
    const on = planSite({ ...day, battery: bat({ soc: 90 }) } as any);
    const off = planSite({ ...day, battery: bat({ soc: 90, gridDischarge: false }) } as any);
    assert.ok(
      on.slots.some((s) => s.exportKW > 1),
      'sells the stored energy at 0.35',
    );
    off.slots.forEach((s) =>
      assert.ok(
        s.dischargeKW <= s.loadKW - s.pvKW + 1e-9 && s.exportKW === 0,
        `discharges ${s.dischargeKW}, exports ${s.exportKW}`,
      ),
    );
    assert.ok(off.slots.every((s: SitePlan['slots'][number]) => Math.abs(s.dischargeKW - 1) <= 1e-9));
  });

  it('planBattery routes either to the site planner; true (the default) keeps prices alone with the price-only planner', () => {
    const alone = {
      prices: [
        { start: T0, end: T0 + HOUR_MS, price: 0.1 },
        { start: T0 + HOUR_MS, end: T0 + 2 * HOUR_MS, price: 0.3 },
      ],
      battery: bat({ gridCharge: false }),
    };
    assert.equal((planBattery(alone as any) as SitePlan).model, 'site');
    assert.notEqual((planBattery({ ...alone, battery: bat() } as any) as SitePlan).model, 'site');
    assert.notEqual(
      (planBattery({ ...alone, battery: bat({ gridCharge: true, gridDischarge: true }) } as any) as SitePlan).model,
      'site',
    );
  });

  it('sellSocMin: below it the battery only serves the load; it sells only what lies above it', () => {
    // a feed-in tariff above import: sell everything, or, with a least SOC of 60 % before selling, only what is above 60 % (less the load's share)
    const day = { prices: prices([0.3, 0.3, 0.3], 0.35), loadForecast: [1000, 1000, 1000] };
    const on = planSite({ ...day, battery: bat({ soc: 90 }) } as any);
    const ruled = planSite({ ...day, battery: bat({ soc: 90, sellSocMin: 60 }) } as any);
    assert.ok(on.slots[2].socEnd < 15, `without the rule it sells down to socMin: ${on.slots[2].socEnd}`);
    ruled.slots.forEach((s) => {
      // a slot that sells (discharges beyond its load) leaves at least 60 % less the load's share of the slot
      if (s.dischargeKW > s.loadKW + 1e-9)
        assert.ok(s.socEnd >= 60 - (s.loadKW / 0.9 / 10) * 100 - 1e-6, `sells to ${s.socEnd} %`);
    });
    assert.ok(
      ruled.slots.some((s) => s.exportKW > 0),
      'it still sells what lies above 60 %',
    );
    assert.ok(ruled.slots[2].socEnd < 60, 'below 60 % it covers the load');
    assert.ok(ruled.cost.total > on.cost.total);
  });

  it('anything but true or false is refused, naming the field', () => {
    assert.throws(
      () => planSite({ prices: prices([0.1], 0), battery: bat({ gridCharge: 'no' }) } as any),
      (e: any) =>
        e instanceof ValidationError &&
        e.field === 'battery.gridCharge' &&
        /must be true or false; got "no"/.test(e.message),
    );
  });
});
