/** price slots, a battery and the plan checks shared by the price-plan tests (from plan-prices). */
import assert from 'node:assert/strict';
import type { PricePlan } from '../../src/plan';

export const HOUR_MS = 3_600_000;
export const QUARTER_MS = 900_000;
export const T0 = Date.UTC(2026, 5, 1);

/** Contiguous slots of `lenMs` from T0 with these prices. */
export const slotsOf = (prices: number[], lenMs = HOUR_MS, t0 = T0) =>
  prices.map((price, k) => ({ start: t0 + k * lenMs, end: t0 + (k + 1) * lenMs, price }));

export const battery = (o: Record<string, number> = {}) => ({
  capacityKWh: 100,
  maxChargeKW: 50,
  maxDischargeKW: 50,
  socMin: 5,
  socMax: 95,
  efficiency: 0.9,
  soc: 50,
  ...o,
});

/** The limits every plan keeps: SOC window, power, losses, value, the schedule slot shape. */
export function checkLimits(input: any, plan: PricePlan): void {
  const storage = {
    maxDischargeKW: input.battery.maxChargeKW,
    socMin: 0,
    socMax: 100,
    efficiency: 0.9,
    ...input.battery,
  };
  const root = Math.sqrt(storage.efficiency);
  const tol = 1e-9 * Math.max(1, storage.capacityKWh);
  const per = /mwh$/i.test(input.priceUnit ?? '') ? 1 / 1000 : 1;
  let value = 0;
  let soc = storage.soc;
  for (const s of plan.slots) {
    assert.deepEqual(Object.keys(s.energyStorage).sort(), ['unit', 'value']);
    assert.equal(s.energyStorage.unit, 'kW');
    assert.ok(typeof s.start === 'number' && typeof s.end === 'number' && s.end > s.start);
    const hours = (s.end - s.start) / HOUR_MS;
    const powerKW = s.energyStorage.value;
    assert.ok(
      powerKW <= storage.maxDischargeKW * (1 + 1e-12) && -powerKW <= storage.maxChargeKW * (1 + 1e-12),
      `power ${powerKW} within -${storage.maxChargeKW}..${storage.maxDischargeKW}`,
    );
    assert.ok(Math.abs(s.energyKWh - powerKW * hours) <= tol, 'energy = power × time');
    // losses: charging stores √eff of the grid energy, discharging takes 1/√eff of it
    const storedDelta = s.energyKWh < 0 ? -s.energyKWh * root : -s.energyKWh / root;
    assert.ok(Math.abs(s.socStart - soc) <= 1e-9, 'SOC continues');
    assert.ok(
      Math.abs(((s.socEnd - s.socStart) / 100) * storage.capacityKWh - storedDelta) <=
        1e-6 * Math.max(1, Math.abs(storedDelta)),
      `stored energy change ${storedDelta}`,
    );
    const inside = (x: number) => x >= storage.socMin - 1e-9 && x <= storage.socMax + 1e-9;
    assert.ok(
      inside(s.socEnd) ||
        (s.socEnd < storage.socMin && s.socEnd >= s.socStart - 1e-9) ||
        (s.socEnd > storage.socMax && s.socEnd <= s.socStart + 1e-9),
      `SOC ${s.socEnd} in [${storage.socMin}, ${storage.socMax}] or towards it`,
    );
    soc = s.socEnd;
    value += s.price * per * s.energyKWh;
  }
  assert.ok(Math.abs(value - plan.value) <= 1e-9 * Math.max(1, Math.abs(value)), 'value = Σ price × energy');
  if (input.socEnd !== undefined)
    assert.ok(
      soc >= input.socEnd - (plan.stepKWh / storage.capacityKWh) * 100 - 1e-9,
      `end SOC ${soc} ≥ socEnd ${input.socEnd} (within a step)`,
    );
}
