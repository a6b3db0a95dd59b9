/**
 * Re-planning in the `ems-plan` node (model-predictive control): what the node keeps between messages (the
 * last message with prices) and what it decides on each trigger: a quarter hour, a fresh SOC, a delivery
 * report saying `no` or `partly`, new prices. The SOC of a re-plan: a reading newer than the last plan; else
 * what the last plan expects now, moved by the delivery reports since; else the last reading. Only what
 * changed is handed on, from the first changed slot, never a slot that ended (the triggers and forms in
 * users' words: docs/nodes/ems-plan.md). No Node-RED here: controller.ts sends; timers are passed.
 */
import { QUARTER_HOUR_MS, show, ValidationError } from '../../protocol';
import type { DeliveryReport, ScheduleSlot } from '../../plan';
import { lazyFunctions } from '../shared';
import { hasPrices, type Msg } from './message';

// The planner loads on the first re-plan, not while Node-RED starts.
const planner = lazyFunctions(() => require('../../plan') as typeof import('../../plan'));
const changedSlots = planner('changedSlots');
const changeTolerance = planner('changeTolerance');
const deliveryShiftKWh = planner('deliveryShiftKWh');
const numberIn = planner('numberIn');
const socAt = planner('socAt');

type Rec = Record<string, unknown>;
const isObject = (v: unknown): v is Rec =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
const isSet = (v: unknown) => v !== undefined && v !== null && v !== '';
const num = (v: unknown, fallback: number) => (isSet(v) && Number.isFinite(Number(v)) ? Number(v) : fallback);

export type Trigger = 'input' | 'soc' | 'timer' | 'delivery';
export type MessageKind = 'input' | 'soc' | 'delivery';
export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(t: unknown): void;
}

/** A delivery report: topic `delivery` and a payload with `followed`. */
export const isDelivery = (msg: Msg): boolean =>
  msg.topic === 'delivery' && isObject(msg.payload) && typeof msg.payload.followed === 'string';

/** A SOC reading in a message without prices: [value, field], or undefined. */
export function readingOf(msg: Msg): [unknown, string] | undefined {
  if (hasPrices(msg) || isDelivery(msg)) return undefined;
  if (isSet(msg.soc)) return [msg.soc, 'msg.soc'];
  const topic = typeof msg.topic === 'string' ? msg.topic : '';
  const payload = msg.payload;
  if (
    (topic === 'soc' || topic.endsWith('/soc')) &&
    (typeof payload === 'number' || (typeof payload === 'string' && payload.trim() !== ''))
  )
    return [payload, 'msg.payload'];
  return undefined;
}

/** What a message is to a re-planning node. */
export function kindOf(msg: Msg): MessageKind {
  if (isDelivery(msg)) return 'delivery';
  return readingOf(msg) ? 'soc' : 'input';
}

/** What the node knows of the plan it made last. */
interface LastPlan {
  at: number;
  curve: ReadonlyArray<{ time: number; soc: number }>;
  capKWh: number;
  etaC: number;
  etaD: number;
}

export class Replanner {
  /** The last message that carried prices: the inputs of every re-plan. */
  kept?: Msg;
  /** The last SOC reading; `used` once a plan started from it. */
  reading?: { soc: number; at: number; used: boolean };
  private last?: LastPlan;
  /** The slots handed on last (the whole plan then) and which were left to the site, to compare the next plan with. */
  private sent?: ScheduleSlot[];
  private sentIdle?: readonly boolean[];
  /** Delivery reports no plan took into account yet. */
  private reports: DeliveryReport[] = [];
  /** When the SOC the plans go on from was measured: reports count from then on. */
  private anchorAt = -Infinity;
  private timer?: unknown;
  private timerAt?: number;
  private closed = false;

  constructor(
    private readonly timers: Timers = {
      set: (fn, ms) => setTimeout(fn, ms),
      clear: (t) => clearTimeout(t as NodeJS.Timeout),
    },
  ) {}

  /** Takes a SOC reading (checked: % within [0, 100], refused naming `field`). */
  read(value: unknown, field: string, now: number): number {
    const soc = numberIn(value, field, 0, 100);
    this.reading = { soc, at: now, used: false };
    return soc;
  }

  /** Keeps a delivery report (for the SOC of the next re-plan); whether it asks for a re-plan now. */
  report(payload: Rec): boolean {
    this.reports.push(payload as DeliveryReport);
    if (this.reports.length > 200) this.reports.shift();
    return payload.followed === 'no' || payload.followed === 'partly';
  }

  /** The SOC a re-plan starts from, and where it came from; undefined when nothing is known. */
  socFor(now: number): { value: number; from: string } | undefined {
    const reading = this.reading;
    if (reading && !reading.used) return { value: reading.soc, from: 'reading' };
    const last = this.last;
    const planned = last ? socAt(last.curve, now) : undefined;
    if (last && planned !== undefined) {
      const shift = deliveryShiftKWh(this.reports, this.anchorAt, now, last.etaC, last.etaD);
      const soc = Math.min(100, Math.max(0, planned + (last.capKWh > 0 ? (shift / last.capKWh) * 100 : 0)));
      return { value: soc, from: shift !== 0 ? 'plan+delivery' : 'plan' };
    }
    return reading ? { value: reading.soc, from: 'reading' } : undefined;
  }

  /**
   * Records a plan made at `now` from `input` (the planner's input): its SOC curve and the battery
   * for the delivery correction. A plan from a fresh reading anchors the reports' windows there.
   */
  planned(input: Rec, curve: LastPlan['curve'], now: number): void {
    const battery = isObject(input.battery) ? input.battery : {};
    const root = Math.sqrt(num(battery.efficiency, 0.9));
    this.last = {
      at: now,
      curve,
      capKWh: num(battery.capacityKWh, 0),
      etaC: num(battery.chargeEfficiency, root),
      etaD: num(battery.dischargeEfficiency, root),
    };
    if (this.reading && !this.reading.used) {
      this.reading.used = true;
      this.anchorAt = this.reading.at;
    }
    // every report so far is in this plan's SOC (or older than the reading it started from)
    this.reports = [];
  }

  /** The indices of `slots` that changed against the slots handed on last (all without any); `idle`: the slots left to the site. */
  changed(slots: ScheduleSlot[], input: Rec, idle?: readonly boolean[]): number[] {
    const battery = isObject(input.battery) ? input.battery : {};
    const maxKW = Math.max(num(battery.maxChargeKW, 0), num(battery.maxDischargeKW, num(battery.maxChargeKW, 0)));
    return changedSlots(
      this.sent,
      slots,
      changeTolerance(maxKW),
      idle || this.sentIdle ? { prev: this.sentIdle, next: idle ?? [] } : undefined,
    );
  }

  /** The plan's slots were handed on (from the first changed one; the ones before it are unchanged). */
  handed(slots: ScheduleSlot[], idle?: readonly boolean[]): void {
    this.sent = slots;
    this.sentIdle = idle;
  }

  /** Arms the one timer for the next quarter hour after `now` (replacing any); `fire` runs then. */
  arm(now: number, fire: () => void): void {
    if (this.closed) return;
    const at = (Math.floor(now / QUARTER_HOUR_MS) + 1) * QUARTER_HOUR_MS;
    if (this.timer !== undefined && this.timerAt === at) return;
    this.disarm();
    this.timerAt = at;
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      fire();
    }, at - now);
  }

  /** When the timer fires next, if armed. */
  get nextAt(): number | undefined {
    return this.timer === undefined ? undefined : this.timerAt;
  }

  disarm(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
  }

  /** The kept prices ran out: nothing to plan until new prices come. */
  ended(): void {
    this.disarm();
    this.kept = undefined;
    this.sent = undefined;
  }

  close(): void {
    this.closed = true;
    this.disarm();
  }
}

/** A message a node without re-planning cannot use (a SOC reading or a delivery report alone): the refusal that says so. */
export function notReplanning(msg: Msg): ValidationError {
  const what = isDelivery(msg) ? 'a delivery report (topic delivery)' : 'a SOC reading without prices';
  return new ValidationError(
    'msg.payload',
    `is ${what}: the node uses it only with Re-plan on (replan); give prices [{start, end, price}] with msg.soc; got ${show(msg.payload)}`,
  );
}
