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

export class SteeringTypes {
  /** Per site, per type: the validUntil of what is in force (or scheduled), epoch ms. */
  private readonly sites = new Map<string, Map<SteeringType, number>>();
  /**
   * Sites remembered before the next sweep: PRUNE_AT, then twice what a sweep left, so sweeping
   * costs O(1) per request however many sites are in force (a sweep per request once 1000 sites
   * were in force made a 5,000-site portfolio quadratic).
   */
  private pruneAt = PRUNE_AT;

  constructor(private readonly now: () => number = Date.now) {}

  /** The validUntil of `type` in force on `site`, or undefined when none is (or it lapsed). */
  inForce(site: string, type: SteeringType): number | undefined {
    const until = this.sites.get(site)?.get(type);
    return until !== undefined && until > this.now() ? until : undefined;
  }

  /** The types a request on `endpoint` would end on `site` now (nothing for a cancel or grid limits). */
  displacedBy(site: string, endpoint: SteeringEndpoint): Displaced[] {
    if (endpoint === 'cancel-grid-target') return [];
    const out: Displaced[] = [];
    for (const type of DISPLACES[steeringTypeOf(endpoint)]) {
      const validUntil = this.inForce(site, type);
      if (validUntil !== undefined) out.push({ type, validUntil });
    }
    return out;
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
    const untilByType = this.sites.get(site) ?? new Map<SteeringType, number>();
    for (const [type, until] of untilByType) if (until <= now) untilByType.delete(type);
    for (const d of displaced) untilByType.delete(d.type);
    const type = steeringTypeOf(endpoint);
    if (endpoint === 'cancel-grid-target') untilByType.delete('grid-target');
    else if (validUntil !== undefined && validUntil > now)
      untilByType.set(type, type === 'asset' ? Math.max(untilByType.get(type) ?? 0, validUntil) : validUntil);
    if (untilByType.size > 0) this.sites.set(site, untilByType);
    else this.sites.delete(site);
    if (this.sites.size > this.pruneAt) {
      this.prune(now);
      this.pruneAt = Math.max(PRUNE_AT, 2 * this.sites.size);
    }
    return displaced;
  }

  /** Forgets every lapsed entry (a Node-RED that steers many sites through msg.site). */
  private prune(now: number): void {
    for (const [site, m] of this.sites) {
      for (const [type, until] of m) if (until <= now) m.delete(type);
      if (m.size === 0) this.sites.delete(site);
    }
  }

  /** Sites with a type in force, for tests. */
  get size(): number {
    return this.sites.size;
  }
}
