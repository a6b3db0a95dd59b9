/**
 * Forecasts from what a site has, as the site planner takes them: one value in W
 * per price slot. Pure: no I/O, no clock.
 * loadForecastFromHistory (the site's own load history) and resampleForecast (any source's
 * forecast); the forms of a series: above readSeries.
 */
import { tooLong, ValidationError } from '../protocol/errors';
import { INPUTS } from '../protocol/limits';
import { DAY_MS, MINUTE_MS, parseTime } from '../protocol/time';
import { parseNumber, show } from '../protocol/units';
import type { TimeInput } from '../protocol';

/** A point of a series as read: its interval and value. */
export interface SeriesPoint {
  start: number;
  end: number;
  value: number;
}

/** The slots a forecast is for: their start and end (epoch ms, ISO 8601 or Date). */
export type ForecastSlots = ReadonlyArray<{ start: TimeInput; end: TimeInput }>;

export interface HistoryForecastOptions {
  /** The slots to forecast ({start, end} each, e.g. the price slots) … */
  slots: ForecastSlots | number;
  /** … or, with `slots` a count, the first slot's start and the slots' length (minutes, default 15). */
  start?: TimeInput;
  slotMinutes?: number;
  /** Weeks of history: the same weekday and time, 1 … weeks weeks before (default 4). */
  weeks?: number;
  /** Instead of weeks: the same time on each of the last `days` days (a persistence forecast, e.g. of PV). */
  days?: number;
  /** The field named in refusals (default 'history'). */
  field?: string;
}

type Rec = Record<string, unknown>;
const isObject = (v: unknown): v is Rec =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
const has = (o: Rec, k: string) => o[k] !== undefined && o[k] !== null && o[k] !== '';
const iso = (t: number) => new Date(t).toISOString();

const FORMS = '{start, end?, value}, {x, y} or {time, value}';

/** Solcast's period ("PT30M", "PT1H"), ms. */
function periodMs(v: unknown, f: string): number {
  const match = typeof v === 'string' ? /^PT(?:(\d+)H)?(?:(\d+)M)?$/.exec(v) : null;
  const ms = match ? (Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0)) * MINUTE_MS : 0;
  if (!(ms > 0))
    throw new ValidationError(f, `must be an ISO 8601 period of minutes or hours (PT30M, PT1H); got ${show(v)}`);
  return ms;
}

/** Forecast.Solar's local "YYYY-MM-DD HH:MM:SS" (no offset: the runtime's time zone), else as parseTime reads it. */
function localTime(v: string, f: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(v.trim());
  return match
    ? new Date(+match[1], +match[2] - 1, +match[3], +match[4], +match[5], +(match[6] ?? 0)).getTime()
    : parseTime(v, f);
}

/**
 * A PV forecast as its source delivers it, as points {start, end?, value} in W: Solcast's
 * {forecasts: [{period_end, period, pv_estimate}]} (kW, the average over the period that ends at
 * period_end), Forecast.Solar's {result: {watts: {"YYYY-MM-DD HH:MM:SS": W}}} (local times; each
 * value until the next). Undefined for any other form.
 */
function sourceSeries(input: unknown, field: string, max: number): Array<{ p: unknown; f: string }> | undefined {
  if (!isObject(input)) return undefined;
  if (Array.isArray(input.forecasts)) {
    if (input.forecasts.length > max) throw tooLong(`${field}.forecasts`, max, input.forecasts.length, 'points');
    return input.forecasts.map((x, i) => {
      const path = `${field}.forecasts[${i}]`;
      if (!isObject(x))
        throw new ValidationError(path, `must be Solcast's {period_end, period, pv_estimate}; got ${show(x)}`);
      const end = parseTime(x.period_end, `${path}.period_end`);
      const kW = parseNumber(x.pv_estimate, `${path}.pv_estimate`);
      return { p: { start: end - periodMs(x.period, `${path}.period`), end, value: kW * 1000 }, f: path };
    });
  }
  if (isObject(input.result) && isObject(input.result.watts)) {
    const watts = input.result.watts;
    const keys = Object.keys(watts);
    if (keys.length > max) throw tooLong(`${field}.result.watts`, max, keys.length, 'points');
    return keys
      .map((k) => {
        const path = `${field}.result.watts["${k}"]`;
        return { p: { start: localTime(k, path), value: parseNumber(watts[k], path) }, f: path };
      })
      .sort((a, b) => (a.p.start as number) - (b.p.start as number));
  }
  return undefined;
}

/** One point: its start, end (if given) and value, from any accepted form. */
function readPoint(p: unknown, f: string): { start: number; end?: number; value: number; key: string; tKey: string } {
  if (!isObject(p)) throw new ValidationError(f, `must be a point ${FORMS}; got ${show(p)}`);
  const tKey = ['start', 'x', 'time', 'timestamp'].find((k) => has(p, k));
  if (!tKey)
    throw new ValidationError(
      `${f}.start`,
      `must be given (epoch ms, ISO 8601 string or Date): a point is ${FORMS}; got nothing`,
    );
  const vKey = tKey === 'x' ? 'y' : 'value';
  if (!has(p, vKey)) throw new ValidationError(`${f}.${vKey}`, `must be given (a finite number, W); got nothing`);
  const start = parseTime(p[tKey], `${f}.${tKey}`);
  const end = has(p, 'end') ? parseTime(p.end, `${f}.end`) : undefined;
  return { start, end, value: parseNumber(p[vKey], `${f}.${vKey}`), key: vKey, tKey };
}

/**
 * A series read into sorted points with intervals (the forms: docs/planner.md, "Inputs"). `min`: the least
 * value accepted (0 for power that cannot be negative, -Infinity for any). Refuses an unsorted or overlapping
 * series, and one of more than INPUTS.seriesPoints points by its length, before any point is read.
 * Every refusal names the field and the point (`loadHistory[3].value`) or the slot.
 */
export function readSeries(input: unknown, field = 'series', min = -Infinity): SeriesPoint[] {
  const max = INPUTS.seriesPoints;
  let list: Array<{ p: unknown; f: string }>;
  const source = sourceSeries(input, field, max);
  if (source) list = source;
  else if (Array.isArray(input)) {
    if (input.length > max) throw tooLong(field, max, input.length, 'points');
    list = input.map((p, i) => ({ p, f: `${field}[${i}]` }));
  } else if (isObject(input) && Array.isArray(input.time) && Array.isArray(input.data)) {
    const { time, data } = input as { time: unknown[]; data: unknown[] };
    if (time.length > max) throw tooLong(`${field}.time`, max, time.length, 'points');
    if (time.length !== data.length)
      throw new ValidationError(
        `${field}.data`,
        `must have one value per time (${time.length}); got ${data.length}`,
        'unprocessable',
      );
    list = time.map((t, i) => ({ p: { time: t, value: data[i] }, f: `${field}.data[${i}]` }));
  } else {
    throw new ValidationError(
      field,
      `must be an array of points ${FORMS}, or {time: [...], data: [...]}, in W, or Solcast's {forecasts} or Forecast.Solar's {result: {watts}}; got ${show(input)}`,
    );
  }
  if (list.length === 0)
    throw new ValidationError(field, 'must have at least one point; got an empty array', 'unprocessable');
  const read = list.map(({ p, f }) => ({ ...readPoint(p, f), f }));
  read.forEach((r, i) => {
    const prev = read[i - 1];
    if (prev && r.start < prev.start)
      throw new ValidationError(
        `${r.f}.${r.tKey}`,
        `must not be before the point before (${iso(prev.start)}): points sorted by time; got ${iso(r.start)}`,
        'unprocessable',
      );
  });
  const out: SeriesPoint[] = [];
  read.forEach((r, i) => {
    if (!(r.value >= min))
      throw new ValidationError(`${r.f}.${r.key}`, `must be a number of W ≥ ${min}; got ${r.value}`, 'unprocessable');
    let end = r.end;
    if (end === undefined) {
      const next = read[i + 1];
      if (next) end = next.start;
      else if (i > 0) end = r.start + (out[i - 1].end - out[i - 1].start);
      else
        throw new ValidationError(
          `${r.f}.end`,
          'must be given for a series of one point (epoch ms, ISO 8601 string or Date); got nothing',
        );
    }
    if (!(end > r.start))
      throw new ValidationError(
        `${r.f}.end`,
        `must be after the point's start (${iso(r.start)}); got ${iso(end)}`,
        'unprocessable',
      );
    const prev = out[i - 1];
    if (prev && r.start < prev.end)
      throw new ValidationError(
        `${r.f}.start`,
        `must not be before the end of the point before (${iso(prev.end)}): points sorted by time, not overlapping; got ${iso(r.start)}`,
        'unprocessable',
      );
    out.push({ start: r.start, end, value: r.value });
  });
  return out;
}

/** Index of the first point that ends after t (binary search). */
function firstEndingAfter(s: SeriesPoint[], t: number): number {
  let lo = 0;
  let hi = s.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (s[mid].end <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The time-weighted average of the series over [from, to), or undefined when nothing of it overlaps. */
export function averageOver(s: SeriesPoint[], from: number, to: number): number | undefined {
  let sum = 0;
  let covered = 0;
  for (let i = firstEndingAfter(s, from); i < s.length && s[i].start < to; i++) {
    const overlap = Math.min(to, s[i].end) - Math.max(from, s[i].start);
    if (overlap > 0) {
      sum += overlap * s[i].value;
      covered += overlap;
    }
  }
  return covered > 0 ? sum / covered : undefined;
}

/** The slots as epoch ms, from a list of {start, end} or a count with start and slotMinutes. */
function slotsOf(
  o: Pick<HistoryForecastOptions, 'slots' | 'start' | 'slotMinutes'>,
): Array<{ start: number; end: number }> {
  if (typeof o.slots === 'number') {
    if (!(Number.isInteger(o.slots) && o.slots >= 1 && o.slots <= INPUTS.forecastSlots))
      throw new ValidationError(
        'slots',
        `must be a whole number of slots within [1, ${INPUTS.forecastSlots}]; got ${o.slots}`,
        'unprocessable',
      );
    const start = parseTime(o.start, 'start');
    const minutes = o.slotMinutes ?? 15;
    if (!(minutes > 0 && minutes <= 1440))
      throw new ValidationError(
        'slotMinutes',
        `must be a number of minutes within (0, 1440]; got ${show(minutes)}`,
        'unprocessable',
      );
    const len = Math.round(minutes * MINUTE_MS);
    return Array.from({ length: o.slots }, (_, k) => ({ start: start + k * len, end: start + (k + 1) * len }));
  }
  if (!Array.isArray(o.slots) || o.slots.length === 0)
    throw new ValidationError(
      'slots',
      `must be the slots to forecast [{start, end}] or their count (with start); got ${show(o.slots)}`,
    );
  if (o.slots.length > INPUTS.forecastSlots) throw tooLong('slots', INPUTS.forecastSlots, o.slots.length, 'slots');
  return o.slots.map((s, k) => {
    const start = parseTime(s?.start, `slots[${k}].start`);
    const end = parseTime(s?.end, `slots[${k}].end`);
    if (!(end > start))
      throw new ValidationError(`slots[${k}].end`, `must be after slots[${k}].start; got ${iso(end)}`, 'unprocessable');
    return { start, end };
  });
}

/**
 * A load forecast (W per slot) from the site's load history: per slot, the mean over the last
 * `weeks` weeks (default 4) of the history's average over the same weekday and time (the slot
 * moved back by 1 … weeks × 7 days; weeks without data there are left out), or over the last
 * `days` days. A slot for which no week (day) has data is refused, naming it. Times are
 * shifted by whole 24-hour days (the same UTC time; a week across a change of daylight-saving
 * time is an hour off in local time for that week).
 */
export function loadForecastFromHistory(history: unknown, opts: HistoryForecastOptions): number[] {
  const field = opts.field ?? 'history';
  const series = readSeries(history, field);
  const byDays = opts.days !== undefined;
  const count = byDays ? opts.days! : (opts.weeks ?? 4);
  const what = byDays ? 'days' : 'weeks';
  if (!(Number.isInteger(count) && count >= 1 && count <= 104))
    throw new ValidationError(what, `must be a whole number within [1, 104]; got ${show(count)}`, 'unprocessable');
  const period = byDays ? DAY_MS : 7 * DAY_MS;
  return slotsOf(opts).map((s, k) => {
    let sum = 0;
    let counted = 0;
    for (let j = 1; j <= count; j++) {
      const average = averageOver(series, s.start - j * period, s.end - j * period);
      if (average !== undefined) {
        sum += average;
        counted++;
      }
    }
    if (counted === 0) {
      const span = byDays
        ? `the same time on the last ${count} day(s)`
        : `the same weekday and time of the last ${count} week(s)`;
      throw new ValidationError(
        field,
        `has no data for slot ${k} (${iso(s.start)}): ${span}, ${iso(s.start - count * period)} to ${iso(s.end - period)}`,
        'unprocessable',
      );
    }
    return sum / counted;
  });
}

/**
 * Any source's forecast (points in W, `min` the least value accepted) resampled onto slots: per
 * slot the time-weighted average of the points that overlap it. A slot no point overlaps is
 * refused, naming it (a forecast must cover the plan).
 */
export function resampleForecast(points: unknown, slots: ForecastSlots, field = 'forecast', min = 0): number[] {
  const series = readSeries(points, field, min);
  return slotsOf({ slots }).map((s, k) => {
    const average = averageOver(series, s.start, s.end);
    if (average === undefined) {
      throw new ValidationError(
        field,
        `must cover every price slot: nothing for slot ${k} (${iso(s.start)} to ${iso(s.end)}); it covers ${iso(series[0].start)} to ${iso(series[series.length - 1].end)}`,
        'unprocessable',
      );
    }
    return average;
  });
}
