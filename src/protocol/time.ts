/**
 * Time handling: parsing of user times, the formats the API wants, quarter hours,
 * and splitting long time-series ranges into spans the service accepts.
 * All arithmetic is in UTC epoch milliseconds, so DST changes never shift a point.
 */
import { ValidationError } from './errors';
import { show } from './units';
import type { EpochMs } from './types';
import { SERVICE } from './limits';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
export const QUARTER_HOUR_MS = 15 * MINUTE_MS;
/** Maximum span of one time-series request (spec 4.5, 8). */
export const MAX_SPAN_MS = SERVICE.maxSpanDays * DAY_MS;

const ISO_RE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Parses epoch ms (number or numeric string), an ISO 8601 string, or a Date.
 * An ISO string without an offset is read as UTC, so results never depend on the
 * machine's time zone.
 */
export function parseTime(input: unknown, field: string): EpochMs {
  if (input instanceof Date) {
    const ms = input.getTime();
    if (Number.isFinite(ms)) return ms;
  } else if (typeof input === 'number') {
    if (Number.isFinite(input) && Math.abs(input) < MAX_DATE_MS) return Math.trunc(input);
  } else if (typeof input === 'string') {
    const trimmed = input.trim();
    if (/^\d{10,14}$/.test(trimmed)) return Number(trimmed);
    if (ISO_RE.test(trimmed)) {
      const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(trimmed) && trimmed.length > 10;
      const ms = Date.parse(
        hasZone ? trimmed : trimmed.length === 10 ? `${trimmed}T00:00:00Z` : `${trimmed.replace(' ', 'T')}Z`,
      );
      if (Number.isFinite(ms)) return ms;
    }
  }
  throw new ValidationError(field, `must be epoch milliseconds, an ISO 8601 string or a Date; got ${show(input)}`);
}

/** Optional variant: undefined / null / "" stay undefined. */
export function parseOptionalTime(input: unknown, field: string): EpochMs | undefined {
  if (input === undefined || input === null || input === '') return undefined;
  return parseTime(input, field);
}

/** The largest epoch milliseconds a Date can hold (ECMAScript: ±8.64e15). */
export const MAX_DATE_MS = 8.64e15;

/** An epoch time as ISO 8601 when a Date can hold it, else as it is (for messages naming a bad time). */
export function isoOrRaw(t: number): string {
  return Number.isFinite(t) && Math.abs(t) <= MAX_DATE_MS ? new Date(t).toISOString() : String(t);
}

/**
 * The one check that a signal's validUntil lies in the future (the validators with `now`, and
 * the client's trusted steering path before it sends): refused naming validUntil.
 */
export function checkFuture(validUntil: number, now: number): void {
  if (!(validUntil > now))
    throw new ValidationError('validUntil', `must be in the future; got ${isoOrRaw(validUntil)}`, 'unprocessable');
}

/** "24 h", "90 min", "1 h 30 min": a limit in words. */
export function formatSpan(ms: number): string {
  const min = Math.round(ms / MINUTE_MS);
  const hours = Math.floor(min / 60);
  const minutes = min % 60;
  return hours === 0 ? `${minutes} min` : minutes === 0 ? `${hours} h` : `${hours} h ${minutes} min`;
}

/**
 * The one check of the config node's maxValidity: refuses a validUntil more than
 * `maxValidityMs` after `now` (none when unset or 0), naming `field` (where the value came
 * from) and the limit; `got` describes the value as the caller received it.
 */
export function checkMaxValidity(
  validUntil: number,
  maxValidityMs: number | undefined,
  now: number,
  field = 'validUntil',
  got?: string,
): void {
  if (maxValidityMs === undefined || !(maxValidityMs > 0)) return;
  if (Number.isFinite(validUntil) && validUntil - now <= maxValidityMs) return;
  const iso = isoOrRaw(validUntil);
  const limit = `${formatSpan(maxValidityMs)} (the config node's maxValidity, ${Math.round(maxValidityMs / MINUTE_MS)} min) from now`;
  const what =
    field === 'validUntil' || /\.validUntil$/.test(field)
      ? `must be at most ${limit}; got ${iso}`
      : `must give a validUntil at most ${limit}; got ${got ?? iso} (validUntil ${iso})`;
  throw new ValidationError(field, `${what}; nothing was sent`, 'unprocessable');
}

/** "00".."59", for toIsoSeconds. */
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
/** The UTC day toIsoSeconds formatted last, and its "YYYY-MM-DDT" prefix. */
let isoDay = Number.NaN;
let isoDayPrefix = '';

/** ISO 8601 UTC without milliseconds, as the time-series range uses: 2026-11-22T10:15:00Z. */
export function toIsoSeconds(t: EpochMs): string {
  // The simulator formats one string per time-series point, mostly of the same day:
  // Date#toISOString once per UTC day, arithmetic for the time of day (about 8x cheaper).
  const day = Math.floor(t / DAY_MS);
  if (day !== isoDay) {
    const iso = Math.abs(t) <= MAX_DATE_MS ? new Date(day * DAY_MS).toISOString() : '';
    // Years outside 0000-9999 (and invalid times) take the plain path, which throws for invalid ones.
    if (iso.length !== 24) return new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
    isoDay = day;
    isoDayPrefix = iso.slice(0, 11);
  }
  const secondOfDay = Math.floor((t - day * DAY_MS) / 1000);
  return `${isoDayPrefix}${TWO_DIGITS[Math.floor(secondOfDay / 3600)]}:${TWO_DIGITS[Math.floor(secondOfDay / 60) % 60]}:${TWO_DIGITS[secondOfDay % 60]}Z`;
}

/** The UTC day parseIsoTime parsed last: its "YYYY-MM-DDT" prefix and epoch ms. */
let parsedDayPrefix = '\u0000'; // matches no string until the first day is parsed
let parsedDayMs = Number.NaN;

const digit = (s: string, i: number): number => {
  const value = s.charCodeAt(i) - 48;
  return value >= 0 && value <= 9 ? value : Number.NaN;
};

/**
 * Date.parse for time-series timestamps: strings of the API's own form
 * "YYYY-MM-DDTHH:MM:SSZ" are read digit by digit against a cached day (about 2x
 * cheaper, for merging thousands of points); any other string goes to Date.parse.
 */
export function parseIsoTime(s: string): number {
  if (
    typeof s !== 'string' ||
    s.length !== 20 ||
    s.charCodeAt(10) !== 84 /* T */ ||
    s.charCodeAt(19) !== 90 /* Z */ ||
    s.charCodeAt(13) !== 58 ||
    s.charCodeAt(16) !== 58 /* : */
  )
    return Date.parse(s);
  if (!s.startsWith(parsedDayPrefix)) {
    const prefix = s.slice(0, 11);
    const ms = Date.parse(`${prefix}00:00:00Z`);
    if (Number.isNaN(ms)) return Date.parse(s);
    parsedDayPrefix = prefix;
    parsedDayMs = ms;
  }
  const hours = digit(s, 11) * 10 + digit(s, 12);
  const minutes = digit(s, 14) * 10 + digit(s, 15);
  const sec = digit(s, 17) * 10 + digit(s, 18);
  if (!(hours < 24 && minutes < 60 && sec < 60)) return Date.parse(s);
  return parsedDayMs + hours * HOUR_MS + minutes * 60_000 + sec * 1000;
}

/** The end of the quarter hour that contains `now` (UTC-aligned; equal to the next boundary). */
export function endOfQuarterHour(now: EpochMs): EpochMs {
  return Math.floor(now / QUARTER_HOUR_MS) * QUARTER_HOUR_MS + QUARTER_HOUR_MS;
}

/**
 * End of the current quarter hour, or of the next one when fewer than `minRemainingMs`
 * remain (a signal that expires within seconds is of no use).
 */
export function quarterHourValidUntil(now: EpochMs, minRemainingMs = MINUTE_MS): EpochMs {
  const end = endOfQuarterHour(now);
  return end - now < minRemainingMs ? end + QUARTER_HOUR_MS : end;
}

export interface Span {
  start: EpochMs;
  end: EpochMs;
}

/**
 * Splits [start, end) into consecutive spans of at most `maxSpanMs`, with neither gaps
 * nor overlaps: each span's end is the next span's start. With a `stepMs` (the
 * resolution), span lengths are multiples of it, so the points `start + k * step`
 * of every span lie on the grid of the whole range.
 */
export function splitRange(start: EpochMs, end: EpochMs, stepMs?: number, maxSpanMs = MAX_SPAN_MS): Span[] {
  if (!(end > start)) return [];
  let len = maxSpanMs;
  if (stepMs && stepMs > 0 && stepMs <= maxSpanMs) len = Math.floor(maxSpanMs / stepMs) * stepMs;
  const spans: Span[] = [];
  for (let s = start; s < end; s += len) spans.push({ start: s, end: Math.min(s + len, end) });
  return spans;
}

/** The last minute formatClock formatted, and its text (status texts name the same minute over and over). */
let clockMinute = NaN;
let clockText = '';

/** Formats a time for node status, HH:MM in the runtime's local time. */
export function formatClock(t: EpochMs): string {
  // Time zone offsets and their changes fall on whole minutes, so one epoch minute is one HH:MM.
  const minute = Math.floor(t / 60_000);
  if (minute === clockMinute) return clockText;
  const date = new Date(t);
  const text = `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
  if (Number.isFinite(minute)) {
    clockMinute = minute;
    clockText = text;
  }
  return text;
}
