/**
 * What the `ems-plan` node (index.ts) makes of a message: the planner's input from the
 * message and the node's settings, and refusals named where the value came from. Pure (no
 * Node-RED, no clock: `now` is passed); it imports only protocol and the planner's input code,
 * so the build serves it (through check.ts) to the editor as resources/plan-input.js.
 *
 * Each setting comes from the message first, then the node: `msg.X`, then `msg.payload.X`,
 * then the node's X (socEnd, priceUnit, steps; the price formulas per key, from the node's
 * importFee …); the battery's from `msg.battery.X`, then `msg.payload.battery.X`, then the
 * node's; the site's limits from `msg.payload.site.X` (W), then the node's (kW; `msg.site` is
 * the schedule's site reference); the current SOC from `msg.soc`, `msg.payload.soc`,
 * `msg.battery.soc`, `msg.payload.battery.soc` (or, re-planning, the SOC the node keeps). A
 * forecast given as points ({start, value} in W) is resampled onto the price slots, and a load
 * history becomes the load forecast (same weekday and time, last 4 weeks). A refusal names the
 * field where the value came from (`msg.payload[3].end`, `msg.loadForecast[17]`, `importVat`).
 */
import { tooLong, ValidationError } from '../../protocol/errors';
import { INPUTS } from '../../protocol/limits';
import { show } from '../../protocol/units';
import { readPriceFeed, type FeedSlot } from '../../plan/price-feed';
import { loadForecastFromHistory, resampleForecast } from '../../plan/forecast';
import { misspelt, refuseUnknownKeys } from '../../plan/keys';

type Rec = Record<string, unknown>;
type Value = string | number | boolean | undefined | null;
/** A message as this module reads it. */
export type Msg = Rec;

export interface PlanProps {
  name?: string;
  capacityKWh?: Value;
  maxChargeKW?: Value;
  maxDischargeKW?: Value;
  socMin?: Value;
  socMax?: Value;
  efficiency?: Value;
  socEnd?: Value;
  priceUnit?: Value;
  steps?: Value;
  // version 2
  chargeEfficiency?: Value;
  dischargeEfficiency?: Value;
  cycleCost?: Value;
  endValue?: Value;
  socTarget?: Value;
  socTargetTime?: Value;
  importMultiplier?: Value;
  importFee?: Value;
  importVat?: Value;
  exportMultiplier?: Value;
  exportFee?: Value;
  exportVat?: Value;
  importLimitKW?: Value;
  exportLimitKW?: Value;
  peakCost?: Value;
  replan?: Value;
  // version 3: slots whose battery just follows PV and load left to the site ('self-consumption') or steered ('steer')
  idle?: Value;
  // version 4: false = never charge from the grid / never discharge into it
  gridCharge?: Value;
  gridDischarge?: Value;
  sellSocMin?: Value;
}

/** The battery fields a message may set (msg.battery, msg.payload.battery). */
export const BATTERY_KEYS = [
  'capacityKWh',
  'maxChargeKW',
  'maxDischargeKW',
  'socMin',
  'socMax',
  'efficiency',
  'soc',
  'chargeEfficiency',
  'dischargeEfficiency',
  'cycleCost',
  'socTarget',
  'endValue',
  'gridCharge',
  'gridDischarge',
  'sellSocMin',
] as const;
/** The fields of an object msg.payload. */
export const PAYLOAD_KEYS = [
  'prices',
  'battery',
  'soc',
  'socEnd',
  'priceUnit',
  'steps',
  'currency',
  'slotMinutes',
  'importFormula',
  'exportFormula',
  'pvForecast',
  'loadForecast',
  'loadHistory',
  'gridImportMax',
  'gridExportMax',
  'site',
  'solver',
] as const;
/** The planner fields msg.X may set (before msg.payload.X); the node's settings give socEnd, priceUnit and steps. */
const MSG_KEYS = PAYLOAD_KEYS.filter(
  (k) => !['prices', 'battery', 'soc', 'site', 'importFormula', 'exportFormula'].includes(k),
);
const NODE_PLAN_KEYS = ['socEnd', 'priceUnit', 'steps'];
/** The node's price formula settings, per formula and key. */
export const FORMULA_PROPS: Record<string, Record<string, keyof PlanProps>> = {
  importFormula: { multiplier: 'importMultiplier', fee: 'importFee', vat: 'importVat' },
  exportFormula: { multiplier: 'exportMultiplier', fee: 'exportFee', vat: 'exportVat' },
};
/** The site's limits: the planner's key (W, per kW) and the node's setting (kW) with its factor to the planner's unit. */
export const SITE_PROPS: Record<string, [keyof PlanProps | undefined, number]> = {
  importLimitW: ['importLimitKW', 1000],
  exportLimitW: ['exportLimitKW', 1000],
  peakCost: ['peakCost', 1],
  peakSoFarW: [undefined, 1],
};

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
export const isFeedObject = (p: unknown): boolean =>
  isObject(p) &&
  (Array.isArray(p.priceData) || Array.isArray(p.today) || Array.isArray(p.tomorrow) || isObject(p.viewer));
/** Whether a message carries prices (an array, a feed, or an object with prices). */
export const hasPrices = (msg: Msg): boolean =>
  Array.isArray(msg.payload) || isFeedObject(msg.payload) || (isObject(msg.payload) && 'prices' in msg.payload);

/** Whether a message gives the current SOC (msg.soc, msg.payload.soc, msg.battery.soc, msg.payload.battery.soc). */
export function socGiven(msg: Msg): boolean {
  const p = isObject(msg.payload) ? msg.payload : {};
  return [
    msg.soc,
    p.soc,
    isObject(msg.battery) ? msg.battery.soc : undefined,
    isObject(p.battery) ? p.battery.soc : undefined,
  ].some(isSet);
}

/** A number of kW (or per kW) ≥ 0 of the node's settings, in the planner's unit; refused naming the setting. */
function nodeAmount(v: unknown, prop: string, factor: number): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!(n >= 0) || !Number.isFinite(n)) {
    const what = factor === 1000 ? 'a number of kW ≥ 0 (empty: no limit)' : 'a cost per kW ≥ 0 (empty: none)';
    throw new ValidationError(
      prop,
      `must be ${what}; got ${show(v)}`,
      typeof v === 'number' ? 'unprocessable' : 'malformed',
    );
  }
  return n * factor;
}

/** "HH:MM" (00:00 to 23:59) as minutes after midnight; refused naming `field`. */
export function timeOfDay(v: unknown, field: string): number {
  const m = typeof v === 'string' ? /^\s*([01]?\d|2[0-3]):([0-5]\d)\s*$/.exec(v) : null;
  if (!m)
    throw new ValidationError(
      field,
      `must be a time of day HH:MM within 00:00 and 23:59 (the next one after now); got ${show(v)}`,
    );
  return +m[1] * 60 + +m[2];
}

/** The next instant after `now` at local time `minutes` after midnight (tomorrow's once today's has passed). */
export function nextAt(minutes: number, now: number): number {
  const d = new Date(now);
  d.setHours(Math.floor(minutes / 60), minutes % 60, 0, 0);
  if (d.getTime() <= now) d.setDate(d.getDate() + 1);
  return d.getTime();
}

export interface Gathered {
  /** The planner's input (without `now`). */
  input: Rec;
  /** Planner field → where its value came from (`battery.socMax` → `msg.battery.socMax`). */
  from: Record<string, string>;
  /** The end of the last price slot, when the prices could be read. */
  until?: number;
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
  const p = msg.payload;
  let prices: unknown;
  let body: Rec = {};
  const from: Record<string, string> = {};
  if (Array.isArray(p) || isFeedObject(p)) {
    prices = p;
    from.prices = 'msg.payload';
  } else if (isObject(p)) {
    body = fieldsOf(p, 'msg.payload', PAYLOAD_KEYS, '');
    prices = body.prices;
    from.prices = 'msg.payload.prices';
  } else {
    throw new ValidationError(
      'msg.payload',
      `must be an array of prices [{start, end or duration, price}], or {prices, battery?, soc?, socEnd?, priceUnit?, pvForecast?, loadForecast?, …} (prices also as a price source's feed); got ${show(p)}`,
    );
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
    if (k === 'soc' || k === 'socTarget') continue;
    const v = pick(
      `battery.${k}`,
      [
        [mb[k], `msg.battery.${k}`],
        [pb[k], `msg.payload.battery.${k}`],
        [config[k], k],
      ],
      k,
    );
    if (v === undefined && (k === 'capacityKWh' || k === 'maxChargeKW')) {
      throw new ValidationError(
        k,
        `must be given: the node's ${k}, or msg.battery.${k} (a number above 0); got nothing`,
      );
    }
    // gridCharge and gridDischarge only when off: on is the planners' default (prices alone stay with the price-only planner)
    if (v !== undefined && !((k === 'gridCharge' || k === 'gridDischarge') && (v === true || v === 'true')))
      battery[k] = v;
  }
  const target = pick(
    'battery.socTarget',
    [
      [mb.socTarget, 'msg.battery.socTarget'],
      [pb.socTarget, 'msg.payload.battery.socTarget'],
    ],
    'socTarget',
  );
  if (target !== undefined) battery.socTarget = target;
  else if (isSet(config.socTarget) || isSet(config.socTargetTime)) {
    if (!isSet(config.socTargetTime))
      throw new ValidationError('socTargetTime', 'must be given with socTarget: a time of day HH:MM; got nothing');
    if (!isSet(config.socTarget))
      throw new ValidationError(
        'socTarget',
        'must be given with socTargetTime: a SOC in % within socMin and socMax; got nothing',
      );
    battery.socTarget = { soc: config.socTarget, time: nextAt(timeOfDay(config.socTargetTime, 'socTargetTime'), now) };
    Object.assign(from, { 'battery.socTarget.soc': 'socTarget', 'battery.socTarget.time': 'socTargetTime' });
  }
  const socCands: Array<[unknown, string]> = [
    [msg.soc, 'msg.soc'],
    [body.soc, 'msg.payload.soc'],
    [mb.soc, 'msg.battery.soc'],
    [pb.soc, 'msg.payload.battery.soc'],
  ];
  if (soc) socCands[socFirst ? 'unshift' : 'push']([soc.value, soc.from]);
  battery.soc = pick('battery.soc', socCands, 'msg.soc');
  if (battery.soc === undefined) {
    throw new ValidationError(
      'msg.soc',
      'must be given: the current SOC in %, within [0, 100] (msg.soc, msg.payload.soc or msg.battery.soc); got nothing',
    );
  }
  const input: Rec = { prices, battery };
  for (const k of MSG_KEYS) {
    const v = pick(
      k,
      [
        [msg[k], `msg.${k}`],
        [body[k], `msg.payload.${k}`],
        [NODE_PLAN_KEYS.includes(k) ? config[k as keyof PlanProps] : undefined, k],
      ],
      k,
    );
    if (v !== undefined) input[k] = v;
  }
  for (const [f, props] of Object.entries(FORMULA_PROPS)) {
    const ff = '{multiplier?, fee?, vat?}: price per kWh = (base per kWh × multiplier + fee) × vat';
    const mf = fieldsOf(msg[f], `msg.${f}`, Object.keys(props), ff);
    const bf = fieldsOf(body[f], `msg.payload.${f}`, Object.keys(props), ff);
    const out: Rec = {};
    for (const [k, prop] of Object.entries(props)) {
      const v = pick(
        `${f}.${k}`,
        [
          [mf[k], `msg.${f}.${k}`],
          [bf[k], `msg.payload.${f}.${k}`],
          [config[prop], prop],
        ],
        prop,
      );
      if (v !== undefined) out[k] = v;
    }
    if (Object.keys(out).length) input[f] = out;
  }
  const bs = fieldsOf(
    body.site,
    'msg.payload.site',
    Object.keys(SITE_PROPS),
    '{importLimitW?, exportLimitW?, peakCost?, peakSoFarW?}',
  );
  const site: Rec = {};
  for (const [k, [prop, factor]] of Object.entries(SITE_PROPS)) {
    const v = pick(
      `site.${k}`,
      [
        [bs[k], `msg.payload.site.${k}`],
        [prop ? config[prop] : undefined, prop ?? `msg.payload.site.${k}`],
      ],
      prop ?? `msg.payload.site.${k}`,
    );
    if (v !== undefined) site[k] = from[`site.${k}`] === prop ? nodeAmount(v, prop!, factor) : v;
  }
  if (Object.keys(site).length) input.site = site;
  return { input, from, until: forecasts(input, from, now) };
}

/**
 * Forecasts given as points (and a load history) turned into one value per price slot, in
 * place; returns the end of the last price slot (undefined when the prices cannot be read:
 * the planner then refuses them in its own words). Slots that have ended get 0.
 */
function forecasts(input: Rec, from: Record<string, string>, now: number): number | undefined {
  // Counted before asPoints looks at any element: per-slot values are checked against the slots
  // by the planner, points against INPUTS.seriesPoints by readSeries; more than either is refused.
  for (const k of ['pvForecast', 'loadForecast']) {
    const v = input[k];
    if (Array.isArray(v) && v.length > INPUTS.seriesPoints)
      throw tooLong(from[k], INPUTS.seriesPoints, v.length, 'values (one per price slot, or points)');
  }
  const asPoints = (v: unknown) =>
    Array.isArray(v)
      ? v.some((x) => isObject(x))
      : isObject(v) && (Array.isArray(v.time) || Array.isArray(v.forecasts) || isObject(v.result));
  const history = input.loadHistory;
  delete input.loadHistory; // (not the planner's: it becomes loadForecast)
  const fromHistory = isSet(history) && !isSet(input.loadForecast);
  const need = ['pvForecast', 'loadForecast'].some((k) => asPoints(input[k])) || fromHistory;
  let slots: FeedSlot[] | undefined;
  try {
    const minutes = isSet(input.slotMinutes) ? Number(input.slotMinutes) : undefined;
    slots = readPriceFeed(
      input.prices,
      'prices',
      minutes !== undefined && Number.isInteger(minutes) && minutes > 0 ? minutes : undefined,
    ).slots;
  } catch (err) {
    if (need) throw located(err, from);
    return undefined;
  }
  if (need) {
    const ahead = slots.map((s) => s.end > now);
    const future = slots.filter((_s, k) => ahead[k]);
    const fill = (values: number[]) => {
      let j = 0;
      return ahead.map((a) => (a ? values[j++] : 0));
    };
    if (future.length) {
      for (const k of ['pvForecast', 'loadForecast']) {
        if (asPoints(input[k])) input[k] = fill(resampleForecast(input[k], future, from[k], 0));
      }
      if (fromHistory) {
        input.loadForecast = fill(
          loadForecastFromHistory(history, { slots: future, weeks: 4, field: from.loadHistory }),
        );
        from.loadForecast = `${from.loadHistory} → loadForecast`;
      }
    }
  }
  return slots.reduce((m, s) => Math.max(m, s.end), -Infinity);
}

/** Planner fields whose refusals name a part (`prices[3].end`, `loadForecast[17]`, `importFormula.vat`), longest first when renamed. */
const FIELD_RE =
  /(?<![\w.])(?:prices|pvForecast|loadForecast|gridImportMax|gridExportMax|importFormula|exportFormula|site|battery)(?:\[\d+\]|\.\w+)+/g;

/** A planner field (`prices[3].end`, `battery.socMax`, `site.exportLimitW`) as where its value came from. */
function renamer(from: Record<string, string>): (field: string) => string {
  return (field) => {
    let best = '';
    for (const k of Object.keys(from)) {
      if ((field === k || field.startsWith(`${k}.`) || field.startsWith(`${k}[`)) && k.length > best.length) best = k;
    }
    if (best) return from[best] + field.slice(best.length);
    return field.replace(/^battery\./, '');
  };
}

/** The planner's refusal, its field and the fields it mentions renamed to where the values came from. */
export function located(err: unknown, from: Record<string, string>): unknown {
  if (!(err instanceof ValidationError)) return err;
  const name = renamer(from);
  const rest = err.message.slice(err.field.length + 1).replace(FIELD_RE, (f) => name(f));
  return new ValidationError(name(err.field), rest, err.kind);
}
