/**
 * Fleets of `ems-site-steer`, the pure part: the forms a site list takes, and the
 * portfolio split of one ESS power over the sites. No I/O.
 * The forms of a site list: above parseFleetSites; the split: above splitPower.
 */
import { ValidationError } from './errors';
import { SERVICE } from './limits';
import { show } from './units';
import { validateReference } from './validate';

/** One site of a fleet, with what the message or the node knows about its battery. */
export interface FleetSite {
  site: string;
  /** The battery's power rating (charge and discharge), W. */
  maxPowerW?: number;
  /** The battery's state of charge, %. */
  soc?: number;
}

/** How portfolio mode weighs the sites: by battery rating, or by SOC (charge: headroom, discharge: SOC). */
export type PortfolioSplit = 'rating' | 'soc';
const PORTFOLIO_SPLITS: readonly PortfolioSplit[] = ['rating', 'soc'];

const SITE_KEYS = ['site', 'maxPowerW', 'soc'];
const FORMS = 'an array of site references ("ste_…") or of {site, maxPowerW?, soc?} objects';

export function portfolioSplitOf(v: unknown, field = 'portfolioSplit'): PortfolioSplit {
  if (v === undefined || v === null || v === '') return 'rating';
  if (!PORTFOLIO_SPLITS.includes(v as PortfolioSplit))
    throw new ValidationError(field, `must be one of ${PORTFOLIO_SPLITS.join(', ')}; got ${show(v)}`);
  return v as PortfolioSplit;
}

/**
 * A site list given as an array (msg.sites), checked: its length (1..SERVICE.maxFleetSites,
 * before anything else), each entry, no site twice (naming both places). Errors name `field` and
 * the entry's index. Entries are site references, or `{ site, maxPowerW?, soc? }` objects
 * (maxPowerW: the battery's power rating in W, more than 0; soc: its state of charge, 0..100 %),
 * or both. The node's `sites` property (text) is parsed by parseSiteList.
 */
export function parseFleetSites(input: unknown, field: string): FleetSite[] {
  if (!Array.isArray(input)) throw new ValidationError(field, `must be ${FORMS}; got ${show(input)}`);
  if (input.length === 0)
    throw new ValidationError(field, `must list at least one site (${FORMS}); got an empty array`);
  if (input.length > SERVICE.maxFleetSites) {
    throw new ValidationError(
      field,
      `lists ${input.length} sites; one message steers at most ${SERVICE.maxFleetSites} (split the fleet into several messages); nothing was sent`,
      'unprocessable',
    );
  }
  const seen = new Map<string, number>();
  return input.map((entry, i) => {
    const at = `${field}[${i}]`;
    const parsed = entryOf(entry, at);
    const first = seen.get(parsed.site);
    if (first !== undefined)
      throw new ValidationError(
        at,
        `repeats site ${parsed.site} (also ${field}[${first}]); list each site once; nothing was sent`,
        'unprocessable',
      );
    seen.set(parsed.site, i);
    return parsed;
  });
}

function entryOf(entry: unknown, at: string): FleetSite {
  if (typeof entry === 'string') return { site: validateReference(entry, at) };
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
    throw new ValidationError(at, `must be a site reference or {site, maxPowerW?, soc?}; got ${show(entry)}`);
  const record = entry as Record<string, unknown>;
  for (const k of Object.keys(record)) {
    if (!SITE_KEYS.includes(k))
      throw new ValidationError(
        /^[A-Za-z_$][\w$]*$/.test(k) ? `${at}.${k}` : `${at}[${JSON.stringify(k)}]`,
        `is not a field of a fleet site; accepted: ${SITE_KEYS.join(', ')}`,
      );
  }
  const out: FleetSite = { site: validateReference(record.site, `${at}.site`) };
  if (record.maxPowerW !== undefined && record.maxPowerW !== null && record.maxPowerW !== '') {
    const maxPowerW = numeric(record.maxPowerW);
    if (!(maxPowerW > 0) || !Number.isFinite(maxPowerW))
      throw new ValidationError(
        `${at}.maxPowerW`,
        `must be the battery's power rating, a number of W greater than 0; got ${show(record.maxPowerW)}`,
      );
    out.maxPowerW = maxPowerW;
  }
  if (record.soc !== undefined && record.soc !== null && record.soc !== '') {
    const soc = numeric(record.soc);
    if (!(soc >= 0 && soc <= 100))
      throw new ValidationError(
        `${at}.soc`,
        `must be the battery's state of charge, a number of % from 0 to 100; got ${show(record.soc)}`,
      );
    out.soc = soc;
  }
  return out;
}

const numeric = (v: unknown): number =>
  typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;

/**
 * The node's `sites` property: '' (or nothing) is no list (the node's one site); JSON text
 * starting with `[` is parsed as msg.sites is; other text is references separated by commas,
 * semicolons, spaces or new lines. An array (a flow written by hand) is taken as it is.
 */
export function parseSiteList(text: unknown, field = 'sites'): FleetSite[] {
  if (Array.isArray(text)) return parseFleetSites(text, field);
  if (text === undefined || text === null) return [];
  if (typeof text !== 'string')
    throw new ValidationError(
      field,
      `must be text: site references separated by commas or new lines, or a JSON array (${FORMS}); got ${show(text)}`,
    );
  const trimmed = text.trim();
  if (trimmed === '') return [];
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (e) {
      throw new ValidationError(
        field,
        `starts with "[" but is not a JSON array: ${(e as Error).message}; write ${FORMS}, or references separated by commas or new lines`,
      );
    }
    return parseFleetSites(parsed, field);
  }
  return parseFleetSites(
    trimmed.split(/[\s,;]+/).filter((r) => r !== ''),
    field,
  );
}

/** A site in the split: its weight (0 = takes nothing) and its cap, W (Infinity = none). */
export interface SplitSite {
  weight: number;
  capW: number;
}

export interface Split {
  /** Each site's part, whole W, with the sign of the total (positive discharges). */
  partsW: number[];
  /** The sum of the parts, W (signed). */
  allocatedW: number;
  /** What the fleet could not take, W (>= 0; 0 when the parts sum to the total within 1 W). */
  shortfallW: number;
}

/**
 * Splits `totalW` over the sites in proportion to their weights, each part at most its cap.
 * Parts are whole watts and sum exactly to the total rounded to a watt, or, when the fleet
 * cannot take it (the caps of the sites with weight), to the most it can take: the rest is
 * the shortfall. What a capped site cannot take goes to the others (water filling).
 */
export function splitPower(totalW: number, sites: readonly SplitSite[]): Split {
  if (!Number.isFinite(totalW)) throw new ValidationError('msg.payload', `must be a finite power; got ${show(totalW)}`);
  const sign = totalW < 0 ? -1 : 1;
  const asked = Math.abs(totalW);
  const siteCount = sites.length;
  const caps = sites.map((s) =>
    s.weight > 0 && Number.isFinite(s.weight)
      ? Number.isFinite(s.capW)
        ? Math.max(0, Math.floor(s.capW))
        : Infinity
      : 0,
  );
  const room = caps.reduce((a, c) => a + c, 0);
  const target = Math.min(Math.round(asked), room);
  const shares = new Array<number>(siteCount).fill(0);
  // Water filling: sites in order of cap / weight; a site whose proportional share reaches its cap takes the cap.
  const order = [...Array(siteCount).keys()]
    .filter((i) => caps[i] > 0)
    .sort((a, b) => caps[a] / sites[a].weight - caps[b] / sites[b].weight);
  let remaining = target;
  let weights = order.reduce((a, i) => a + sites[i].weight, 0);
  let capped = 0;
  for (; capped < order.length; capped++) {
    const site = order[capped];
    if (caps[site] / sites[site].weight > remaining / weights) break;
    shares[site] = caps[site];
    remaining -= caps[site];
    weights -= sites[site].weight;
  }
  for (let j = capped; j < order.length; j++) shares[order[j]] = (remaining * sites[order[j]].weight) / weights;
  // Whole watts: floor each share, then one more watt to the largest remainders until the sum is the target.
  const parts = shares.map((s) => Math.floor(s + 1e-9));
  let left = target - parts.reduce((a, p) => a + p, 0);
  // Each share below its (whole) cap lost less than a watt to the floor, so one pass suffices.
  const byRest = order
    .filter((i) => parts[i] < caps[i])
    .sort((a, b) => shares[b] - parts[b] - (shares[a] - parts[a]) || a - b);
  for (const i of byRest) {
    if (left <= 0) break;
    parts[i]++;
    left--;
  }
  // Rounding of floating shares the other way (a sum a hair above the target): take the watt back.
  for (let j = order.length - 1; left < 0 && j >= 0; j--) {
    if (parts[order[j]] > 0) {
      parts[order[j]]--;
      left++;
    }
  }
  const allocated = parts.reduce((a, p) => a + p, 0);
  const short = asked - allocated;
  return {
    partsW: parts.map((p) => (p === 0 ? 0 : sign * p)),
    allocatedW: allocated === 0 ? 0 : sign * allocated,
    shortfallW: short > 1 ? short : 0,
  };
}

/** A site's weight in the split: its rating, or its SOC headroom when charging (total < 0) and SOC when discharging. */
export function weightOf(
  split: PortfolioSplit,
  totalW: number,
  site: { maxPowerW?: number; soc?: number },
): number | undefined {
  if (split === 'rating') return site.maxPowerW;
  if (site.soc === undefined) return undefined;
  return totalW < 0 ? 100 - site.soc : site.soc;
}
