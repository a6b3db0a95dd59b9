/**
 * What the `ems-plan` node makes of a message: the planner's input from the message and the node's settings,
 * with where each value came from, so a refusal names that field (`msg.payload[3].end`, `importVat`;
 * located.ts). Each setting comes from `msg.X`, then `msg.payload.X`, then the node's (the order per key:
 * docs/nodes/ems-plan.md). Pure (no Node-RED, no clock: `now` is passed), importing only protocol and the
 * planner's input code, so the build serves it (through check.ts) to the editor as resources/plan-input.js.
 */
import { ValidationError } from '../../protocol/errors';
import { show } from '../../protocol/units';
import { misspelt, refuseUnknownKeys } from '../../plan/keys';
import {
  BATTERY_KEYS,
  FORMULA_PROPS,
  MSG_KEYS,
  NODE_PLAN_KEYS,
  PAYLOAD_KEYS,
  type PlanProps,
  SITE_PROPS,
} from './fields';
import { forecasts } from './forecasts';

type Rec = Record<string, unknown>;
/** A message as this module reads it. */
export type Msg = Rec;
/** Planner field → where its value came from (`battery.socMax` → `msg.battery.socMax`). */
type Sources = Record<string, string>;
/** A candidate value and where it came from. */
type Candidate = [unknown, string];

const isObject = (v: unknown): v is Rec =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
const isSet = (v: unknown) => v !== undefined && v !== null && v !== '';
export const round = (v: number, d: number) => Math.round(v * 10 ** d) / 10 ** d;

/** An optional object of the message with only `keys`: refused naming the field otherwise. */
function fieldsOf(v: unknown, at: string, keys: readonly string[], form: string): Rec {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new ValidationError(at, `must be an object ${form}; got ${show(v)}`);
  refuseUnknownKeys(v, keys, at, `a field of ${at}`);
  return v;
}

/** The message fields the node reads (a message carries others, so only a near miss of these is refused). */
const MSG_READ = [
  'payload',
  'battery',
  'soc',
  'site',
  'chart',
  'replan',
  'importFormula',
  'exportFormula',
  ...PAYLOAD_KEYS.filter((k) => k !== 'prices'),
];

/** Refuses a message field that is a misspelling of one the node reads (`msg.loadForcast`): it would plan without it. */
function nearMisses(msg: Msg): void {
  for (const k of Object.keys(msg)) {
    const known = misspelt(
      k,
      MSG_READ.filter((m) => m.length >= 6),
    );
    if (known) throw new ValidationError(`msg.${k}`, `is not a field the plan node reads; did you mean msg.${known}?`);
  }
}

/** Whether an object is a price source's wrapper (power-saver's {priceData}, Tibber's {today, tomorrow} or query answer). */
const isFeedObject = (p: unknown): boolean =>
  isObject(p) &&
  (Array.isArray(p.priceData) || Array.isArray(p.today) || Array.isArray(p.tomorrow) || isObject(p.viewer));
/** Whether a message carries prices (an array, a feed, or an object with prices). */
export const hasPrices = (msg: Msg): boolean =>
  Array.isArray(msg.payload) || isFeedObject(msg.payload) || (isObject(msg.payload) && 'prices' in msg.payload);

/** Whether a message gives the current SOC (msg.soc, msg.payload.soc, msg.battery.soc, msg.payload.battery.soc). */
export function socGiven(msg: Msg): boolean {
  const payload = isObject(msg.payload) ? msg.payload : {};
  return [
    msg.soc,
    payload.soc,
    isObject(msg.battery) ? msg.battery.soc : undefined,
    isObject(payload.battery) ? payload.battery.soc : undefined,
  ].some(isSet);
}

/** A number of kW (or per kW) ≥ 0 of the node's settings, in the planner's unit; refused naming the setting. */
function nodeAmount(v: unknown, prop: string, factor: number): number {
  const amount = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!(amount >= 0) || !Number.isFinite(amount)) {
    const what = factor === 1000 ? 'a number of kW ≥ 0 (empty: no limit)' : 'a cost per kW ≥ 0 (empty: none)';
    throw new ValidationError(
      prop,
      `must be ${what}; got ${show(v)}`,
      typeof v === 'number' ? 'unprocessable' : 'malformed',
    );
  }
  return amount * factor;
}

/** "HH:MM" (00:00 to 23:59) as minutes after midnight; refused naming `field`. */
function timeOfDay(v: unknown, field: string): number {
  const match = typeof v === 'string' ? /^\s*([01]?\d|2[0-3]):([0-5]\d)\s*$/.exec(v) : null;
  if (!match)
    throw new ValidationError(
      field,
      `must be a time of day HH:MM within 00:00 and 23:59 (the next one after now); got ${show(v)}`,
    );
  return +match[1] * 60 + +match[2];
}

/** The next instant after `now` at local time `minutes` after midnight (tomorrow's once today's has passed). */
export function nextAt(minutes: number, now: number): number {
  const date = new Date(now);
  date.setHours(Math.floor(minutes / 60), minutes % 60, 0, 0);
  if (date.getTime() <= now) date.setDate(date.getDate() + 1);
  return date.getTime();
}

export interface Gathered {
  /** The planner's input (without `now`). */
  input: Rec;
  /** Planner field → where its value came from (`battery.socMax` → `msg.battery.socMax`). */
  from: Sources;
  /** The end of the last price slot, when the prices could be read. */
  until?: number;
}

/** The first value that is set among the candidates; records in `from` where it came from. */
function pick(from: Sources, field: string, candidates: Candidate[], fallback: string): unknown {
  const hit = candidates.find(([v]) => isSet(v));
  from[field] = hit ? hit[1] : fallback;
  return hit?.[0];
}

/**
 * The planner's input from a message and the node's settings. `soc`: the SOC to take when
 * the message has none (re-planning: a reading or the plan's), with where it came from; with
 * `socFirst`, before the message's own (a kept message's SOC is old).
 */
export function gather(
  msg: Msg,
  config: PlanProps,
  now: number,
  soc?: { value: number; from: string },
  socFirst = false,
): Gathered {
  nearMisses(msg);
  const from: Sources = {};
  const { prices, body } = pricesOf(msg.payload, from);
  const form = `{${BATTERY_KEYS.join(', ')}} (each optional)`;
  const msgBattery = fieldsOf(msg.battery, 'msg.battery', BATTERY_KEYS, form);
  const payloadBattery = fieldsOf(body.battery, 'msg.payload.battery', BATTERY_KEYS, form);
  const battery = batteryOf(msgBattery, payloadBattery, config, from);
  const target = socTargetOf(msgBattery, payloadBattery, config, now, from);
  if (target !== undefined) battery.socTarget = target;
  const socCandidates: Candidate[] = [
    [msg.soc, 'msg.soc'],
    [body.soc, 'msg.payload.soc'],
    [msgBattery.soc, 'msg.battery.soc'],
    [payloadBattery.soc, 'msg.payload.battery.soc'],
  ];
  if (soc) socCandidates[socFirst ? 'unshift' : 'push']([soc.value, soc.from]);
  battery.soc = pick(from, 'battery.soc', socCandidates, 'msg.soc');
  if (battery.soc === undefined) {
    throw new ValidationError(
      'msg.soc',
      'must be given: the current SOC in %, within [0, 100] (msg.soc, msg.payload.soc or msg.battery.soc); got nothing',
    );
  }
  const input: Rec = { prices, battery };
  for (const k of MSG_KEYS) {
    const nodeValue = NODE_PLAN_KEYS.includes(k) ? config[k as keyof PlanProps] : undefined;
    const value = pick(
      from,
      k,
      [
        [msg[k], `msg.${k}`],
        [body[k], `msg.payload.${k}`],
        [nodeValue, k],
      ],
      k,
    );
    if (value !== undefined) input[k] = value;
  }
  addFormulas(input, msg, body, config, from);
  const site = siteOf(body, config, from);
  if (Object.keys(site).length) input.site = site;
  return { input, from, until: forecasts(input, from, now) };
}

/** The prices of msg.payload (an array, a feed, or {prices, …}) and the object payload's other fields. */
function pricesOf(payload: unknown, from: Sources): { prices: unknown; body: Rec } {
  if (Array.isArray(payload) || isFeedObject(payload)) {
    from.prices = 'msg.payload';
    return { prices: payload, body: {} };
  }
  if (isObject(payload)) {
    const body = fieldsOf(payload, 'msg.payload', PAYLOAD_KEYS, '');
    from.prices = 'msg.payload.prices';
    return { prices: body.prices, body };
  }
  throw new ValidationError(
    'msg.payload',
    `must be an array of prices [{start, end or duration, price}], or {prices, battery?, soc?, socEnd?, priceUnit?, pvForecast?, loadForecast?, …} (prices also as a price source's feed); got ${show(payload)}`,
  );
}

/** The battery's fields but the SOC and its target: msg.battery, msg.payload.battery, then the node's. */
function batteryOf(msgBattery: Rec, payloadBattery: Rec, config: PlanProps, from: Sources): Rec {
  const battery: Rec = {};
  for (const k of BATTERY_KEYS) {
    if (k === 'soc' || k === 'socTarget') continue;
    const candidates: Candidate[] = [
      [msgBattery[k], `msg.battery.${k}`],
      [payloadBattery[k], `msg.payload.battery.${k}`],
      [config[k], k],
    ];
    const value = pick(from, `battery.${k}`, candidates, k);
    if (value === undefined && (k === 'capacityKWh' || k === 'maxChargeKW')) {
      throw new ValidationError(
        k,
        `must be given: the node's ${k}, or msg.battery.${k} (a number above 0); got nothing`,
      );
    }
    // gridCharge and gridDischarge only when off: on is the planners' default (prices alone stay with the price-only planner)
    if (value !== undefined && !((k === 'gridCharge' || k === 'gridDischarge') && (value === true || value === 'true')))
      battery[k] = value;
  }
  return battery;
}

/** The SOC target: the message's, else the node's socTarget at the next socTargetTime (both or neither). */
function socTargetOf(msgBattery: Rec, payloadBattery: Rec, config: PlanProps, now: number, from: Sources): unknown {
  const candidates: Candidate[] = [
    [msgBattery.socTarget, 'msg.battery.socTarget'],
    [payloadBattery.socTarget, 'msg.payload.battery.socTarget'],
  ];
  const target = pick(from, 'battery.socTarget', candidates, 'socTarget');
  if (target !== undefined) return target;
  if (!isSet(config.socTarget) && !isSet(config.socTargetTime)) return undefined;
  if (!isSet(config.socTargetTime))
    throw new ValidationError('socTargetTime', 'must be given with socTarget: a time of day HH:MM; got nothing');
  if (!isSet(config.socTarget))
    throw new ValidationError(
      'socTarget',
      'must be given with socTargetTime: a SOC in % within socMin and socMax; got nothing',
    );
  Object.assign(from, { 'battery.socTarget.soc': 'socTarget', 'battery.socTarget.time': 'socTargetTime' });
  return { soc: config.socTarget, time: nextAt(timeOfDay(config.socTargetTime, 'socTargetTime'), now) };
}

/** The price formulas (import, export): per key from msg.X, msg.payload.X, then the node's settings. */
function addFormulas(input: Rec, msg: Msg, body: Rec, config: PlanProps, from: Sources): void {
  for (const [formula, props] of Object.entries(FORMULA_PROPS)) {
    const form = '{multiplier?, fee?, vat?}: price per kWh = (base per kWh × multiplier + fee) × vat';
    const msgFormula = fieldsOf(msg[formula], `msg.${formula}`, Object.keys(props), form);
    const payloadFormula = fieldsOf(body[formula], `msg.payload.${formula}`, Object.keys(props), form);
    const out: Rec = {};
    for (const [k, prop] of Object.entries(props)) {
      const candidates: Candidate[] = [
        [msgFormula[k], `msg.${formula}.${k}`],
        [payloadFormula[k], `msg.payload.${formula}.${k}`],
        [config[prop], prop],
      ];
      const value = pick(from, `${formula}.${k}`, candidates, prop);
      if (value !== undefined) out[k] = value;
    }
    if (Object.keys(out).length) input[formula] = out;
  }
}

/** The site's limits: msg.payload.site.X (W), then the node's (kW, converted). */
function siteOf(body: Rec, config: PlanProps, from: Sources): Rec {
  const payloadSite = fieldsOf(
    body.site,
    'msg.payload.site',
    Object.keys(SITE_PROPS),
    '{importLimitW?, exportLimitW?, peakCost?, peakSoFarW?}',
  );
  const site: Rec = {};
  for (const [k, [prop, factor]] of Object.entries(SITE_PROPS)) {
    const where = prop ?? `msg.payload.site.${k}`;
    const candidates: Candidate[] = [
      [payloadSite[k], `msg.payload.site.${k}`],
      [prop ? config[prop] : undefined, where],
    ];
    const value = pick(from, `site.${k}`, candidates, where);
    if (value !== undefined) site[k] = from[`site.${k}`] === prop ? nodeAmount(value, prop!, factor) : value;
  }
  return site;
}
