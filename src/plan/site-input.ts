/**
 * The input of the site planner (site-plan.ts), checked before anything is planned: every
 * refusal is a ValidationError naming the field and, for per-slot values, the slot
 * (`loadForecast[17]`, `prices[3].exportPrice`, `battery.socTarget.time`). Pure: no I/O, no clock.
 * Units: forecasts and grid limits in W (site level, as meters report them), the battery in
 * kWh, kW and %, prices per kWh after the formula (fee, cycleCost and endValue in that currency
 * per kWh, peakCost per kW).
 */
import { tooLong, ValidationError } from '../protocol/errors';
import { INPUTS } from '../protocol/limits';
import { HOUR_MS, parseTime } from '../protocol/time';
import { parseNumber, show } from '../protocol/units';
import type { EpochMs, TimeInput } from '../protocol';
import { MAX_PRICE_SLOTS, numberIn, parseBattery, parsePriceUnit, type BatteryInput } from './price-input';
import { applyPriceFormula, parsePriceFormula, readPriceFeed, unitOf, type PriceFormula } from './price-feed';
import { BATTERY_FIELDS, PLANNER_FIELDS, refuseUnknownKeys } from './keys';
import type { SiteModel } from './site-model';
import type { SlotData } from './slot-cost';

export interface SocTargetInput {
  /** At least this SOC (%), within the SOC window … */
  soc: number;
  /** … by this time (at the last slot boundary at or before it; the first slot's end if it falls in the first slot). */
  time: TimeInput;
}

export interface SiteBatteryInput extends BatteryInput {
  /** Grid → store, within (0, 1]; default √efficiency. */
  chargeEfficiency?: number;
  /** Store → grid, within (0, 1]; default √efficiency. */
  dischargeEfficiency?: number;
  /** Wear per kWh of throughput, counted grid side (charged + discharged kWh); default 0. */
  cycleCost?: number;
  /** Reach at least a SOC by a time (one or several). */
  socTarget?: SocTargetInput | SocTargetInput[];
  /** Worth of a kWh stored at the end of the plan (per kWh of stored energy, ≥ 0); default 0. */
  endValue?: number;
  /** false: never charge from the grid (only from the PV surplus of the slot); default true. */
  gridCharge?: boolean;
  /** false: never discharge into the grid (at most the slot's load net of PV); default true. */
  gridDischarge?: boolean;
  /** A least SOC before selling (%): below it the battery only serves the site's own load (no discharge into the grid). */
  sellSocMin?: number;
}

export interface SiteLimitsInput {
  /** The site's import limit, W (with gridImportMax the lower counts). */
  importLimitW?: number;
  /** The site's export limit, W (with gridExportMax the lower counts). */
  exportLimitW?: number;
  /** Cost per kW of the highest import over the plan (a capacity tariff); default 0. */
  peakCost?: number;
  /** The highest import already reached in the billing period, W: the peak is charged at least at this. */
  peakSoFarW?: number;
}

export interface SitePlanInput {
  /** Price slots, or a price source's feed as it emits it (price-feed.ts). */
  prices: unknown;
  /** The energy unit the base prices are per (kWh default, MWh; `EUR/MWh`, `ct/kWh` read as theirs); a feed that names its unit is read in it unless this is given. */
  priceUnit?: string;
  /** The plan's currency, for the reasons' texts (default: from priceUnit or the feed; `EUR` shows ct). */
  currency?: string;
  /** Split longer price slots into slots of this many minutes (15: hourly prices with quarter-hour forecasts). */
  slotMinutes?: number;
  importFormula?: PriceFormula;
  exportFormula?: PriceFormula;
  /** Per slot, W ≥ 0 (site level). */
  pvForecast?: number[];
  loadForecast?: number[];
  /** Per slot, W ≥ 0 or null (no limit); or one number for every slot. */
  gridImportMax?: Array<number | null> | number;
  gridExportMax?: Array<number | null> | number;
  battery: SiteBatteryInput;
  site?: SiteLimitsInput;
  socEnd?: number;
  now?: TimeInput;
}

/** A checked input: the solver's model, and what the plan's output needs beside it. */
export interface SiteInput {
  model: SiteModel;
  start: EpochMs[];
  end: EpochMs[];
  /** The input slot each slot came from (after any split), for messages. */
  index: number[];
  currency?: string;
  capacityKWh: number;
  socMin: number;
  socMax: number;
  soc: number;
  socEnd?: number;
  targets: Array<{ soc: number; time: EpochMs; boundary: number; field: string }>;
  /** Which per-slot inputs were given (for messages and reasons). */
  given: { pv: boolean; load: boolean; importMax: boolean; exportMax: boolean };
}

type Rec = Record<string, unknown>;
const isObject = (v: unknown): v is Rec =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
const absent = (v: unknown) => v === undefined || v === null || v === '';

/** A per-slot array of W ≥ 0 (`nullable`: null for no limit; a single number stands for every slot). */
function perSlot(input: unknown, field: string, n: number, nullable: boolean): Float64Array | undefined {
  if (absent(input)) return undefined;
  const out = new Float64Array(n);
  const what = nullable ? 'a finite number of W ≥ 0, or null for no limit' : 'a finite number of W ≥ 0';
  const one = (v: unknown, f: string): number => {
    if (nullable && (v === null || v === undefined)) return Infinity;
    let value = NaN;
    try {
      if (typeof v === 'number' || typeof v === 'string') value = parseNumber(v, f);
    } catch {
      /* refused below, in this field's words */
    }
    if (!(value >= 0))
      throw new ValidationError(
        f,
        `must be ${what}; got ${show(v)}`,
        typeof v === 'number' ? 'unprocessable' : 'malformed',
      );
    return value;
  };
  if (nullable && !Array.isArray(input)) return out.fill(one(input, field));
  if (!Array.isArray(input))
    throw new ValidationError(
      field,
      `must be an array with one value per price slot (${n}), each ${what}; got ${show(input)}`,
    );
  if (input.length !== n)
    throw new ValidationError(field, `must have one value per price slot: ${n}; got ${input.length}`, 'unprocessable');
  input.forEach((v, k) => {
    out[k] = one(v, `${field}[${k}]`);
  });
  return out;
}

/** A yes/no setting, true when absent (true, false, or the texts "true" and "false"). */
function flag(input: unknown, field: string): boolean {
  if (absent(input) || input === true || input === 'true') return true;
  if (input === false || input === 'false') return false;
  throw new ValidationError(field, `must be true or false; got ${show(input)}`);
}

/** A number ≥ 0 (or the default when absent). */
function nonNegative(input: unknown, field: string, dflt: number, what: string): number {
  if (absent(input)) return dflt;
  return numberIn(input, field, 0, Infinity, false, `${what} ≥ 0`);
}

function parseTargets(
  input: unknown,
  socMin: number,
  socMax: number,
): Array<{ soc: number; time: EpochMs; field: string }> {
  if (absent(input)) return [];
  if (Array.isArray(input) && input.length > INPUTS.socTargets)
    throw tooLong('battery.socTarget', INPUTS.socTargets, input.length, 'targets');
  const list = Array.isArray(input) ? input : [input];
  return list.map((t, j) => {
    const path = Array.isArray(input) ? `battery.socTarget[${j}]` : 'battery.socTarget';
    if (!isObject(t))
      throw new ValidationError(path, `must be an object {soc, time}: at least soc % by time; got ${show(t)}`);
    refuseUnknownKeys(t, ['soc', 'time'], path, `a field of ${path}`);
    if (absent(t.soc))
      throw new ValidationError(
        `${path}.soc`,
        `must be given: a SOC in % within battery.socMin and battery.socMax [${socMin}, ${socMax}]; got nothing`,
      );
    const soc = numberIn(
      t.soc,
      `${path}.soc`,
      socMin,
      socMax,
      false,
      `a SOC in % within battery.socMin and battery.socMax [${socMin}, ${socMax}]`,
    );
    if (absent(t.time))
      throw new ValidationError(`${path}.time`, 'must be given (epoch ms, ISO 8601 string or Date); got nothing');
    return { soc, time: parseTime(t.time, `${path}.time`), field: path };
  });
}

/** Checks and normalises the site planner's input into the solver's model. */
export function parseSiteInput(input: unknown): SiteInput {
  if (!isObject(input))
    throw new ValidationError(
      'input',
      `must be an object {prices, battery, pvForecast?, loadForecast?, gridImportMax?, gridExportMax?, site?, …}; got ${show(input)}`,
    );
  refuseUnknownKeys(input, PLANNER_FIELDS, '', 'a planner field');
  let slotMinutes: number | undefined;
  if (!absent(input.slotMinutes)) {
    slotMinutes = numberIn(
      input.slotMinutes,
      'slotMinutes',
      0,
      1440,
      true,
      'a whole number of minutes within [1, 1440]',
    );
    if (!Number.isInteger(slotMinutes))
      throw new ValidationError(
        'slotMinutes',
        `must be a whole number of minutes within [1, 1440]; got ${slotMinutes}`,
        'unprocessable',
      );
  }
  const feed = readPriceFeed(input.prices, 'prices', slotMinutes);
  const all = feed.slots;
  if (all.length > MAX_PRICE_SLOTS)
    throw new ValidationError(
      'prices',
      `must have at most ${MAX_PRICE_SLOTS} slots; got ${all.length}`,
      'unprocessable',
    );
  const unit = absent(input.priceUnit) ? (feed.unit ?? 'kWh') : parsePriceUnit(input.priceUnit);
  let currency = feed.currency ?? unitOf(input.priceUnit)?.currency;
  if (!absent(input.currency)) {
    if (typeof input.currency !== 'string' || input.currency.length > 12)
      throw new ValidationError('currency', `must be a short text (EUR, ct, NOK); got ${show(input.currency)}`);
    currency = input.currency;
  }
  const importFormula = parsePriceFormula(input.importFormula, 'importFormula');
  const exportFormula = parsePriceFormula(input.exportFormula, 'exportFormula');
  const priceSlotCount = all.length;
  const pv = perSlot(input.pvForecast, 'pvForecast', priceSlotCount, false);
  const load = perSlot(input.loadForecast, 'loadForecast', priceSlotCount, false);
  const imax = perSlot(input.gridImportMax, 'gridImportMax', priceSlotCount, true);
  const xmax = perSlot(input.gridExportMax, 'gridExportMax', priceSlotCount, true);

  const batteryInput = input.battery;
  if (!isObject(batteryInput)) {
    throw new ValidationError(
      'battery',
      `must be an object {capacityKWh, maxChargeKW, maxDischargeKW?, socMin?, socMax?, efficiency?, chargeEfficiency?, dischargeEfficiency?, cycleCost?, socTarget?, endValue?, soc}; got ${show(batteryInput)}`,
    );
  }
  refuseUnknownKeys(batteryInput, BATTERY_FIELDS, 'battery', 'a field of battery');
  const battery = parseBattery(batteryInput);
  const batteryFields = batteryInput as Rec;
  const rootEff = Math.sqrt(battery.efficiency);
  const eff = (k: string) =>
    absent(batteryFields[k])
      ? rootEff
      : numberIn(batteryFields[k], `battery.${k}`, 0, 1, true, 'an efficiency within (0, 1] (0.95 for 95 %)');
  const etaC = eff('chargeEfficiency');
  const etaD = eff('dischargeEfficiency');
  const wear = nonNegative(batteryFields.cycleCost, 'battery.cycleCost', 0, 'a cost per kWh of throughput');
  const gridCharge = flag(batteryFields.gridCharge, 'battery.gridCharge');
  const gridDischarge = flag(batteryFields.gridDischarge, 'battery.gridDischarge');
  const sellSocMin = absent(batteryFields.sellSocMin)
    ? undefined
    : numberIn(
        batteryFields.sellSocMin,
        'battery.sellSocMin',
        battery.socMin,
        battery.socMax,
        false,
        `a SOC in % within battery.socMin and battery.socMax [${battery.socMin}, ${battery.socMax}]`,
      );
  const endValue = nonNegative(batteryFields.endValue, 'battery.endValue', 0, 'a value per kWh stored');
  const targetsIn = parseTargets(batteryFields.socTarget, battery.socMin, battery.socMax);

  let site: Rec = {};
  if (!absent(input.site)) {
    if (!isObject(input.site))
      throw new ValidationError(
        'site',
        `must be an object {importLimitW?, exportLimitW?, peakCost?, peakSoFarW?}; got ${show(input.site)}`,
      );
    site = input.site;
    refuseUnknownKeys(site, ['importLimitW', 'exportLimitW', 'peakCost', 'peakSoFarW'], 'site', 'a field of site');
  }
  const siteImport = nonNegative(site.importLimitW, 'site.importLimitW', Infinity, 'a number of W');
  const siteExport = nonNegative(site.exportLimitW, 'site.exportLimitW', Infinity, 'a number of W');
  const peakCost = nonNegative(site.peakCost, 'site.peakCost', 0, 'a cost per kW of the highest import');
  const peakSoFar = nonNegative(site.peakSoFarW, 'site.peakSoFarW', 0, 'a number of W');

  let socEnd: number | undefined;
  if (!absent(input.socEnd)) {
    socEnd = numberIn(
      input.socEnd,
      'socEnd',
      battery.socMin,
      battery.socMax,
      false,
      `a SOC in % within battery.socMin and battery.socMax [${battery.socMin}, ${battery.socMax}]`,
    );
  }

  // slots, with `now`: ended ones dropped, the one in progress starting now
  let keep = all.map((s, k) => ({ s, k, start: s.start }));
  if (!absent(input.now)) {
    const now = parseTime(input.now, 'now');
    keep = keep.filter((x) => x.s.end > now).map((x) => (x.start < now ? { ...x, start: now } : x));
    if (keep.length === 0)
      throw new ValidationError(
        'prices',
        `must have a slot that ends after now (${new Date(now).toISOString()}); every slot is in the past`,
        'unprocessable',
      );
  }
  const slots: SlotData[] = keep.map(({ s, k, start }) => {
    const pi = applyPriceFormula(s.importBase, unit, importFormula);
    const px = applyPriceFormula(s.exportBase, unit, exportFormula);
    if (!Number.isFinite(pi) || !Number.isFinite(px))
      throw new ValidationError(
        `${s.field}.price`,
        `must give finite prices through the formulas; got import ${pi}, export ${px}`,
        'unprocessable',
      );
    return {
      dt: (s.end - start) / HOUR_MS,
      pi,
      px,
      pv: pv ? pv[k] / 1000 : 0,
      load: load ? load[k] / 1000 : 0,
      imax: Math.min(imax ? imax[k] : Infinity, siteImport) / 1000,
      xmax: Math.min(xmax ? xmax[k] : Infinity, siteExport) / 1000,
    };
  });
  const slotCount = slots.length;
  const start = keep.map((x) => x.start);
  const end = keep.map((x) => x.s.end);

  // SOC bounds per boundary: the window (or from a SOC outside it, never further out), targets, socEnd
  const cap = battery.capacityKWh;
  const e0 = (battery.soc / 100) * cap;
  const lb = new Float64Array(slotCount + 1).fill(Math.min((battery.socMin / 100) * cap, e0));
  const ub = new Float64Array(slotCount + 1).fill(Math.max((battery.socMax / 100) * cap, e0));
  const targets: SiteInput['targets'] = [];
  for (const t of targetsIn) {
    if (t.time <= start[0]) continue; // passed
    let boundary = 0;
    while (boundary < slotCount && end[boundary] <= t.time) boundary++;
    boundary = Math.max(1, boundary);
    lb[boundary] = Math.max(lb[boundary], (t.soc / 100) * cap);
    targets.push({ ...t, boundary });
  }
  if (socEnd !== undefined) lb[slotCount] = Math.max(lb[slotCount], (socEnd / 100) * cap);

  const model: SiteModel = {
    slots,
    battery: { C: battery.maxChargeKW, D: battery.maxDischargeKW, etaC, etaD, wear, gridCharge, gridDischarge },
    e0,
    lb,
    ub,
    endValue,
    sellMin: sellSocMin === undefined || !gridDischarge ? undefined : (sellSocMin / 100) * cap,
    peakCost,
    peakFloor: peakSoFar / 1000,
    tolE: 1e-11 * Math.max(1, cap),
  };
  return {
    model,
    start,
    end,
    index: keep.map((x) => x.k),
    currency,
    capacityKWh: cap,
    socMin: battery.socMin,
    socMax: battery.socMax,
    soc: battery.soc,
    socEnd,
    targets,
    given: {
      pv: !!pv,
      load: !!load,
      importMax: !!imax || siteImport < Infinity,
      exportMax: !!xmax || siteExport < Infinity,
    },
  };
}

/** Whether an input uses anything of the site model (else the price-only planner serves it). */
export const SITE_FIELDS = [
  'importFormula',
  'exportFormula',
  'pvForecast',
  'loadForecast',
  'gridImportMax',
  'gridExportMax',
  'site',
  'currency',
  'slotMinutes',
] as const;
export const SITE_BATTERY_FIELDS = [
  'chargeEfficiency',
  'dischargeEfficiency',
  'cycleCost',
  'socTarget',
  'endValue',
  'gridCharge',
  'gridDischarge',
  'sellSocMin',
] as const;
