/**
 * Why the site plan does what it does in each slot: a short text from the plan itself (the
 * slot's prices, the slot that later uses what is charged or earlier filled what is
 * discharged, targets, limits, the peak). Pure: no I/O; times as HH:MM in the runtime's zone.
 */
import { formatClock } from '../protocol';
import type { SiteInput } from './site-input';
import type { SlotRun } from './slot-cost';

const num = (v: number, d: number) => String(Math.round(v * 10 ** d) / 10 ** d);

/** A price per kWh as text: EUR as ct (4.1 ct), ct as ct, other currencies after the number. */
function money(p: number, currency?: string): string {
  if (!currency || /^(eur|€)$/i.test(currency)) return currency ? `${num(p * 100, 1)} ct` : num(p, 4);
  if (/^(ct|cents?|c)$/i.test(currency)) return `${num(p, 1)} ct`;
  return `${num(p, 4)} ${currency}`;
}

const kw = (v: number) => `${num(v, 2)} kW`;

/** The reason of every slot. */
export function reasons(inp: SiteInput, runs: SlotRun[], e: Float64Array, cap: number): string[] {
  const { model: m, currency } = inp;
  const tol = 1e-6 * Math.max(1, m.battery.C, m.battery.D);
  const cur = (p: number) => money(p, currency);
  const at = (k: number) => formatClock(inp.start[k]);
  const charging = (k: number) => runs[k].c - runs[k].d > tol;
  const discharging = (k: number) => runs[k].d - runs[k].c > tol;
  /** What a kWh of the battery's output is worth in slot j: export it makes when the slot exports, else import it replaces. */
  const worth = (j: number) =>
    runs[j].x > tol ? { p: m.slots[j].px, what: 'export' } : { p: m.slots[j].pi, what: 'import' };
  const pctOf = (kWh: number) => num((kWh / inp.capacityKWh) * 100, 1);
  return runs.map((r, k) => {
    const slot = m.slots[k];
    const extra: string[] = [];
    if (r.u > tol) {
      const cause =
        slot.pi < 0
          ? `import is paid (${cur(slot.pi)})`
          : slot.px < 0
            ? `export costs (${cur(slot.px)})`
            : 'export limit';
      extra.push(`PV curtailed ${kw(r.u)} (${cause})`);
    }
    const tail = extra.length ? `; ${extra.join('; ')}` : '';
    if (charging(k)) {
      const fromPv = slot.pv - slot.load - r.u >= r.c - tol;
      const here = fromPv ? `export would pay ${cur(slot.px)}` : `import ${cur(slot.pi)}`;
      const head = `charging ${kw(r.c)} ${fromPv ? 'from PV' : 'from the grid'}`;
      let nextDischarge = k + 1;
      while (nextDischarge < runs.length && !discharging(nextDischarge)) nextDischarge++;
      const binding = (b: number) => e[b] <= m.lb[b] + 1e-6 * inp.capacityKWh;
      const target = inp.targets.find((t) => t.boundary > k && t.boundary <= nextDischarge && binding(t.boundary));
      if (target) return `${head}: to reach ${target.soc} % by ${formatClock(target.time)} (${target.field})${tail}`;
      if (nextDischarge < runs.length) {
        const nextWorth = worth(nextDischarge);
        return `${head}: ${here}, below the ${cur(nextWorth.p)} ${nextWorth.what === 'import' ? 'import it replaces' : 'export it makes'} at ${at(nextDischarge)}${tail}`;
      }
      if (inp.socEnd !== undefined && e[runs.length] <= m.lb[runs.length] + 1e-6 * inp.capacityKWh)
        return `${head}: to end at socEnd ${inp.socEnd} %${tail}`;
      if (slot.pi < 0 && !fromPv) return `${head}: import is paid (${cur(slot.pi)})${tail}`;
      if (m.endValue > 0)
        return `${head}: ${here}, below the ${cur(m.endValue)} a stored kWh is worth at the end${tail}`;
      return `${head}: ${here}${tail}`;
    }
    if (discharging(k)) {
      const slotWorth = worth(k);
      const head = `discharging ${kw(r.d)}`;
      if (m.peakCost > 0 && Number.isFinite(cap) && r.i >= cap - tol)
        return `${head}: holds import at the ${kw(cap)} peak (peakCost ${cur(m.peakCost)} per kW)${tail}`;
      if (r.i >= slot.imax - tol && slot.imax < Infinity)
        return `${head}: import at its limit (${kw(slot.imax)})${tail}`;
      let prevCharge = k - 1;
      while (prevCharge >= 0 && !charging(prevCharge)) prevCharge--;
      const gain =
        slotWorth.what === 'import' ? `replaces import at ${cur(slotWorth.p)}` : `exports at ${cur(slotWorth.p)}`;
      if (prevCharge >= 0) {
        const paid =
          m.slots[prevCharge].pv - m.slots[prevCharge].load - runs[prevCharge].u >= runs[prevCharge].c - tol
            ? m.slots[prevCharge].px
            : m.slots[prevCharge].pi;
        if (paid < slotWorth.p)
          return `${head}: ${gain}, above the ${cur(paid)} it was charged at (${at(prevCharge)})${tail}`;
      }
      return `${head}: ${gain}, more than the stored energy is worth later (endValue ${cur(m.endValue)})${tail}`;
    }
    const soc = e[k + 1];
    if (soc >= m.ub[k + 1] - 1e-6 * inp.capacityKWh) return `idle: battery full (${pctOf(soc)} %)${tail}`;
    if (soc <= m.lb[k + 1] + 1e-6 * inp.capacityKWh) return `idle: battery at its least SOC (${pctOf(soc)} %)${tail}`;
    return `idle: no later price pays for the losses and wear${tail}`;
  });
}
