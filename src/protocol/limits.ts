/**
 * One table of the numeric limits and defaults of every setting, and the one function that
 * words a refusal. The runtime checks settings against it (limit-check.ts: at deploy and per
 * message), and the editor's validators, spinners and defaults read the same table, so the two
 * accept the same values and refuse with the same text. No imports, only data and small pure
 * functions: `npm run build` wraps it into resources/limits.js, window.EmsPartnerLimits.
 */

/** How refusals name units; the editor may pass a translation (see `Words`). */

/** Power units the API accepts for PowerValue and CurtailmentValue (spec 2.8); the editor's unit lists. */
export const POWER_UNITS = ['W', 'kW', 'MW'] as const;
/** Curtailment may also be a percentage of installed production power (assumption A4). */
export const CURTAILMENT_UNITS = ['W', 'kW', 'MW', '%'] as const;

export const UNITS = {
  milliseconds: 'milliseconds',
  retries: 'retries',
  requests: 'parallel requests',
  perMinute: 'requests per minute',
  perDay: 'requests per day',
  MB: 'MB',
  minutes: 'minutes',
  seconds: 'seconds',
  messages: 'messages',
  hours: 'hours',
  days: 'days',
  W: 'W',
  percent: '%',
} as const;

/** What a special value of a setting means (each note but `rating` is about the value 0). */
export const NOTES = {
  off: '0 = off',
  noLimit: '0 = no limit',
  onInput: '0 = only on input',
  unknown: '0 = unknown',
  atEnd: '0 = only when a signal ends',
  /** A steering node's power limits: NO_LIMIT is what flows saved before limits were on by default hold. */
  rating: 'empty = the site\'s rating; "none" = no limit',
} as const;

/**
 * The value of a steering node's power limit (maxEssPower, maxCurtailment, maxGridPower,
 * maxGridLimit) that turns it off. Empty is the site's rating (the default of a new node); a
 * flow saved before limits were on by default is migrated to this where it had none.
 */
export const NO_LIMIT = 'none';

export type UnitKey = keyof typeof UNITS;
export type NoteKey = keyof typeof NOTES;

/** The range and default of one numeric setting. */
export interface Limit {
  /** Smallest value allowed (or, with `minExclusive`, the bound the value must exceed; then 0). */
  readonly min: number;
  /** Largest value allowed; none when absent. */
  readonly max?: number;
  /** The value must be more than `min`. */
  readonly minExclusive?: boolean;
  /** The value of a setting that is not set (a flow saved before it existed); none when absent. */
  readonly dflt?: number;
  /** Whole numbers only. */
  readonly whole: boolean;
  readonly unit: UnitKey;
  readonly note?: NoteKey;
}

/** The service's own bounds (the specification's, or this package's choice where it shows none). */
export const SERVICE = {
  /** Longest range of one time-series request, days. */
  maxSpanDays: 30,
  /** Most 30-day requests one time series is split into (about 5 years). */
  maxSpans: 62,
  /** Most property names in one measurement request. */
  maxProperties: 100,
  /** Coarsest resolution of a time series, hours (30 days). */
  maxResolutionHours: 720,
  /** Most slots one schedule may have (ems-schedule; the package's bound, not the service's). */
  maxScheduleSlots: 2000,
  /** Most sites one fleet message of site steer may steer (the package's bound on fan-out). */
  maxFleetSites: 5000,
  /** Most devices one fleet read may read (the package's bound on fan-out). */
  maxFleetDevices: 5000,
} as const;

/**
 * The most elements a node reads from one array of a message (or of the state it stored). A
 * longer array is refused by its length alone, before any element is read, so a million
 * prices cost no more than a hundred; the refusal names the field, the limit and the length
 * found. The schedule, fleet and property caps are the SERVICE bounds above.
 */
export const INPUTS = {
  /**
   * Deepest nesting of a message property (objects and arrays; a plain value is level 0),
   * checked before any other work. Node-RED copies a message recursively (for Catch nodes, for
   * a second wire), so a far deeper one would overflow the stack and stop Node-RED; no message
   * of this package's nodes needs more.
   */
  maxDepth: 64,
  /**
   * Most elements of one array (Map, Set) anywhere in a message, checked with the depth: more
   * than any node reads from one array (the largest cap below is seriesPoints), so a longer one
   * is refused by its length at once, before the depth walk or a node reads an element, and
   * before Node-RED copies the message for a Catch node (a copy of a million elements blocks it
   * for seconds).
   */
  maxElements: 100_000,
  /** Price slots of one plan (ten days of quarter hours), slots already past included, also after a split by slotMinutes. */
  priceSlots: 960,
  /**
   * Points of a forecast or a load history given as points: more than the plan's horizon,
   * since a history reaches back (the load forecast averages the last four weeks): five weeks
   * of one-minute points.
   */
  seriesPoints: 50_400,
  /** Slots one forecast is made for (a list of slots or their count; the plan's are at most priceSlots). */
  forecastSlots: 10_000,
  /** SOC targets of one plan (at most one per slot boundary counts). */
  socTargets: 960,
  /** Slots of one schedule, and runs (and the slots of one run) of a stored schedule. */
  scheduleSlots: SERVICE.maxScheduleSlots,
  /** Sites of one fleet message (site steer, portfolio). */
  fleetSites: SERVICE.maxFleetSites,
  /** Devices of one fleet read. */
  fleetDevices: SERVICE.maxFleetDevices,
  /** Property names of one read, before duplicates are dropped (ten times the most distinct names). */
  propertyNames: SERVICE.maxProperties * 10,
} as const;

/** Longest `last` range of a time-series node: one 30-day request less than the most, so it reads at resolution 1 h. */
const LAST_MAX_DAYS = (SERVICE.maxSpans - 1) * SERVICE.maxSpanDays;

/** Every numeric setting, by its property name (time series `last` by its unit). */
export const LIMITS = {
  // ems-partner-config
  timeout: { min: 100, max: 600_000, dflt: 10_000, whole: true, unit: 'milliseconds' },
  retries: { min: 0, max: 20, dflt: 3, whole: true, unit: 'retries' },
  concurrency: { min: 1, max: 256, dflt: 6, whole: true, unit: 'requests' },
  coalesceMs: { min: 0, max: 1000, dflt: 2, whole: true, unit: 'milliseconds', note: 'off' },
  maxBodyMB: { min: 1, max: 1024, dflt: 10, whole: true, unit: 'MB' },
  maxValidity: { min: 1, max: 43_200, dflt: 1440, whole: true, unit: 'minutes' },
  // the request budget
  maxPerMinute: { min: 0, max: 1_000_000, dflt: 0, whole: true, unit: 'perMinute', note: 'noLimit' },
  maxPerDay: { min: 0, max: 100_000_000, dflt: 0, whole: true, unit: 'perDay', note: 'noLimit' },
  // messages a node of this config node holds at once (arrived, not yet ended); more fail at once
  maxWaiting: { min: 1, max: 10_000_000, dflt: 10_000, whole: true, unit: 'messages' },
  // ems-device-read (a longer interval would overflow the poll timer, which takes at most 24.8 days)
  interval: { min: 0, max: 604_800, dflt: 0, whole: false, unit: 'seconds', note: 'onInput' },
  // ems-device-read and ems-time-series
  maxSplit: { min: 1, max: 100_000, dflt: 1000, whole: true, unit: 'messages' },
  // ems-time-series
  resolution: { min: 1, max: SERVICE.maxResolutionHours, dflt: 1, whole: true, unit: 'hours' },
  lastHours: { min: 0, minExclusive: true, max: LAST_MAX_DAYS * 24, dflt: 24, whole: false, unit: 'hours' },
  lastDays: { min: 0, minExclusive: true, max: LAST_MAX_DAYS, dflt: 24, whole: false, unit: 'days' },
  // ems-site-steer (a duration's upper bound is the config node's maxValidity, checked per message);
  // its power limits (and ems-schedule's) have no default number: not set is the site's rating
  // (protocol/site-ratings.ts), NO_LIMIT turns one off
  duration: { min: 0, minExclusive: true, dflt: 15, whole: false, unit: 'minutes' },
  maxEssPower: { min: 0, minExclusive: true, whole: false, unit: 'W', note: 'rating' },
  maxCurtailment: { min: 0, minExclusive: true, whole: false, unit: 'W', note: 'rating' },
  maxGridPower: { min: 0, minExclusive: true, whole: false, unit: 'W', note: 'rating' },
  maxGridLimit: { min: 0, minExclusive: true, whole: false, unit: 'W', note: 'rating' },
  // the delivery check (ems-site-steer, ems-schedule)
  verifyEvery: { min: 0, max: 1440, dflt: 0, whole: true, unit: 'minutes', note: 'atEnd' },
  tolerance: { min: 0, max: 100, dflt: 10, whole: false, unit: 'percent' },
  toleranceMin: { min: 0, dflt: 1000, whole: false, unit: 'W' },
  pvPeakPower: { min: 0, dflt: 0, whole: false, unit: 'W', note: 'unknown' },
} as const satisfies Record<string, Limit>;

export type LimitKey = keyof typeof LIMITS;

/**
 * The words of a refusal; {placeholders} are filled in. The runtime uses these (English); the
 * editor passes a translation for its language when the catalogue has one.
 */
export const WORDS = {
  wholeNumber: 'a whole number',
  number: 'a number',
  /** min..max (both allowed). */
  range: 'must be {a} of {unit} from {min} to {max}{more}',
  /** More than min (0), at most max. */
  positiveUpTo: 'must be a positive number of {unit}, at most {max}{more}',
  /** More than min, no upper bound. */
  moreThan: 'must be more than {min} {unit}{more}',
  /** min or more, no upper bound. */
  atLeast: 'must be a number of {min} or more{more}',
  /** The parenthesis after a refusal: its items joined by "; ". */
  more: ' ({list})',
  dflt: 'default {value}',
  units: UNITS as Record<UnitKey, string>,
  notes: NOTES as Record<NoteKey, string>,
};

export type Words = typeof WORDS;

/**
 * A setting's value as a number, as the runtime reads it: not set (undefined, null or '') is
 * `dflt`; a number, or a string holding one, is that number; anything else is NaN.
 */
export function numberOf(v: unknown, dflt?: number): number {
  if (v === undefined || v === null || v === '') return dflt ?? NaN;
  if (typeof v === 'number') return v;
  if (typeof v !== 'string' || v.trim() === '') return NaN;
  return Number(v);
}

/** Whether a number lies within a limit. */
export function accepts(l: Limit, n: number): boolean {
  if (typeof n !== 'number' || !Number.isFinite(n)) return false;
  if (l.whole && !Number.isInteger(n)) return false;
  if (l.minExclusive ? !(n > l.min) : n < l.min) return false;
  return l.max === undefined || n <= l.max;
}

function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (all, k: string) => (k in values ? String(values[k]) : all));
}

/**
 * The refusal of a value outside a limit, e.g. "must be a whole number of milliseconds from 100
 * to 600000 (default 10000)". The runtime puts the field before it and "; got <value>" after
 * it; the editor puts the field's label before it. `unit` overrides the limit's unit; `dflt:
 * false` leaves the default out (for a value that has none where it is checked).
 */
export function refusal(l: Limit, o: { words?: Words; unit?: UnitKey; dflt?: boolean } = {}): string {
  const words = o.words ?? WORDS;
  const unit = words.units[o.unit ?? l.unit] ?? o.unit ?? l.unit;
  const list: string[] = [];
  const atLeast = l.max === undefined && !l.minExclusive;
  if (atLeast) list.push(unit);
  if (l.note) list.push(words.notes[l.note] ?? NOTES[l.note]);
  // A note tells what 0 means; when the default is 0 it says all the default would.
  if (l.dflt !== undefined && o.dflt !== false && !(l.note && l.dflt === 0))
    list.push(fill(words.dflt, { value: l.dflt }));
  const values = {
    a: l.whole ? words.wholeNumber : words.number,
    unit,
    min: l.min,
    max: l.max ?? '',
    more: list.length ? fill(words.more, { list: list.join('; ') }) : '',
  };
  if (atLeast) return fill(words.atLeast, values);
  if (!l.minExclusive) return fill(words.range, values);
  return fill(l.max === undefined ? words.moreThan : words.positiveUpTo, values);
}
