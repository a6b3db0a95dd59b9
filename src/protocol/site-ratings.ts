/**
 * The power limits of the steering nodes (site steer, schedule), on by default: each of
 * maxEssPower, maxCurtailment, maxGridPower, maxGridLimit is a number of W (the node's own
 * limit), empty (the default: the site's rating, as the service lists it in GET /sites), or
 * NO_LIMIT (off; what a flow saved before limits were on by default holds where it had none).
 * Where a limit is the site's rating and the service lists none for the site, the node refuses
 * to steer, naming the property to set. Pure, no I/O: the nodes fetch the site list
 * (nodes/shared/steer-ratings.ts) and check with `checkRatings`.
 */
import { ValidationError } from './errors';
import { limited } from './limit-check';
import { LIMITS, NO_LIMIT } from './limits';
import type { CurtailmentValue, PowerValue, SiteSummary } from './types';
import { show, toWatts } from './units';

export const POWER_LIMIT_KEYS = ['maxEssPower', 'maxCurtailment', 'maxGridPower', 'maxGridLimit'] as const;
export type PowerLimitKey = (typeof POWER_LIMIT_KEYS)[number];

/** A node's power limits as set: W where a number is set (0 where not), and which keys are the site's rating or off. */
export interface PowerLimitSettings {
  /** Each limit in W; 0 where it is the site's rating or off (the checks of a set number skip it). */
  values: Record<PowerLimitKey, number>;
  /** The limits that are the site's rating (not set). */
  rating: PowerLimitKey[];
  /** The limits that are off (NO_LIMIT). */
  none: PowerLimitKey[];
}

const isNone = (v: unknown) => typeof v === 'string' && v.trim().toLowerCase() === NO_LIMIT;
const isEmpty = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

/** A node's power limits from its properties; a value that is none of the forms is refused, naming the property. */
export function powerLimitsOf(c: Record<string, unknown>): PowerLimitSettings {
  const out: PowerLimitSettings = {
    values: { maxEssPower: 0, maxCurtailment: 0, maxGridPower: 0, maxGridLimit: 0 },
    rating: [],
    none: [],
  };
  for (const key of POWER_LIMIT_KEYS) {
    const value = c[key];
    if (isEmpty(value)) out.rating.push(key);
    else if (isNone(value)) out.none.push(key);
    else out.values[key] = limited(value, LIMITS[key], key);
  }
  return out;
}

/** The power limits each steering component is bounded by. */
const LIMIT_OF = {
  energyStorage: 'maxEssPower',
  curtailment: 'maxCurtailment',
  gridTarget: 'maxGridPower',
  deadband: 'maxGridPower',
  upperLimit: 'maxGridLimit',
  lowerLimit: 'maxGridLimit',
} as const satisfies Record<string, PowerLimitKey>;

/** The power limits the given components are bounded by (a mode's MODE_COMPONENTS), each once. */
export function limitKeysOf(components: readonly string[]): PowerLimitKey[] {
  const keys = components
    .map((c) => (LIMIT_OF as Record<string, PowerLimitKey | undefined>)[c])
    .filter((k): k is PowerLimitKey => k !== undefined);
  return POWER_LIMIT_KEYS.filter((k) => keys.includes(k));
}

/** The warning of a node that steers without a limit (NO_LIMIT on a limit its mode uses); undefined when none. */
export function noLimitWarning(none: readonly PowerLimitKey[], used: readonly PowerLimitKey[]): string | undefined {
  const unlimited = none.filter((k) => used.includes(k));
  if (unlimited.length === 0) return undefined;
  return (
    `steers without a limit: ${unlimited.join(', ')} ${unlimited.length > 1 ? 'are' : 'is'} "${NO_LIMIT}" (a flow saved by an earlier version, where an empty or 0 limit meant no limit); ` +
    "set each to the most the site may be asked for in W, or leave it empty for the site's rating (GET /sites)"
  );
}

/** What the service says a site can take (GET /sites), or what the message or node says of it. */
export interface SiteRatings {
  site: string;
  /** Battery power rating (charge and discharge), W, and where it came from. */
  essW?: number;
  essFrom?: string;
  /** Installed PV power, W (a curtailment above it limits nothing). */
  pvW?: number;
  pvFrom?: string;
  /** Contractual grid limits, W: upper the most import (>= 0), lower the most export (<= 0). */
  grid?: { upper: number; lower: number };
  /** Why the service's list tells nothing of the site (GET /sites failed or does not list it). */
  unlisted?: string;
}

const positive = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;

/**
 * A site's ratings from the service's site list (undefined: it could not be read, `listError`
 * says why) and what the message or node states (a fleet entry's maxPowerW, the node's
 * pvPeakPower): the node's PV power comes first; a battery rating is the smaller of the
 * message's and the service's, so a message can lower the service's rating but never raise it.
 */
export function ratingsOf(
  site: string,
  list: readonly SiteSummary[] | undefined,
  listError: unknown,
  own: { essW?: number; essFrom?: string; pvW?: number; pvFrom?: string } = {},
): SiteRatings {
  const ratings: SiteRatings = { site };
  if (positive(own.essW)) [ratings.essW, ratings.essFrom] = [own.essW, own.essFrom ?? 'maxPowerW'];
  if (positive(own.pvW)) [ratings.pvW, ratings.pvFrom] = [own.pvW, own.pvFrom ?? 'pvPeakPower'];
  const listed = list?.find((x) => x && x.siteReference === site);
  if (!listed) {
    ratings.unlisted = list
      ? list.length === 0
        ? 'GET /sites lists no site: the service publishes no site list, or an empty one'
        : 'GET /sites does not list the site'
      : `GET /sites failed (${listError instanceof Error ? listError.message : show(listError)})`;
    return ratings;
  }
  // A rating the message states may lower the service's, never raise it: a message cannot ask a
  // site for more than the service says its battery can take.
  if (positive(listed.batteryMaxPower) && (ratings.essW === undefined || listed.batteryMaxPower < ratings.essW)) {
    [ratings.essW, ratings.essFrom] = [
      listed.batteryMaxPower,
      ratings.essW === undefined
        ? 'GET /sites batteryMaxPower'
        : `GET /sites batteryMaxPower, below ${ratings.essFrom} ${ratings.essW} W`,
    ];
  }
  if (ratings.pvW === undefined && positive(listed.pvPeakPower))
    [ratings.pvW, ratings.pvFrom] = [listed.pvPeakPower, 'GET /sites pvPeakPower'];
  const gridLimits = listed.gridLimits;
  if (
    gridLimits &&
    typeof gridLimits.upper === 'number' &&
    typeof gridLimits.lower === 'number' &&
    Number.isFinite(gridLimits.upper) &&
    Number.isFinite(gridLimits.lower) &&
    gridLimits.upper >= 0 &&
    gridLimits.lower <= 0 &&
    gridLimits.upper - gridLimits.lower > 0
  ) {
    ratings.grid = { upper: gridLimits.upper, lower: gridLimits.lower };
  }
  return ratings;
}

/** What a command or a schedule slot sets (SteeringCommand's and SlotSetting's fields). */
export interface RatedComponents {
  energyStorageSetting?: PowerValue;
  productionCurtailment?: CurtailmentValue;
  gridTarget?: { setpoint: PowerValue; deadband?: PowerValue };
  gridLimits?: { upperLimit?: PowerValue; lowerLimit?: PowerValue };
}

/** Which limits are the site's rating for a message: those the components use (no site list needed when none). */
export function ratingNeeded(c: RatedComponents, rating: readonly PowerLimitKey[]): boolean {
  return (
    (!!c.energyStorageSetting && rating.includes('maxEssPower')) ||
    (!!c.productionCurtailment && c.productionCurtailment.unit !== '%' && rating.includes('maxCurtailment')) ||
    (!!c.gridTarget && rating.includes('maxGridPower')) ||
    (!!c.gridLimits && rating.includes('maxGridLimit'))
  );
}

const WHAT: Record<PowerLimitKey, string> = {
  maxEssPower: 'battery power rating (batteryMaxPower)',
  maxCurtailment: 'installed PV power (pvPeakPower)',
  maxGridPower: 'contractual grid limits (gridLimits)',
  maxGridLimit: 'contractual grid limits (gridLimits)',
};

function unrated(key: PowerLimitKey, r: SiteRatings): ValidationError {
  const why = r.unlisted ?? `GET /sites lists no ${WHAT[key]} for it`;
  return new ValidationError(
    key,
    `is not set, so it is the site's rating, and there is none for ${r.site} (${why}): set ${key} to the most the site may be asked for, a positive number of W, or "${NO_LIMIT}" for no limit; nothing was sent`,
    'unprocessable',
  );
}

/**
 * Refuses (ValidationError) a component beyond the site's rating, for each limit in `rating`
 * (the node's limits that are not set); a limit without a rating is refused naming the
 * property to set. `field` names a component where it came from (e.g. `msg.payload[3].energyStorage`).
 */
export function checkRatings(
  c: RatedComponents,
  rating: readonly PowerLimitKey[],
  r: SiteRatings,
  field: (part: 'energyStorage' | 'curtailment' | 'gridTarget' | 'deadband' | 'upperLimit' | 'lowerLimit') => string,
): void {
  const beyond = (
    part: Parameters<typeof field>[0],
    key: PowerLimitKey,
    what: string,
    v: PowerValue | CurtailmentValue,
  ) =>
    new ValidationError(
      field(part),
      `must be within the site's ${what} (${key} is not set, so the site's rating applies; set ${key} in W to change it); got ${v.value} ${v.unit}; nothing was sent`,
    );
  const ess = c.energyStorageSetting;
  if (ess && rating.includes('maxEssPower')) {
    if (r.essW === undefined) throw unrated('maxEssPower', r);
    if (Math.abs(toWatts(ess)) > r.essW)
      throw beyond('energyStorage', 'maxEssPower', `battery rating ${r.essW} W, either sign (${r.essFrom})`, ess);
  }
  const curtailment = c.productionCurtailment;
  if (curtailment && curtailment.unit !== '%' && rating.includes('maxCurtailment')) {
    if (r.pvW === undefined) throw unrated('maxCurtailment', r);
    if (toWatts(curtailment as PowerValue) > r.pvW)
      throw beyond('curtailment', 'maxCurtailment', `PV power ${r.pvW} W (${r.pvFrom})`, curtailment);
  }
  const within = (
    part: Parameters<typeof field>[0],
    key: PowerLimitKey,
    v: PowerValue | undefined,
    g: { upper: number; lower: number },
  ) => {
    const watts = v && toWatts(v);
    if (v && (watts! > g.upper || watts! < g.lower))
      throw beyond(
        part,
        key,
        `grid connection, ${g.lower} W (export) to ${g.upper} W (import) (GET /sites gridLimits)`,
        v,
      );
  };
  if (c.gridTarget && rating.includes('maxGridPower')) {
    if (!r.grid) throw unrated('maxGridPower', r);
    within('gridTarget', 'maxGridPower', c.gridTarget.setpoint, r.grid);
    const deadband = c.gridTarget.deadband;
    const widest = Math.max(r.grid.upper, -r.grid.lower);
    if (deadband && toWatts(deadband) > widest)
      throw beyond(
        'deadband',
        'maxGridPower',
        `grid connection, at most ${widest} W (GET /sites gridLimits)`,
        deadband,
      );
  }
  if (c.gridLimits && rating.includes('maxGridLimit')) {
    if (!r.grid) throw unrated('maxGridLimit', r);
    within('upperLimit', 'maxGridLimit', c.gridLimits.upperLimit, r.grid);
    within('lowerLimit', 'maxGridLimit', c.gridLimits.lowerLimit, r.grid);
  }
}
