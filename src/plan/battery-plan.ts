/**
 * One entry for both planners: the price-only planner (price-plan.ts, a DP on a SOC grid)
 * for an input it has always taken, with byte-for-byte the same result as before; the site
 * planner (site-plan.ts, the exact LP optimum) as soon as the input uses anything of the site
 * model, or when `solver: 'lp'` asks for it. A price source's feed (price-feed.ts) without
 * site inputs goes to the price-only planner as its slots. Pure: no I/O, no clock.
 */
import { planFromPrices, type PricePlan } from './price-plan';
import { MAX_PRICE_SLOTS, type PricePlanInput } from './price-input';
import { tooLong } from '../protocol';
import { readPriceFeed } from './price-feed';
import { SITE_BATTERY_FIELDS, SITE_FIELDS, type SitePlanInput } from './site-input';
import { planSite, type SitePlan } from './site-plan';
import { BATTERY_FIELDS, PLANNER_FIELDS, refuseUnknownKeys } from './keys';

export type BatteryPlanInput = (PricePlanInput | SitePlanInput) & { solver?: 'auto' | 'lp' };

type Rec = Record<string, unknown>;
const isObject = (v: unknown): v is Rec =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
const set = (v: unknown) => v !== undefined && v !== null && v !== '';
/** The keys of the price-only planner's slots. */
const PRICE_SLOT_KEYS = new Set(['start', 'end', 'duration', 'price']);

/** Whether an input needs the site planner (any site field, per-slot import/export prices, or solver 'lp'). */
function usesSiteModel(input: unknown): boolean {
  if (!isObject(input)) return false;
  if (input.solver === 'lp') return true;
  if (SITE_FIELDS.some((k) => set(input[k]))) return true;
  const battery = input.battery;
  // gridCharge and gridDischarge true are every planner's default: only false needs the site planner
  if (
    isObject(battery) &&
    SITE_BATTERY_FIELDS.some(
      (k) =>
        set(battery[k]) &&
        !((k === 'gridCharge' || k === 'gridDischarge') && (battery[k] === true || battery[k] === 'true')),
    )
  )
    return true;
  const prices = input.prices;
  return Array.isArray(prices) && prices.some((s) => isObject(s) && (set(s.importPrice) || set(s.exportPrice)));
}

/** Whether the prices are the price-only planner's own slots (or anything it refuses in its own words). */
function ownSlots(prices: unknown): boolean {
  if (!Array.isArray(prices)) return !isObject(prices);
  return prices.every((s) => !isObject(s) || Object.keys(s).every((k) => PRICE_SLOT_KEYS.has(k)) || 'price' in s);
}

/**
 * The plan for any input: PricePlan (price-only, as planFromPrices) or SitePlan (`model: 'site'`).
 * Throws a ValidationError naming the field for any bad input.
 */
export function planBattery(input: BatteryPlanInput): PricePlan | SitePlan {
  // Too many prices are refused by their count before either planner's choice looks at any of them.
  const rawPrices: unknown = isObject(input) ? input.prices : undefined;
  if (Array.isArray(rawPrices) && rawPrices.length > MAX_PRICE_SLOTS)
    throw tooLong('prices', MAX_PRICE_SLOTS, rawPrices.length, 'slots');
  // every planner's fields, before routing: a misspelt site field would otherwise route to the price-only planner
  if (isObject(input)) {
    refuseUnknownKeys(input, PLANNER_FIELDS, '', 'a planner field');
    if (isObject(input.battery)) refuseUnknownKeys(input.battery, BATTERY_FIELDS, 'battery', 'a field of battery');
  }
  if (usesSiteModel(input)) return planSite(input as SitePlanInput);
  const record = input as unknown as Rec;
  if (!isObject(input) || ownSlots(record.prices)) return planFromPrices(input as PricePlanInput);
  const feed = readPriceFeed(record.prices);
  const prices = feed.slots.map((s) => ({ start: s.start, end: s.end, price: s.importBase }));
  return planFromPrices({
    ...(input as PricePlanInput),
    prices,
    priceUnit: set(record.priceUnit) ? (record.priceUnit as string) : feed.unit,
  });
}

export const isSitePlan = (p: PricePlan | SitePlan): p is SitePlan => (p as SitePlan).model === 'site';
