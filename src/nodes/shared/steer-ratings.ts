/**
 * The power limits of site steer and schedule that are not set: each is the site's rating
 * (protocol/site-ratings.ts), read from the service's site list (GET /sites, cached per runtime
 * as for a `%` curtailment: steer-percent.ts cachedSites) or from what the node or message says
 * of the site (a fleet entry's maxPowerW, the node's pvPeakPower). The list is read only when a
 * component needs a rating that is not known otherwise.
 */
import {
  checkRatings,
  type PowerLimitKey,
  type RatedComponents,
  ratingNeeded,
  ratingsOf,
  type SiteSummary,
} from '../../protocol';

export interface RatingSources {
  /** The service's site list (GET /sites, cached). */
  sites(): Promise<SiteSummary[]>;
  /** The battery rating the message or the node states, W, and where it says so. */
  essW?: number;
  essFrom?: string;
  /** The PV power the node states (pvPeakPower), W. */
  pvW?: number;
  pvFrom?: string;
}

type Part = Parameters<Parameters<typeof checkRatings>[3]>[0];

/**
 * Refuses (ValidationError) a component beyond the site's rating where its limit is not set,
 * and one whose limit is not set when the site has no rating (naming the property to set).
 */
export async function checkSiteRatings(
  c: RatedComponents,
  rating: readonly PowerLimitKey[],
  site: string,
  src: RatingSources,
  field: (part: Part) => string = (p) => p,
): Promise<void> {
  if (!ratingNeeded(c, rating)) return;
  // A battery rating the message states is checked against the service's too (the smaller wins), so the list is read.
  const known =
    (!c.energyStorageSetting || !rating.includes('maxEssPower')) &&
    (!c.productionCurtailment || !rating.includes('maxCurtailment') || (src.pvW ?? 0) > 0) &&
    (!c.gridTarget || !rating.includes('maxGridPower')) &&
    (!c.gridLimits || !rating.includes('maxGridLimit'));
  let list: SiteSummary[] | undefined;
  let error: unknown;
  if (!known) {
    try {
      list = await src.sites();
    } catch (e) {
      error = e;
    }
  }
  checkRatings(
    c,
    rating,
    ratingsOf(site, known ? [{ siteReference: site, name: '', devices: [] }] : list, error, src),
    field,
  );
}
