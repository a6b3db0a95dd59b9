/**
 * Fleet steering of `ems-site-steer`: msg.sites (or the node's `sites`) lists the sites and the node's mode
 * applies to each, in one message; in mode `portfolio` one ESS power is split over them (portfolio.ts). A bad
 * list is refused before anything is sent. Each site's command is the one the node would send it alone, through
 * the config node's steering queue, with at most fleetWindow() sites under way (runtime/fleet.ts). One output
 * message with a result per site, and one Catch-able error listing the sites that failed (the message and its
 * fields: docs/nodes/ems-site-steer.md, "Fleets and portfolio").
 */
import {
  type ApiPaths,
  type FleetSite,
  parseFleetSites,
  parseSiteList,
  type PortfolioSplit,
  portfolioSplitOf,
  POWER_FACTOR,
  type SiteSummary,
} from '../../protocol';
import {
  fleetWindow,
  mapBounded,
  requestForCommand,
  type Runtime,
  type SentRequest,
  type SteeringCommand,
  type SteeringResult,
} from '../../runtime';
import {
  buildCommand,
  type CommandLimits,
  liftCommand,
  type NodeMessage,
  type NodeValues,
  type Renewal,
  type Status,
  type SteerSettings,
} from '../shared';
import { planPortfolio, portfolioTotal, type PortfolioPlan } from './portfolio';
import { outcome, type FleetOutcome, type FleetResult } from './fleet-outcome';
import { setMaxListeners } from 'node:events';

export interface FleetSettings {
  /** The node's own list (empty: none). */
  list: FleetSite[];
  split: PortfolioSplit;
}

export function fleetSettingsOf(c: Record<string, unknown>): FleetSettings {
  return { list: parseSiteList(c.sites, 'sites'), split: portfolioSplitOf(c.portfolioSplit) };
}

/** The fleet of a message: msg.sites, else the node's list; undefined when neither is set (one site, as before). */
export function fleetOf(msg: NodeMessage, fs: FleetSettings): { sites: FleetSite[]; field: string } | undefined {
  if (msg.sites !== undefined && msg.sites !== null)
    return { sites: parseFleetSites(msg.sites, 'msg.sites'), field: 'msg.sites' };
  if (fs.list.length > 0) return { sites: fs.list, field: 'sites' };
  return undefined;
}

export interface FleetDeps {
  settings: SteerSettings;
  fleet: FleetSettings;
  status: Status;
  signal: AbortSignal;
  dryRun: boolean;
  renew: boolean;
  renewal: Renewal;
  values(msg: NodeMessage): Promise<NodeValues>;
  limits(): CommandLimits;
  paths(): Partial<ApiPaths>;
  runtime(): Promise<Runtime>;
  sites(rt: Runtime): Promise<SiteSummary[]>;
  converted(cmd: SteeringCommand, msg: NodeMessage): Promise<SteeringCommand>;
  /** Refuses a command beyond the site's rating where the node's limit is not set (essW: the battery rating the list states). */
  rated(cmd: SteeringCommand, essW?: number): Promise<void>;
  send(cmd: SteeringCommand, submitted: () => void, msg: NodeMessage, signal: AbortSignal): Promise<SteeringResult>;
  /** Whether stop lifts the curtailment of a site, and until when the last one lasts. */
  lifts(ref: string): boolean;
  curtailedUntil(ref: string): number | undefined;
}

/** What one site is sent: a command, a stop without request, or a failure known before sending. */
type Job = { site: string; cmd?: SteeringCommand; stopOnly?: boolean; error?: Error; part?: number; essW?: number };

export async function steerFleet(
  d: FleetDeps,
  msg: NodeMessage,
  fleet: FleetSite[],
  submitted: () => void,
): Promise<FleetOutcome> {
  // The message's own signal, aborted with the node's: its requests (up to the window at once)
  // listen to it instead of piling listeners on the node's signal.
  const ctl = new AbortController();
  const abort = () => ctl.abort();
  if (d.signal.aborted) ctl.abort();
  else d.signal.addEventListener('abort', abort, { once: true });
  setMaxListeners(4 * fleetWindow(undefined) + 64, ctl.signal);
  try {
    return await run(d, msg, fleet, submitted, ctl.signal);
  } finally {
    d.signal.removeEventListener('abort', abort);
  }
}

async function run(
  d: FleetDeps,
  msg: NodeMessage,
  fleet: FleetSite[],
  submitted: () => void,
  signal: AbortSignal,
): Promise<FleetOutcome> {
  const stop = msg.payload === 'stop' || msg.stop === true;
  const { jobs, plan } = await jobsOf(d, msg, fleet, stop, signal);
  // The next message may go on once every site's command is queued (or failed before it).
  let pending = jobs.length;
  const tick = () => {
    if (--pending === 0) submitted();
  };
  if (pending === 0) submitted();
  const rt = d.dryRun ? undefined : await d.runtime();
  if (!d.dryRun) d.status.busy(d.status.t('fleetSending', { count: jobs.length }));
  const window = fleetWindow(rt?.client);
  setMaxListeners(2 * window + 64, signal);
  const settled = await mapBounded(jobs, window, (job) => runJob(d, job, msg, tick, signal), {
    signal,
    aborted: () => new Error('not sent: the node was closed or redeployed'),
  });
  return outcome(d, msg, jobs, settled, plan, stop);
}

/** What each site of the message is sent: a stop, a portfolio part, or the node's command. */
async function jobsOf(
  d: FleetDeps,
  msg: NodeMessage,
  fleet: FleetSite[],
  stop: boolean,
  signal: AbortSignal,
): Promise<{ jobs: Job[]; plan?: PortfolioPlan }> {
  const now = Date.now();
  if (stop) return { jobs: stopJobs(d, fleet, now) };
  if (d.settings.mode === 'portfolio') return portfolioJobs(d, msg, fleet, now, signal);
  const base = buildCommand(d.settings, fleet[0].site, msg.payload, await d.values(msg), now, d.limits());
  const known = new Map(d.fleet.list.map((f) => [f.site, f]));
  const jobs = fleet.map(({ site, maxPowerW }) => ({
    site,
    cmd: { ...base, site },
    essW: maxPowerW ?? known.get(site)?.maxPowerW,
  }));
  return { jobs };
}

/** A stop per site: its renewal ends; a cancel in mode grid-target, a lift where stop lifts, else nothing to send. */
function stopJobs(d: FleetDeps, fleet: FleetSite[], now: number): Job[] {
  const settings = d.settings;
  return fleet.map(({ site }) => {
    d.renewal.stop(site);
    if (settings.mode === 'grid-target') return { site, cmd: { site, kind: 'cancel-grid-target' } };
    if (d.lifts(site)) return { site, cmd: liftCommand(settings, site, d.curtailedUntil(site), now, d.limits()) };
    return { site, stopOnly: true };
  });
}

/** Mode portfolio: the message's power split over the sites, each site's part an ESS command. */
async function portfolioJobs(
  d: FleetDeps,
  msg: NodeMessage,
  fleet: FleetSite[],
  now: number,
  signal: AbortSignal,
): Promise<{ jobs: Job[]; plan: PortfolioPlan }> {
  const settings = d.settings;
  const values = await d.values(msg);
  const { totalW, validity } = portfolioTotal(settings, msg.payload, values.ess);
  // Validity (and the node's other checks) once, as for a lone ESS command of 0 W; each site then gets its part.
  const base = buildCommand(
    { ...settings, mode: 'ess', maxEssPower: 0 },
    fleet[0].site,
    { ...validity, energyStorage: 0 },
    { ...values, ess: undefined },
    now,
    d.limits(),
  );
  const known = new Map(d.fleet.list.map((f) => [f.site, f]));
  const plan = await planPortfolio(settings, d.fleet.split, totalW, fleet, known, {
    runtime: d.runtime,
    sites: d.sites,
    signal,
  });
  const jobs = plan.parts.map((p) =>
    p.error
      ? { site: p.site, error: p.error }
      : {
          site: p.site,
          part: p.partW! / POWER_FACTOR[settings.essUnit],
          essW: p.maxPowerW,
          cmd: { ...base, site: p.site, energyStorageSetting: { value: p.partW!, unit: 'W' as const } },
        },
  );
  return { jobs, plan };
}

async function runJob(
  d: FleetDeps,
  job: Job,
  msg: NodeMessage,
  tick: () => void,
  signal: AbortSignal,
): Promise<FleetResult> {
  let ticked = false;
  const once = () => {
    if (!ticked) {
      ticked = true;
      tick();
    }
  };
  let cmd: SteeringCommand | undefined;
  try {
    if (job.error) throw job.error;
    if (job.stopOnly) return { site: job.site, ok: true, response: { stopped: true, renewing: false } };
    cmd = await d.converted(job.cmd!, msg);
    if (d.dryRun)
      return {
        site: job.site,
        ok: true,
        request: requestForCommand(cmd, d.paths()),
        ...(job.part !== undefined ? { part: job.part } : {}),
      };
    await d.rated(cmd, job.essW);
    const result = await d.send(cmd, once, msg, signal);
    if (d.renew && cmd.kind !== 'cancel-grid-target' && !(msg.payload === 'stop' || msg.stop === true))
      d.renewal.schedule(cmd);
    return {
      site: job.site,
      ok: true,
      request: result.request,
      response: result.response,
      ...(result.merged ? { merged: true as const } : {}),
      ...(job.part !== undefined ? { part: job.part } : {}),
    };
  } catch (e) {
    // The request the site's result names: built only for a failure (a success names what was sent).
    let request: SentRequest | undefined;
    try {
      if (cmd) request = requestForCommand(cmd, d.paths());
    } catch {
      /* a command that makes no request: none to name */
    }
    throw Object.assign(e instanceof Error ? e : new Error(String(e)), { fleetRequest: request, part: job.part });
  } finally {
    once();
  }
}
