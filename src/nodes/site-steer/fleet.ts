/**
 * Fleet steering of `ems-site-steer`: msg.sites (or the node's `sites`) lists the
 * sites, and the node's mode applies to each of them in one message; in mode `portfolio` one
 * ESS power for the whole fleet is split over them (portfolio.ts).
 *
 * - Refused before anything is sent: a bad list (more than SERVICE.maxFleetSites, a site twice,
 *   a bad entry; the error names the field and index), a payload the mode refuses.
 * - Each site's command is the one the node would send to it alone (same limits, each site's
 *   rating where a limit is not set: a msg.sites entry's maxPowerW, else GET /sites; validity,
 *   `%` conversion, delivery check, renewal); it goes through the config node's steering
 *   queue (per-site order and merging) and client (concurrency), with at most fleetWindow()
 *   sites under way at once (runtime/fleet.ts).
 * - One output message: payload.results (one entry per site, in list order: {site, ok,
 *   request, response | error}) and payload.summary ({ok, failed, total}; portfolio: asked,
 *   allocated, accepted, shortfall, unit). When any site failed, the message still goes out
 *   and the node also reports one Catch-able error (done(err)) listing the failed sites.
 * - Renew renews each site's command as it was sent (a portfolio part is not split again).
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
  isNotSteering,
  mapBounded,
  requestForCommand,
  type Runtime,
  type SentRequest,
  type Settled,
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

/** One entry of msg.payload.results. */
export interface FleetResult {
  site: string;
  ok: boolean;
  request?: SentRequest;
  response?: unknown;
  error?: { message: string; code?: string; field?: string; status?: number };
  merged?: true;
  /** Portfolio: the site's part, in the node's unit. */
  part?: number;
  /** In a group: another instance leads the site and sends its request (not a failure). */
  standby?: { leader?: string };
}

/** What a fleet message ends with: its output, and the error listing the failed sites (if any). */
const FLEET: unique symbol = Symbol('fleet outcome');

export interface FleetOutcome {
  /** A private brand: a message of the single-site path can never look like a fleet outcome. */
  [FLEET]: true;
  out: NodeMessage;
  error?: Error;
}

export const isFleetOutcome = (v: unknown): v is FleetOutcome =>
  typeof v === 'object' && v !== null && (v as FleetOutcome)[FLEET] === true;

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
  const s = d.settings;
  const now = Date.now();
  const stop = msg.payload === 'stop' || msg.stop === true;
  let plan: PortfolioPlan | undefined;
  let jobs: Job[];
  if (stop) {
    jobs = fleet.map(({ site }) => {
      d.renewal.stop(site);
      if (s.mode === 'grid-target') return { site, cmd: { site, kind: 'cancel-grid-target' } };
      if (d.lifts(site)) return { site, cmd: liftCommand(s, site, d.curtailedUntil(site), now, d.limits()) };
      return { site, stopOnly: true };
    });
  } else if (s.mode === 'portfolio') {
    const values = await d.values(msg);
    const { totalW, validity } = portfolioTotal(s, msg.payload, values.ess);
    // Validity (and the node's other checks) once, as for a lone ESS command of 0 W; each site then gets its part.
    const base = buildCommand(
      { ...s, mode: 'ess', maxEssPower: 0 },
      fleet[0].site,
      { ...validity, energyStorage: 0 },
      { ...values, ess: undefined },
      now,
      d.limits(),
    );
    const known = new Map(d.fleet.list.map((f) => [f.site, f]));
    plan = await planPortfolio(s, d.fleet.split, totalW, fleet, known, { runtime: d.runtime, sites: d.sites, signal });
    jobs = plan.parts.map((p) =>
      p.error
        ? { site: p.site, error: p.error }
        : {
            site: p.site,
            part: p.partW! / POWER_FACTOR[s.essUnit],
            essW: p.maxPowerW,
            cmd: { ...base, site: p.site, energyStorageSetting: { value: p.partW!, unit: 'W' } },
          },
    );
  } else {
    const base = buildCommand(s, fleet[0].site, msg.payload, await d.values(msg), now, d.limits());
    const known = new Map(d.fleet.list.map((f) => [f.site, f]));
    jobs = fleet.map(({ site, maxPowerW }) => ({
      site,
      cmd: { ...base, site },
      essW: maxPowerW ?? known.get(site)?.maxPowerW,
    }));
  }

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
    const r = await d.send(cmd, once, msg, signal);
    if (d.renew && cmd.kind !== 'cancel-grid-target' && !(msg.payload === 'stop' || msg.stop === true))
      d.renewal.schedule(cmd);
    return {
      site: job.site,
      ok: true,
      request: r.request,
      response: r.response,
      ...(r.merged ? { merged: true as const } : {}),
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

function errorOf(e: Error): FleetResult['error'] {
  const x = e as Error & { code?: unknown; field?: unknown; status?: unknown };
  const out: FleetResult['error'] = { message: e.message };
  if (typeof x.code === 'string') out.code = x.code;
  if (typeof x.field === 'string') out.field = x.field;
  if (typeof x.status === 'number') out.status = x.status;
  return out;
}

/** Most failed sites the Catch error names one by one. */
export const LISTED = 10;

function outcome(
  d: FleetDeps,
  msg: NodeMessage,
  jobs: Job[],
  settled: Array<Settled<FleetResult>>,
  plan: PortfolioPlan | undefined,
  stop: boolean,
): FleetOutcome {
  const results: FleetResult[] = settled.map((r, i) => {
    if (r.ok) return r.value;
    const x = r.error as Error & { fleetRequest?: SentRequest; part?: number };
    // In a group, a site another instance leads is sent there: no error here.
    const part = x.part;
    if (isNotSteering(r.error) && r.error.reason !== 'unreachable')
      return {
        site: jobs[i].site,
        ok: false,
        standby: { leader: r.error.leader },
        ...(part !== undefined ? { part } : {}),
      };
    const res: FleetResult = { site: jobs[i].site, ok: false, error: errorOf(r.error) };
    if (x.fleetRequest) res.request = x.fleetRequest;
    if (x.part !== undefined) res.part = x.part;
    return res;
  });
  const failed = results.filter((r) => !r.ok && !r.standby);
  const standby = results.length - failed.length - results.filter((r) => r.ok).length;
  const summary: Record<string, unknown> = {
    ok: results.length - failed.length - standby,
    failed: failed.length,
    total: results.length,
  };
  if (standby > 0) summary.standby = standby;
  if (plan) {
    const f = POWER_FACTOR[d.settings.essUnit];
    const acceptedW = results.reduce((a, r, i) => a + (r.ok ? (plan!.parts[i].partW ?? 0) : 0), 0);
    Object.assign(summary, {
      unit: d.settings.essUnit,
      asked: plan.askedW / f,
      allocated: plan.allocatedW / f,
      accepted: acceptedW / f,
      shortfall: plan.shortfallW / f,
    });
  }
  const t = d.status.t;
  const counts = { ok: summary.ok as number, total: results.length, failed: failed.length };
  if (d.dryRun) d.status.dryRun(t('fleetDryRun', counts));
  else if (stop) d.status.ended(t(failed.length ? 'fleetStoppedFailed' : 'fleetStopped', counts));
  else if (failed.length === results.length) d.status.failing(t('fleetFailed', counts));
  else if (failed.length || plan?.shortfallW)
    d.status.sentWarning(
      t(failed.length ? 'fleetSentFailed' : 'fleetShortfall', {
        ...counts,
        shortfall: String(summary.shortfall),
        unit: d.settings.essUnit,
      }),
    );
  else d.status.sent(t('fleetSent', counts));
  const out: NodeMessage = { ...msg, payload: { results, summary } };
  if (d.dryRun) out.dryRun = true;
  if (failed.length === 0) return { [FLEET]: true, out };
  const named = failed
    .slice(0, LISTED)
    .map((r) => `${r.site} (${r.error!.message})`)
    .join('; ');
  const more = failed.length > LISTED ? `; and ${failed.length - LISTED} more` : '';
  const err = new FleetError(
    msg.sites !== undefined ? 'msg.sites' : 'sites',
    `${failed.length} of ${results.length} sites failed: ${named}${more}; the output message carries every site's result (msg.payload.results)`,
    { failed: failed.map((r) => ({ site: r.site, error: r.error! })), summary },
  );
  return { [FLEET]: true, out, error: err };
}

/**
 * The one Catch-able error of a fleet message with failed sites: names the list's field and
 * the failed sites; `cause` (which Node-RED copies into the Catch node's msg.error) holds
 * every failed site and its error, and the summary.
 */
export class FleetError extends Error {
  readonly code = 'EMS_FLEET_PARTIAL';
  constructor(
    readonly field: string,
    text: string,
    readonly cause: {
      failed: Array<{ site: string; error: NonNullable<FleetResult['error']> }>;
      summary: Record<string, unknown>;
    },
  ) {
    super(`${field}: ${text}`);
    this.name = 'FleetError';
  }
}
