/**
 * Portfolio mode of `ems-site-steer`: one ESS power for the whole fleet, split over its sites
 * (protocol/portfolio.ts splitPower) by battery rating or by SOC, each part within the node's
 * maxEssPower and the site's rating. A site whose weight stays unknown is left out of the split
 * and reported as failed (nothing is sent to it). In users' words: docs/nodes/ems-site-steer.md,
 * "Fleets and portfolio".
 */
import {
  type FleetSite,
  parsePowerValue,
  type PortfolioSplit,
  show,
  type SiteSummary,
  splitPower,
  toWatts,
  ValidationError,
  weightOf,
} from '../../protocol';
import { fleetWindow, mapBounded, type Runtime } from '../../runtime';
import type { SteerSettings } from '../shared';

/** A site as the split sees it: its part (W) or why it has none. */
interface PortfolioPart {
  site: string;
  /** W, signed as the total (positive discharges). */
  partW?: number;
  /** What the split used. */
  maxPowerW?: number;
  soc?: number;
  /** Why the site was left out (its weight is unknown). */
  error?: Error;
}

export interface PortfolioPlan {
  parts: PortfolioPart[];
  askedW: number;
  allocatedW: number;
  shortfallW: number;
}

const TOTAL_KEYS = ['energyStorage', 'validFrom', 'validUntil', 'duration'];
const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);

/**
 * The fleet's total ESS power (W) from msg.payload (a number in the node's unit, or an object
 * with energyStorage and validity fields), or from the node's ESS value; and the payload the
 * validity of every site's command is built from.
 */
export function portfolioTotal(
  s: SteerSettings,
  payload: unknown,
  nodeValue: unknown,
): { totalW: number; validity: Record<string, unknown> } {
  if (isObject(payload)) {
    for (const k of Object.keys(payload)) {
      if (!TOTAL_KEYS.includes(k))
        throw new ValidationError(
          /^[A-Za-z_$][\w$]*$/.test(k) ? `msg.payload.${k}` : `msg.payload[${JSON.stringify(k)}]`,
          `is not a field of a portfolio steer; accepted: ${TOTAL_KEYS.join(', ')} (the fleet's total in energyStorage)`,
        );
    }
    const { energyStorage, ...validity } = payload;
    if (energyStorage === undefined || energyStorage === null || energyStorage === '') {
      throw new ValidationError(
        'msg.payload.energyStorage',
        `is required in mode portfolio: the fleet's total ESS power, a number in ${s.essUnit} or {value, unit}`,
      );
    }
    return { totalW: toWatts(parsePowerValue(energyStorage, 'msg.payload.energyStorage', s.essUnit)), validity };
  }
  const raw = nodeValue !== undefined && nodeValue !== '' && !isObject(nodeValue) ? nodeValue : payload;
  if (raw === undefined || raw === null || raw === '') {
    throw new ValidationError(
      'msg.payload',
      `sets nothing: send the fleet's total ESS power, a number in ${s.essUnit} (positive discharges, negative charges)`,
    );
  }
  return { totalW: toWatts(parsePowerValue(raw, 'msg.payload', s.essUnit)), validity: {} };
}

export interface PlanDeps {
  runtime(): Promise<Runtime>;
  /** GET /sites of the runtime, cached (steer-percent.ts cachedSites). */
  sites(rt: Runtime): Promise<SiteSummary[]>;
  signal?: AbortSignal;
}

/**
 * Fills in each site's rating and SOC where the message and the node leave them out, then
 * splits `totalW` (by SOC: charge by the headroom 100 − SOC, discharge by the SOC). `known` maps a
 * site to what the node's own list says about it. What is known comes, first to last, from: the
 * msg.sites entry, the node's `sites` entry, GET /sites, and for the SOC a read of `soc`. With
 * maxEssPower not set, a site without a known rating gets no part and is reported failed.
 */
export async function planPortfolio(
  s: SteerSettings,
  split: PortfolioSplit,
  totalW: number,
  fleet: FleetSite[],
  known: Map<string, FleetSite>,
  d: PlanDeps,
): Promise<PortfolioPlan> {
  const info: PortfolioPart[] = fleet.map((f) => ({
    site: f.site,
    maxPowerW: f.maxPowerW ?? known.get(f.site)?.maxPowerW,
    soc: f.soc ?? known.get(f.site)?.soc,
  }));
  const needSoc = split === 'soc' && totalW !== 0;
  const missing = info.filter((p) => p.maxPowerW === undefined || (needSoc && p.soc === undefined));
  if (missing.length > 0 && (split === 'rating' ? totalW !== 0 : true)) await fillIn(missing, needSoc, split, d);
  if (totalW !== 0 && s.rating.includes('maxEssPower')) await boundByService(info, d);
  const weighed = info.map((p) => {
    if (p.error) return undefined;
    const weight = totalW === 0 ? 1 : weightOf(split, totalW, p);
    if (weight === undefined) {
      p.error = new ValidationError(
        `msg.sites (${p.site})`,
        split === 'rating'
          ? "has no battery rating: give maxPowerW (W) in msg.sites or the node's sites, or use a service whose GET /sites lists batteryMaxPower; nothing was sent to it"
          : "has no SOC: give soc (%) in msg.sites or the node's sites, or a battery device whose soc can be read; nothing was sent to it",
        'unprocessable',
      );
    }
    return weight;
  });
  // The node's maxEssPower not set: each site's part is bounded by its battery rating, so a site without one gets none.
  if (totalW !== 0 && s.rating.includes('maxEssPower')) {
    info.forEach((p, i) => {
      if (p.error || p.maxPowerW !== undefined) return;
      weighed[i] = undefined;
      p.error = new ValidationError(
        'maxEssPower',
        `is not set, so each site's battery rating bounds its part, and ${p.site} has none (no maxPowerW in msg.sites or the node's sites, and GET /sites lists no batteryMaxPower for it): give maxPowerW, or set maxEssPower to a positive number of W or "none"; nothing was sent to it`,
        'unprocessable',
      );
    });
  }
  const cap = (p: PortfolioPart) => Math.min(s.maxEssPower > 0 ? s.maxEssPower : Infinity, p.maxPowerW ?? Infinity);
  const inSplit = info.map((p, i) => (p.error ? -1 : i)).filter((i) => i >= 0);
  const shares = splitPower(
    totalW,
    inSplit.map((i) => ({ weight: Math.max(0, weighed[i]!), capW: cap(info[i]) })),
  );
  inSplit.forEach((i, k) => {
    info[i].partW = shares.partsW[k];
  });
  return { parts: info, askedW: totalW, allocatedW: shares.allocatedW, shortfallW: shares.shortfallW };
}

/**
 * Each part's battery rating at most the service's (GET /sites batteryMaxPower, where it lists
 * one): a rating the message or the node states may lower it, never raise it. A site list that
 * cannot be read bounds nothing here (the send's own rating check names that).
 */
async function boundByService(info: PortfolioPart[], d: PlanDeps): Promise<void> {
  let list: SiteSummary[];
  try {
    list = await d.sites(await d.runtime());
  } catch {
    return;
  }
  const listed = new Map(list.map((x) => [x.siteReference, x.batteryMaxPower]));
  for (const p of info) {
    const listedW = listed.get(p.site);
    if (
      typeof listedW === 'number' &&
      Number.isFinite(listedW) &&
      listedW > 0 &&
      (p.maxPowerW === undefined || listedW < p.maxPowerW)
    )
      p.maxPowerW = listedW;
  }
}

/**
 * Ratings from GET /sites (batteryMaxPower; cached per runtime, as for a `%` curtailment); SOC from
 * the `soc` of the battery device GET /sites lists with kind "battery", through the shared read
 * coalescer (bounded fan-out). Failures are per site.
 */
async function fillIn(missing: PortfolioPart[], needSoc: boolean, split: PortfolioSplit, d: PlanDeps): Promise<void> {
  const rt = await d.runtime();
  let listed: Map<string, SiteSummary> | undefined;
  let listError: unknown;
  try {
    listed = new Map((await d.sites(rt)).map((x) => [x.siteReference, x]));
  } catch (e) {
    listError = e;
  }
  const why = (what: string) =>
    `${what}: ${listError ? `GET /sites failed (${listError instanceof Error ? listError.message : String(listError)})` : 'GET /sites does not list the site'}`;
  for (const p of missing) {
    const entry = listed?.get(p.site);
    const listedW = entry?.batteryMaxPower;
    if (p.maxPowerW === undefined && typeof listedW === 'number' && Number.isFinite(listedW) && listedW > 0)
      p.maxPowerW = listedW;
    if (p.maxPowerW === undefined && split === 'rating')
      p.error = new ValidationError(
        `msg.sites (${p.site})`,
        `has no battery rating (maxPowerW) in the message or the node, and ${why('none was found')}; nothing was sent to it`,
        'unprocessable',
      );
  }
  if (!needSoc) return;
  const reads = missing.filter((p) => p.soc === undefined && !p.error);
  const results = await mapBounded(
    reads,
    fleetWindow(rt.client),
    async (p) => {
      const device = listed?.get(p.site)?.devices?.find((x) => x.kind === 'battery')?.deviceReference;
      if (!device)
        throw new ValidationError(
          `msg.sites (${p.site})`,
          `has no SOC in the message or the node, and no battery device to read it from (${why('no battery')}); nothing was sent to it`,
          'unprocessable',
        );
      const measurement = await rt.reads.measurement(device, 'soc', { signal: d.signal });
      const soc = measurement.value;
      if (typeof soc !== 'number' || !(soc >= 0 && soc <= 100))
        throw new ValidationError(
          `msg.sites (${p.site})`,
          `battery ${device} answered soc ${show(soc)}, not 0..100 %; nothing was sent to it`,
          'unprocessable',
        );
      return soc;
    },
    { signal: d.signal },
  );
  results.forEach((r, i) => {
    if (r.ok) reads[i].soc = r.value;
    else reads[i].error = r.error;
  });
}
