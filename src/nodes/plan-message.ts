/**
 * What the `ems-plan` node (ems-plan.ts) makes of a message: the planner's input from the
 * message and the node's settings, refusals named where the value came from, and chart series.
 * Pure (no Node-RED, no clock).
 *
 * Each setting comes from the message first, then the node: `msg.X`, then `msg.payload.X`,
 * then the node's X (socEnd, priceUnit, steps); the battery's from `msg.battery.X`, then
 * `msg.payload.battery.X`, then the node's; the current SOC from `msg.soc`, `msg.payload.soc`,
 * `msg.battery.soc`, `msg.payload.battery.soc`. Slots that ended are dropped and the slot in
 * progress starts now (the planner's `now`). A refusal is one Catch-able error naming the
 * field where the value came from (`msg.payload[3].end`, `msg.battery.socMax`, `capacityKWh`).
 */
import { ValidationError, show } from '../protocol';
import type { PricePlan } from '../plan';
import { parsePlanInput } from '../plan/price-input';
import type { NodeMessage } from './red';

type Value = string | number | undefined | null;
export interface PlanProps {
  name?: string;
  capacityKWh?: Value; maxChargeKW?: Value; maxDischargeKW?: Value; socMin?: Value; socMax?: Value; efficiency?: Value;
  socEnd?: Value; priceUnit?: Value; steps?: Value;
}

/** The battery fields a message may set (msg.battery, msg.payload.battery). */
export const BATTERY_KEYS = ['capacityKWh', 'maxChargeKW', 'maxDischargeKW', 'socMin', 'socMax', 'efficiency', 'soc'] as const;
/** The fields of an object msg.payload. */
export const PAYLOAD_KEYS = ['prices', 'battery', 'soc', 'socEnd', 'priceUnit', 'steps'] as const;
/** Node properties the planner reads (besides the battery's). */
const PLAN_KEYS = ['socEnd', 'priceUnit', 'steps'] as const;

type Rec = Record<string, unknown>;
const isObject = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
const isSet = (v: unknown) => v !== undefined && v !== null && v !== '';
export const round = (v: number, d: number) => Math.round(v * 10 ** d) / 10 ** d;

/** An optional object of the message with only `keys`: refused naming the field otherwise. */
function fieldsOf(v: unknown, at: string, keys: readonly string[], form: string): Rec {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new ValidationError(at, `must be an object ${form}; got ${show(v)}`);
  for (const k of Object.keys(v)) if (!keys.includes(k)) throw new ValidationError(`${at}.${k}`, `is not a field of ${at}; accepted: ${keys.join(', ')}`);
  return v;
}

/** The planner's input from a message and the node's defaults, and where each value came from (planner field → source). */
export function gather(msg: NodeMessage, config: PlanProps): { input: Rec; from: Record<string, string> } {
  const p = msg.payload;
  let prices: unknown;
  let body: Rec = {};
  const from: Record<string, string> = {};
  if (Array.isArray(p)) {
    prices = p;
    from.prices = 'msg.payload';
  } else if (isObject(p)) {
    body = fieldsOf(p, 'msg.payload', PAYLOAD_KEYS, '');
    prices = body.prices;
    from.prices = 'msg.payload.prices';
  } else {
    throw new ValidationError('msg.payload', `must be an array of prices [{start, end or duration, price}], or {prices, battery?, soc?, socEnd?, priceUnit?, steps?}; got ${show(p)}`);
  }
  const form = `{${BATTERY_KEYS.join(', ')}} (each optional)`;
  const mb = fieldsOf(msg.battery, 'msg.battery', BATTERY_KEYS, form);
  const pb = fieldsOf(body.battery, 'msg.payload.battery', BATTERY_KEYS, form);
  /** The first value that is set among the candidates [value, where]; records where it came from. */
  const pick = (field: string, cands: Array<[unknown, string]>, fallback: string): unknown => {
    const hit = cands.find(([v]) => isSet(v));
    from[field] = hit ? hit[1] : fallback;
    return hit?.[0];
  };
  const battery: Rec = {};
  for (const k of BATTERY_KEYS) {
    if (k === 'soc') continue;
    const v = pick(`battery.${k}`, [[mb[k], `msg.battery.${k}`], [pb[k], `msg.payload.battery.${k}`], [config[k], k]], k);
    if (v === undefined && (k === 'capacityKWh' || k === 'maxChargeKW')) {
      throw new ValidationError(k, `must be given: the node's ${k}, or msg.battery.${k} (a number above 0); got nothing`);
    }
    if (v !== undefined) battery[k] = v;
  }
  battery.soc = pick('battery.soc', [[msg.soc, 'msg.soc'], [body.soc, 'msg.payload.soc'], [mb.soc, 'msg.battery.soc'], [pb.soc, 'msg.payload.battery.soc']], 'msg.soc');
  if (battery.soc === undefined) {
    throw new ValidationError('msg.soc', 'must be given: the current SOC in %, within [0, 100] (msg.soc, msg.payload.soc or msg.battery.soc); got nothing');
  }
  const input: Rec = { prices, battery };
  for (const k of PLAN_KEYS) {
    const v = pick(k, [[msg[k], `msg.${k}`], [body[k], `msg.payload.${k}`], [config[k], k]], k);
    if (v !== undefined) input[k] = v;
  }
  return { input, from };
}

/** A planner field (`prices[3].end`, `battery.socMax`, `socEnd`) as where its value came from. */
function renamer(from: Record<string, string>): (field: string) => string {
  return (field) => {
    const m = /^prices(\[.*)?$/.exec(field);
    if (m) return `${from.prices ?? 'prices'}${m[1] ?? ''}`;
    return from[field] ?? field.replace(/^battery\./, '');
  };
}

/** The planner's refusal, its field and the fields it mentions renamed to where the values came from. */
export function located(err: unknown, from: Record<string, string>): unknown {
  if (!(err instanceof ValidationError)) return err;
  const name = renamer(from);
  const rest = err.message.slice(err.field.length + 1).replace(/\b(prices\[\d+\](?:\.\w+)?|battery\.\w+)/g, (f) => name(f));
  return new ValidationError(name(err.field), rest, err.kind);
}

/**
 * The node's own settings, checked by the planner's rules (with a sample price and SOC, and 1 for
 * a capacity or power left to the message): throws a refusal naming the node's property.
 */
export function checkDefaults(config: PlanProps): void {
  const { input, from } = gather({ payload: [{ start: 0, end: 900_000, price: 0 }], soc: 50, battery: {
    capacityKWh: isSet(config.capacityKWh) ? undefined : 1, maxChargeKW: isSet(config.maxChargeKW) ? undefined : 1 } }, config);
  try {
    parsePlanInput(input);
  } catch (err) {
    throw located(err, from);
  }
}

/** Chart series, `{x: epoch ms, y}`: SOC % at each point of the curve; power (kW, + discharge) and price as steps (a point at each slot's start and end; power 0 in a gap). */
export function chartOf(plan: PricePlan): { soc: Array<{ x: number; y: number }>; power: Array<{ x: number; y: number }>; price: Array<{ x: number; y: number }> } {
  const power: Array<{ x: number; y: number }> = [];
  const price: Array<{ x: number; y: number }> = [];
  plan.slots.forEach((s, k) => {
    const prev = plan.slots[k - 1];
    if (prev && prev.end !== s.start) power.push({ x: prev.end, y: 0 }, { x: s.start, y: 0 });
    const kw = round(s.energyStorage.value, 3);
    power.push({ x: s.start, y: kw }, { x: s.end, y: kw });
    price.push({ x: s.start, y: s.price }, { x: s.end, y: s.price });
  });
  return { soc: plan.soc.map((p) => ({ x: p.time, y: round(p.soc, 2) })), power, price };
}
