/**
 * A `%` curtailment within the published type: the service's CurtailmentValue has
 * W, kW and MW only, so by default (config node percentCurtailment "convert") the node sends
 * a `%` limit as W, integer, of the site's installed PV power. That power comes from, first
 * to last: the node's pvPeakPower (W, when set), msg.pvPeakPower (W), the site's pvPeakPower
 * in GET /sites (the simulator lists it; cached per runtime). Without any, the limit is
 * refused with an error that says what to set. percentCurtailment "send" keeps `unit: "%"`.
 */
import {
  accepts,
  LIMITS,
  numberOf,
  percentToWatts,
  type PowerValue,
  show,
  type SiteSummary,
  ValidationError,
} from '../../protocol';
import type { PercentCurtailment, SteeringCommand } from '../../runtime';

/** How long a site list is used before it is read again; a failed read is retried after FAILED_MS. */
export const SITES_TTL_MS = 10 * 60_000;
export const FAILED_MS = 30_000;

export interface PvSources {
  /** The node's pvPeakPower, W (0 = not set). */
  node: number;
  /** msg.pvPeakPower as the message carries it (undefined = not set). */
  msg: unknown;
  /** The site list of GET /sites (none: not asked, e.g. no runtime). */
  sites?: () => Promise<SiteSummary[]>;
}

/** The node's limits a converted curtailment still obeys. */
export interface PercentLimits {
  /** maxCurtailment, W (0 = none). */
  maxCurtailment: number;
}

const WHAT_TO_SET =
  'set pvPeakPower (W) on the node, msg.pvPeakPower (W), or the config node\'s percentCurtailment to "send" (sends unit "%", for a service that accepts it)';

/**
 * The command with a `%` curtailment converted to W using the site's PV power; the command
 * itself when it has none, or when `mode` is "send".
 */
export async function convertPercent(
  cmd: SteeringCommand,
  mode: PercentCurtailment,
  pv: PvSources,
  limits: PercentLimits,
): Promise<SteeringCommand> {
  const curtailment = cmd.productionCurtailment;
  if (!curtailment || curtailment.unit !== '%' || mode === 'send') return cmd;
  const { watts: peak, from } = await pvPower(cmd.site, pv, curtailment.value);
  const watts = Math.round(percentToWatts(curtailment.value, peak));
  if (limits.maxCurtailment > 0 && watts > limits.maxCurtailment) {
    throw new ValidationError(
      'curtailment',
      `must be within the node's limit maxCurtailment = ${limits.maxCurtailment} W; got ${curtailment.value} % = ${watts} W of the site's PV power ${peak} W (${from}); nothing was sent`,
    );
  }
  const value: PowerValue = { value: watts, unit: 'W' };
  return { ...cmd, productionCurtailment: value };
}

/** The site's installed PV power, W, and where it came from. */
async function pvPower(site: string, pv: PvSources, percent: number): Promise<{ watts: number; from: string }> {
  if (pv.node > 0) return { watts: pv.node, from: 'pvPeakPower' };
  if (pv.msg !== undefined && pv.msg !== null && pv.msg !== '') {
    const given = numberOf(pv.msg);
    if (
      !(typeof pv.msg === 'number' || typeof pv.msg === 'string') ||
      !accepts(LIMITS.pvPeakPower, given) ||
      !(given > 0)
    ) {
      throw new ValidationError(
        'msg.pvPeakPower',
        `must be the site's installed PV power, a number of W greater than 0; got ${show(pv.msg)}; nothing was sent`,
      );
    }
    return { watts: given, from: 'msg.pvPeakPower' };
  }
  let why: string;
  if (!pv.sites) why = 'no site list was read';
  else {
    try {
      const found = (await pv.sites()).find((s) => s.siteReference === site);
      const listedW = found?.pvPeakPower;
      if (typeof listedW === 'number' && Number.isFinite(listedW) && listedW > 0)
        return { watts: listedW, from: 'GET /sites' };
      why = found ? 'GET /sites lists the site without its pvPeakPower' : 'GET /sites does not list the site';
    } catch (e) {
      why = `GET /sites failed: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  throw new ValidationError(
    'pvPeakPower',
    `is needed to send a curtailment of ${percent} % in W (the published curtailment type has no %): ${WHAT_TO_SET}; ${why}; nothing was sent`,
    'unprocessable',
  );
}

interface Cached {
  at: number;
  ok: boolean;
  list: Promise<SiteSummary[]>;
}

const cache = new WeakMap<object, Cached>();

/**
 * The site list of a runtime, read once and shared by its nodes for SITES_TTL_MS (a failed
 * read for FAILED_MS, so a failing service is not asked on every message).
 */
export function cachedSites(
  owner: object,
  read: () => Promise<SiteSummary[]>,
  now = Date.now(),
): Promise<SiteSummary[]> {
  const cached = cache.get(owner);
  if (cached && now - cached.at < (cached.ok ? SITES_TTL_MS : FAILED_MS)) return cached.list;
  const entry: Cached = { at: now, ok: true, list: read() };
  entry.list.catch(() => {
    entry.ok = false;
  });
  cache.set(owner, entry);
  return entry.list;
}
