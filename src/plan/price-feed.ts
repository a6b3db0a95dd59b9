/**
 * Price feeds as Node-RED price sources emit them, read into price slots, and the price
 * formula that turns a spot price into what a site pays or earns. Pure: no I/O, no clock
 * (Nord Pool's times without an offset are read in the runtime's local time, as that node
 * writes them).
 * The forms it reads: above readPriceFeed.
 */
import { tooLong, ValidationError } from '../protocol/errors';
import { INPUTS } from '../protocol/limits';
import { MINUTE_MS, parseTime } from '../protocol/time';
import { parseNumber, show } from '../protocol/units';
import { SLOT_FIELDS, refuseUnknownKeys } from './keys';

/** A price slot as read: epoch ms, the base prices (in the feed's unit) for import and export, and the field it came from. */
export interface FeedSlot {
  start: number;
  end: number;
  importBase: number;
  exportBase: number;
  field: string;
}

export interface PriceFeed {
  slots: FeedSlot[];
  /** The energy unit the feed names itself (Nord Pool's Valuta), if it does. */
  unit?: 'kWh' | 'MWh';
  /** The currency the feed names (Nord Pool's Valuta, Tibber's currency), if it does. */
  currency?: string;
}

/** What a site pays (import) or earns (export) per kWh from a base price: (base per kWh × multiplier + fee) × vat. */
export interface PriceFormula {
  /** Default 1 (a currency change, say 100 for EUR → ct, or a supplier's share). */
  multiplier?: number;
  /** Per kWh, in the plan's currency, added before VAT; default 0 (grid fees, levies, margin). */
  fee?: number;
  /** A factor, 1.19 for 19 %; default 1. */
  vat?: number;
}

type Rec = Record<string, unknown>;
const isObject = (v: unknown): v is Rec =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
const absent = (v: unknown) => v === undefined || v === null || v === '';

const FORMS =
  "{start, end (or duration in minutes), price} (or importPrice and exportPrice), a price source's {start, value}, Tibber's {startsAt, total} or Nord Pool's {StartTime, Price}";

/** `EUR/MWh`, `ct/kWh`, `NOK/kWh`: its energy unit and currency, when the string is one. */
export function unitOf(input: unknown): { unit: 'kWh' | 'MWh'; currency?: string } | undefined {
  const match = typeof input === 'string' ? /^\s*(?:([^/]{1,12})\/)?\s*(k|m)wh\s*$/i.exec(input) : null;
  if (!match) return undefined;
  return { unit: match[2].toLowerCase() === 'k' ? 'kWh' : 'MWh', currency: match[1]?.trim() || undefined };
}

/** Nord Pool's local "YYYY-MM-DD HH:mm" (no offset) in the runtime's time zone; anything else as parseTime reads it. */
function localTime(input: unknown, field: string): number {
  const match =
    typeof input === 'string' ? /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(input.trim()) : null;
  if (!match) return parseTime(input, field);
  const time = new Date(+match[1], +match[2] - 1, +match[3], +match[4], +match[5], +(match[6] ?? 0)).getTime();
  if (!Number.isFinite(time)) return parseTime(input, field);
  return time;
}

/**
 * The items of a feed and the path of each (for errors), from any accepted wrapper. A list of
 * more than INPUTS.priceSlots items is refused by its length, before any item is read.
 */
function itemsOf(input: unknown, field: string): Array<{ item: unknown; path: string }> {
  const max = INPUTS.priceSlots;
  const list = (a: unknown[], path: string) => {
    if (a.length > max) throw tooLong(path, max, a.length, 'slots');
    return a.map((item, i) => ({ item, path: `${path}[${i}]` }));
  };
  if (Array.isArray(input)) return list(input, field);
  if (isObject(input)) {
    if (Array.isArray(input.priceData)) return list(input.priceData, `${field}.priceData`);
    if (Array.isArray(input.today) || Array.isArray(input.tomorrow)) {
      const today = Array.isArray(input.today) ? input.today : [];
      const tomorrow = Array.isArray(input.tomorrow) ? input.tomorrow : [];
      if (today.length + tomorrow.length > max)
        throw tooLong(
          field,
          max,
          today.length + tomorrow.length,
          'slots in today and tomorrow together',
          ` (${today.length} + ${tomorrow.length})`,
        );
      return [...list(today, `${field}.today`), ...list(tomorrow, `${field}.tomorrow`)];
    }
    const viewer = input.viewer;
    if (isObject(viewer) && Array.isArray(viewer.homes)) {
      const home = viewer.homes[0];
      const info =
        isObject(home) && isObject(home.currentSubscription) ? home.currentSubscription.priceInfo : undefined;
      return itemsOf(info, `${field}.viewer.homes[0].currentSubscription.priceInfo`);
    }
  }
  throw new ValidationError(
    field,
    `must be a non-empty array of price slots ${FORMS}, or {priceData: [...]} or Tibber's {today, tomorrow}; got ${show(input)}`,
  );
}

/** One item: start, optional end, base prices, and the unit/currency it names. */
function readItem(
  item: unknown,
  f: string,
): { start: number; end?: number; importBase: number; exportBase: number; unit?: string; currency?: string } {
  if (!isObject(item)) throw new ValidationError(f, `must be an object ${FORMS}; got ${show(item)}`);
  let end: number | undefined;
  if (item.startsAt !== undefined && item.total !== undefined) {
    // Tibber
    const price = parseNumber(item.total, `${f}.total`);
    return {
      start: parseTime(item.startsAt, `${f}.startsAt`),
      importBase: price,
      exportBase: price,
      currency: typeof item.currency === 'string' ? item.currency : undefined,
    };
  }
  if ((item.StartTime !== undefined || item.Timestamp !== undefined) && item.Price !== undefined) {
    // Nord Pool
    const key = item.StartTime !== undefined ? 'StartTime' : 'Timestamp';
    const start = localTime(item[key], `${f}.${key}`);
    if (!absent(item.EndTime)) end = localTime(item.EndTime, `${f}.EndTime`);
    const price = parseNumber(item.Price, `${f}.Price`);
    const valuta = unitOf(item.Valuta);
    return { start, end, importBase: price, exportBase: price, unit: valuta?.unit, currency: valuta?.currency };
  }
  if (item.start === undefined)
    throw new ValidationError(
      `${f}.start`,
      `must be given (epoch ms, ISO 8601 string or Date): a slot is ${FORMS}; got nothing`,
    );
  refuseUnknownKeys(item, SLOT_FIELDS, f, 'a field of a price slot');
  const start = parseTime(item.start, `${f}.start`);
  if (!absent(item.end)) end = parseTime(item.end, `${f}.end`);
  if (!absent(item.duration)) {
    const minutes = parseNumber(item.duration, `${f}.duration`);
    if (!(minutes > 0 && minutes <= 10_080))
      throw new ValidationError(
        `${f}.duration`,
        `must be a number of minutes above 0 (at most a week); got ${minutes}`,
        'unprocessable',
      );
    const byDuration = start + Math.round(minutes * MINUTE_MS);
    if (end !== undefined && end !== byDuration)
      throw new ValidationError(
        `${f}.duration`,
        `disagrees with ${f}.end (give one of end and duration); got ${minutes}`,
        'unprocessable',
      );
    end = byDuration;
  }
  const has = (k: string) => !absent(item[k]);
  if (has('importPrice') || has('exportPrice')) {
    const base = has('price') ? parseNumber(item.price, `${f}.price`) : undefined;
    const importPrice = has('importPrice') ? parseNumber(item.importPrice, `${f}.importPrice`) : base;
    const exportPrice = has('exportPrice') ? parseNumber(item.exportPrice, `${f}.exportPrice`) : base;
    if (importPrice === undefined)
      throw new ValidationError(
        `${f}.importPrice`,
        `must be given with exportPrice (or price, meaning both); got nothing`,
      );
    if (exportPrice === undefined)
      throw new ValidationError(
        `${f}.exportPrice`,
        `must be given with importPrice (or price, meaning both); got nothing`,
      );
    return { start, end, importBase: importPrice, exportBase: exportPrice };
  }
  const key = has('price') ? 'price' : has('value') ? 'value' : undefined;
  if (!key)
    throw new ValidationError(
      `${f}.price`,
      `must be given (a finite number: price, or importPrice and exportPrice, or value); got nothing`,
    );
  const price = parseNumber(item[key], `${f}.${key}`);
  return { start, end, importBase: price, exportBase: price };
}

/**
 * Reads a price feed into sorted, non-overlapping slots (gaps allowed); with `slotMinutes`, longer slots are
 * split into slots of that length. Accepts this package's slots, {start, value} (ENTSO-E, power-saver),
 * power-saver's {priceData}, Tibber and Nord Pool answers (the forms: docs/planner.md, "Inputs").
 * A slot without an end ends where the next starts; the last lasts as long as the one before.
 */
export function readPriceFeed(input: unknown, field = 'prices', slotMinutes?: number): PriceFeed {
  const items = itemsOf(input, field);
  if (items.length === 0)
    throw new ValidationError(field, `must be a non-empty array of price slots ${FORMS}; got an empty array`);
  const read = items.map(({ item, path }) => ({ ...readItem(item, path), path }));
  const slots: FeedSlot[] = [];
  read.forEach((r, i) => {
    let end = r.end;
    if (end === undefined) {
      const next = read[i + 1];
      if (next) end = next.start;
      else if (i > 0) end = r.start + (slots[i - 1].end - slots[i - 1].start);
      else
        throw new ValidationError(
          `${r.path}.end`,
          'must be given for a single slot (epoch ms, ISO 8601 string or Date), or duration in minutes; got nothing',
        );
    }
    if (!(end > r.start))
      throw new ValidationError(
        `${r.path}.end`,
        `must be after the slot's start (${new Date(r.start).toISOString()}); got ${new Date(end).toISOString()}`,
        'unprocessable',
      );
    const prev = slots[i - 1];
    if (prev && r.start < prev.end) {
      throw new ValidationError(
        `${r.path}.start`,
        `must not be before the end of ${prev.field} (${new Date(prev.end).toISOString()}): slots sorted by time, not overlapping; got ${new Date(r.start).toISOString()}`,
        'unprocessable',
      );
    }
    slots.push({ start: r.start, end, importBase: r.importBase, exportBase: r.exportBase, field: r.path });
  });
  const named = read.find((r) => r.unit !== undefined || r.currency !== undefined);
  const feed: PriceFeed = { slots, unit: named?.unit as PriceFeed['unit'], currency: named?.currency };
  if (slotMinutes !== undefined) feed.slots = splitSlots(slots, slotMinutes, field);
  return feed;
}

/** Slots split into slots of `minutes`; more than INPUTS.priceSlots after the split is refused, counted before any is made. */
function splitSlots(slots: FeedSlot[], minutes: number, field: string): FeedSlot[] {
  const step = Math.round(minutes * MINUTE_MS);
  let count = 0;
  for (const s of slots) {
    const len = s.end - s.start;
    if (len % step !== 0) {
      throw new ValidationError(
        `${s.field}.end`,
        `must make a slot a whole number of slotMinutes (${minutes}) long; got a slot of ${len / MINUTE_MS} minutes`,
        'unprocessable',
      );
    }
    count += len / step;
  }
  if (count > INPUTS.priceSlots)
    throw tooLong(field, INPUTS.priceSlots, count, `slots once split into slots of ${minutes} min (slotMinutes)`);
  const out: FeedSlot[] = [];
  for (const s of slots) for (let t = s.start; t < s.end; t += step) out.push({ ...s, start: t, end: t + step });
  return out;
}

/** A formula checked: every field named (`importFormula.vat`), unknown fields refused. */
export function parsePriceFormula(input: unknown, field: string): Required<PriceFormula> {
  const out = { multiplier: 1, fee: 0, vat: 1 };
  if (absent(input)) return out;
  if (!isObject(input))
    throw new ValidationError(
      field,
      `must be an object {multiplier?, fee?, vat?}: price per kWh = (base × multiplier + fee) × vat; got ${show(input)}`,
    );
  for (const k of Object.keys(input)) {
    if (!(k in out))
      throw new ValidationError(
        `${field}.${k}`,
        `is not a field of ${field}; accepted: multiplier, fee (per kWh), vat (a factor, 1.19 for 19 %)`,
      );
  }
  if (!absent(input.multiplier)) out.multiplier = parseNumber(input.multiplier, `${field}.multiplier`);
  if (!absent(input.fee)) out.fee = parseNumber(input.fee, `${field}.fee`);
  if (!absent(input.vat)) {
    out.vat = parseNumber(input.vat, `${field}.vat`);
    if (!(out.vat > 0))
      throw new ValidationError(
        `${field}.vat`,
        `must be a factor above 0 (1.19 for 19 % VAT); got ${out.vat}`,
        'unprocessable',
      );
  }
  return out;
}

/** A base price (per `unit`) through a formula: per kWh. */
export function applyPriceFormula(base: number, unit: 'kWh' | 'MWh', f: Required<PriceFormula>): number {
  const perKWh = unit === 'MWh' ? base / 1000 : base;
  return (perKWh * f.multiplier + f.fee) * f.vat;
}
