/**
 * Re-planning (model-predictive control), the pure part: a plan's slots in the shape
 * the `ems-schedule` node takes, which slots of a new plan differ from the plan handed on before,
 * the SOC a plan expects at an instant, and how far delivery reports say the battery is from
 * it. The ems-plan node (src/nodes/plan/replan.ts) keeps the inputs and re-plans; this file has
 * no clock and no Node-RED.
 */
import { HOUR_MS } from '../protocol';
import type { PricePlan } from './price-plan';
import type { SitePlan } from './site-plan';

/** A slot as `ems-schedule` takes it (its slot fields and the planner's fields it accepts). */
export interface ScheduleSlot {
  start: number;
  end: number;
  energyStorage: { value: number; unit: 'kW' };
  price: number;
  energyKWh: number;
  socStart: number;
  socEnd: number;
}

/** The plan's slots as `ems-schedule` takes them: a price plan's own slots (the same array), a site plan's without the fields the schedule refuses. */
export function scheduleSlots(plan: PricePlan | SitePlan): ScheduleSlot[] {
  if ((plan as SitePlan).model !== 'site') return (plan as PricePlan).slots;
  return (plan as SitePlan).slots.map((s) => ({
    start: s.start,
    end: s.end,
    energyStorage: s.energyStorage,
    price: s.price,
    energyKWh: s.energyKWh,
    socStart: s.socStart,
    socEnd: s.socEnd,
  }));
}

/** Below this difference (kW) a slot's power counts as unchanged: 1 % of the battery's power, at least 10 W. */
export function changeTolerance(maxKW: number): number {
  return Math.max(0.01, 0.01 * (Number.isFinite(maxKW) ? maxKW : 0));
}

/**
 * The indices of `next`'s slots that differ from `prev` (the slots handed on before): a slot
 * is matched by its end (the slot in progress starts later in a re-plan, never earlier) and
 * changed when there is none, it starts earlier than that one, or its power differs by more
 * than `tolKW`. Without `prev` every slot is changed. With `idle` (which slots of each are left
 * to the site's own control, ems-plan's `idle: self-consumption`), a slot is also changed when
 * it is left to the site in one and steered in the other, and two left to the site never differ.
 */
export function changedSlots(
  prev: readonly ScheduleSlot[] | undefined,
  next: readonly ScheduleSlot[],
  tolKW: number,
  idle?: { prev?: readonly boolean[]; next: readonly boolean[] },
): number[] {
  if (!prev) return next.map((_s, k) => k);
  const byEnd = new Map(prev.map((s, j) => [s.end, j]));
  const out: number[] = [];
  next.forEach((s, k) => {
    const prevIndex = byEnd.get(s.end);
    const old = prevIndex === undefined ? undefined : prev[prevIndex];
    const moved = !old || (k === 0 ? s.start < old.start : s.start !== old.start);
    const wasIdle = prevIndex !== undefined && idle?.prev?.[prevIndex] === true;
    const isIdle = idle?.next[k] === true;
    if (moved || wasIdle !== isIdle || (!isIdle && Math.abs(old!.energyStorage.value - s.energyStorage.value) > tolKW))
      out.push(k);
  });
  return out;
}

/** What to hand on to ems-schedule: a schedule, or `stop` first (or only) when the schedule playing must not go on. */
export interface HandOn {
  /** The slots to play (the steered ones from `from` on), or 'stop' when none is left to steer. */
  payload: ScheduleSlot[] | 'stop';
  /** Their indices in the plan's slots. */
  index: number[];
  /** Whether a `stop` must go before the slots (ems-schedule keeps playing its old slots before a new schedule's first one). */
  stopFirst: boolean;
}

/**
 * The part of a plan to hand on from its slot `first` (the first changed one), leaving the
 * `idle` slots to the site: ems-schedule plays a gap as no steering, but replaces a playing
 * schedule only from the new one's first slot, so when slot `first` is left to the site the old
 * schedule is stopped first and every steered slot from the plan's start is handed on again.
 */
export function handOn(slots: ScheduleSlot[], idle: readonly boolean[] | undefined, first: number): HandOn {
  if (!idle)
    return {
      payload: first === 0 ? slots : slots.slice(first),
      index: slots.map((_s, k) => k).slice(first),
      stopFirst: false,
    }; // (a price plan's own slots, as before)
  const stopFirst = idle[first] === true;
  const index: number[] = [];
  for (let k = stopFirst ? 0 : first; k < slots.length; k++) if (!idle[k]) index.push(k);
  return {
    payload: index.length ? index.map((k) => slots[k]) : 'stop',
    index,
    stopFirst: stopFirst && index.length > 0,
  };
}

/**
 * The SOC (%) a plan's curve expects at `t`: linear within a slot (its power is constant),
 * the curve's first value before it, undefined after its end.
 */
export function socAt(curve: ReadonlyArray<{ time: number; soc: number }>, t: number): number | undefined {
  if (curve.length === 0) return undefined;
  if (t <= curve[0].time) return curve[0].soc;
  for (let i = 1; i < curve.length; i++) {
    const before = curve[i - 1];
    const after = curve[i];
    if (t <= after.time)
      return after.time === before.time
        ? after.soc
        : before.soc + ((after.soc - before.soc) * (t - before.time)) / (after.time - before.time);
  }
  return undefined;
}

/** What a delivery report says (ems-schedule's output 2, site steer's): the asked and measured battery power over [from, until). */
export interface DeliveryReport {
  asked?: { value: number; unit: string } | null;
  measured?: { value: number; unit: string } | null;
  from?: number;
  until?: number;
  followed?: string;
}

const KW: Record<string, number> = { W: 0.001, kW: 1, MW: 1000 };
const kwOf = (v: DeliveryReport['asked']): number | undefined =>
  v && typeof v.value === 'number' && Number.isFinite(v.value) && KW[v.unit] ? v.value * KW[v.unit] : undefined;

/**
 * How much more energy (kWh, in the store) the battery holds than planned, by the delivery
 * reports: per report, what was measured minus what was asked (grid side, + discharge) over
 * the part of its window within [since, now), through the efficiency of the asked direction
 * (a charge short by P stores P·etaC less; a discharge short by P takes P/etaD less). Reports
 * without a measured power (followed: unknown) count as nothing.
 */
export function deliveryShiftKWh(
  reports: readonly DeliveryReport[],
  since: number,
  now: number,
  etaC: number,
  etaD: number,
): number {
  let shift = 0;
  for (const r of reports) {
    const asked = kwOf(r.asked);
    const measured = kwOf(r.measured);
    if (asked === undefined || measured === undefined || typeof r.from !== 'number' || typeof r.until !== 'number')
      continue;
    const hours = (Math.min(r.until, now) - Math.max(r.from, since)) / HOUR_MS;
    if (!(hours > 0)) continue;
    const dev = measured - asked;
    const charging = asked < 0 || (asked === 0 && dev < 0);
    shift -= dev * hours * (charging ? etaC : 1 / etaD);
  }
  return shift;
}
