/**
 * Chart series of a plan for a Dashboard 2 chart (`msg.chart` of the `ems-plan` node): lists of
 * `{x: epoch ms, y}` points. Pure.
 */
import type { PricePlan, SitePlan } from '../../plan';
import { round } from './message';

type Points = Array<{ x: number; y: number }>;
export interface PlanChart {
  soc: Points;
  power: Points;
  price: Points;
  /** Site plans: the planned grid power, kW (+ import, − export). */
  grid?: Points;
}

/**
 * SOC % at each point of the curve; power (kW, + discharge), price (and, for a site plan, grid
 * power in kW, + import) as steps: a point at each slot's start and end; power and grid 0 in a gap.
 */
export function chartOf(plan: PricePlan | SitePlan): PlanChart {
  const site = (plan as SitePlan).model === 'site' ? (plan as SitePlan) : undefined;
  const power: Points = [];
  const price: Points = [];
  const grid: Points = [];
  plan.slots.forEach((slot, k) => {
    const prev = plan.slots[k - 1];
    if (prev && prev.end !== slot.start) {
      power.push({ x: prev.end, y: 0 }, { x: slot.start, y: 0 });
      if (site) grid.push({ x: prev.end, y: 0 }, { x: slot.start, y: 0 });
    }
    const kw = round(slot.energyStorage.value, 3);
    power.push({ x: slot.start, y: kw }, { x: slot.end, y: kw });
    price.push({ x: slot.start, y: slot.price }, { x: slot.end, y: slot.price });
    if (site) {
      const gridKW = round(site.slots[k].gridKW, 3);
      grid.push({ x: slot.start, y: gridKW }, { x: slot.end, y: gridKW });
    }
  });
  const chart: PlanChart = { soc: plan.soc.map((p) => ({ x: p.time, y: round(p.soc, 2) })), power, price };
  if (site) chart.grid = grid;
  return chart;
}
