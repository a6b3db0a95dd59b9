/**
 * Which steering type each site has in force, as far as this runtime (one config node, every
 * node on it) knows: what it sent and the service accepted, until that request's validUntil.
 * The service processes asset steering and grid target exclusively (vendor notes, DISPLACES):
 * a request of one ends the other in force on the site. The steering queue records each
 * accepted request here and tells the sender which type it ended, so the node can warn.
 * Grid limits coexist with both and never displace anything.
 */
import { DISPLACES, steeringTypeOf } from '../protocol';
import type { SteeringEndpoint, SteeringType } from '../protocol';

/** A type that a request ended on its site, and the validUntil it had. */
export interface Displaced {
  type: SteeringType;
  validUntil: number;
}

/** Sites remembered before lapsed entries of other sites are swept. */
const PRUNE_AT = 1000;
const TYPES: readonly SteeringType[] = ['asset', 'grid-target', 'grid-limits'];
/** What a request ended when it ended nothing (shared: never changed by a caller). */
const NONE: Displaced[] = Object.freeze([]) as unknown as Displaced[];

/**
 * One site's validUntil per type, epoch ms (0: none in force). An object of number fields, not a
 * Map: V8 updates a number field in place, where a Map stores a new heap number per request; with
 * thousands of sites steered in turn, each such number outlived two scavenges (the site's entry is
 * old), was promoted and died in the old generation.
 */
type UntilByType = Record<SteeringType, number>;

export class SteeringTypes {
  /** Per site, per type: the validUntil of what is in force (or scheduled), epoch ms. */
  private readonly sites = new Map<string, UntilByType>();
  /**
   * Sites remembered before the next sweep: PRUNE_AT, then twice what a sweep left, so sweeping
   * costs O(1) per request however many sites are in force (a sweep per request once 1000 sites
   * were in force made a 5,000-site portfolio quadratic).
   */
  private pruneAt = PRUNE_AT;

  constructor(private readonly now: () => number = Date.now) {}

  /** The validUntil of `type` in force on `site`, or undefined when none is (or it lapsed). */
  inForce(site: string, type: SteeringType): number | undefined {
    const until = this.sites.get(site)?.[type];
    // 0 (none in force) needs no clock.
    return until !== undefined && until !== 0 && until > this.now() ? until : undefined;
  }

  /** The types a request on `endpoint` would end on `site` now (nothing for a cancel or grid limits). */
  displacedBy(site: string, endpoint: SteeringEndpoint): Displaced[] {
    if (endpoint === 'cancel-grid-target') return [];
    // An array only when something is displaced (rarely): most requests end nothing.
    let out: Displaced[] | undefined;
    for (const type of DISPLACES[steeringTypeOf(endpoint)]) {
      const validUntil = this.inForce(site, type);
      if (validUntil !== undefined) (out ??= []).push({ type, validUntil });
    }
    return out ?? NONE;
  }

  /**
   * Records a request on `endpoint` that the service accepted for `site`, valid until
   * `validUntil`; returns the types it ended there. Asset steering keeps the latest end of its
   * components (a partial update leaves the others in force); a grid target or grid limits
   * replace what was there; a cancel ends the grid target.
   */
  accepted(site: string, endpoint: SteeringEndpoint, validUntil: number | undefined): Displaced[] {
    const displaced = this.displacedBy(site, endpoint);
    const now = this.now();
    const known = this.sites.get(site);
    const untilByType = known ?? { asset: 0, 'grid-target': 0, 'grid-limits': 0 };
    lapse(untilByType, now);
    for (const d of displaced) untilByType[d.type] = 0;
    const type = steeringTypeOf(endpoint);
    if (endpoint === 'cancel-grid-target') untilByType['grid-target'] = 0;
    else if (validUntil !== undefined && validUntil > now)
      untilByType[type] = type === 'asset' ? Math.max(untilByType[type], validUntil) : validUntil;
    if (!inForceAny(untilByType)) this.sites.delete(site);
    else if (!known) this.sites.set(site, untilByType);
    if (this.sites.size > this.pruneAt) {
      this.prune(now);
      this.pruneAt = Math.max(PRUNE_AT, 2 * this.sites.size);
    }
    return displaced;
  }

  /** Forgets every lapsed entry (a Node-RED that steers many sites through msg.site). */
  private prune(now: number): void {
    for (const [site, untilByType] of this.sites) {
      lapse(untilByType, now);
      if (!inForceAny(untilByType)) this.sites.delete(site);
    }
  }

  /** Sites with a type in force, for tests. */
  get size(): number {
    return this.sites.size;
  }
}

/** Ends the types whose validUntil has passed. */
function lapse(untilByType: UntilByType, now: number): void {
  for (const type of TYPES) if (untilByType[type] !== 0 && untilByType[type] <= now) untilByType[type] = 0;
}

function inForceAny(untilByType: UntilByType): boolean {
  return untilByType.asset !== 0 || untilByType['grid-target'] !== 0 || untilByType['grid-limits'] !== 0;
}
