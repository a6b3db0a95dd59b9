/**
 * What a fleet message of `ems-site-steer` ends with (fleet.ts sends it): one output message
 * with every site's result and a summary, the status, and, when any site failed, one
 * Catch-able error listing the failed sites.
 */
import { isNotSteering, type SentRequest, type Settled } from '../../runtime';
import { POWER_FACTOR } from '../../protocol';
import type { NodeMessage, Status, SteerSettings } from '../shared';
import type { PortfolioPlan } from './portfolio';

/** What the outcome needs of the node. */
export interface OutcomeDeps {
  settings: SteerSettings;
  status: Status;
  dryRun: boolean;
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

function errorOf(e: Error): FleetResult['error'] {
  const detail = e as Error & { code?: unknown; field?: unknown; status?: unknown };
  const out: FleetResult['error'] = { message: e.message };
  if (typeof detail.code === 'string') out.code = detail.code;
  if (typeof detail.field === 'string') out.field = detail.field;
  if (typeof detail.status === 'number') out.status = detail.status;
  return out;
}

/** Most failed sites the Catch error names one by one. */
const LISTED = 10;

export function outcome(
  d: OutcomeDeps,
  msg: NodeMessage,
  jobs: ReadonlyArray<{ site: string }>,
  settled: Array<Settled<FleetResult>>,
  plan: PortfolioPlan | undefined,
  stop: boolean,
): FleetOutcome {
  const results = settled.map((r, i) => (r.ok ? r.value : failedResult(jobs[i].site, r.error)));
  const failed = results.filter((r) => !r.ok && !r.standby);
  const summary = summaryOf(d, results, failed.length, plan);
  showOutcome(d, summary, failed.length, results.length, stop);
  const out: NodeMessage = { ...msg, payload: { results, summary } };
  if (d.dryRun) out.dryRun = true;
  if (failed.length === 0) return { [FLEET]: true, out };
  return { [FLEET]: true, out, error: fleetErrorOf(msg, failed, results.length, summary) };
}

/** A site's result when its job failed: standby in a group (another instance leads it and sends), else its error. */
function failedResult(site: string, error: Error): FleetResult {
  const tagged = error as Error & { fleetRequest?: SentRequest; part?: number };
  const part = tagged.part;
  if (isNotSteering(error) && error.reason !== 'unreachable')
    return { site, ok: false, standby: { leader: error.leader }, ...(part !== undefined ? { part } : {}) };
  const res: FleetResult = { site, ok: false, error: errorOf(error) };
  if (tagged.fleetRequest) res.request = tagged.fleetRequest;
  if (tagged.part !== undefined) res.part = tagged.part;
  return res;
}

/** msg.payload.summary: sites ok, failed, total (and standby); for a portfolio, the power asked, allocated, accepted, short. */
function summaryOf(
  d: OutcomeDeps,
  results: FleetResult[],
  failed: number,
  plan: PortfolioPlan | undefined,
): Record<string, unknown> {
  const standby = results.length - failed - results.filter((r) => r.ok).length;
  const summary: Record<string, unknown> = { ok: results.length - failed - standby, failed, total: results.length };
  if (standby > 0) summary.standby = standby;
  if (plan) {
    const factor = POWER_FACTOR[d.settings.essUnit];
    const acceptedW = results.reduce((a, r, i) => a + (r.ok ? (plan.parts[i].partW ?? 0) : 0), 0);
    Object.assign(summary, {
      unit: d.settings.essUnit,
      asked: plan.askedW / factor,
      allocated: plan.allocatedW / factor,
      accepted: acceptedW / factor,
      shortfall: plan.shortfallW / factor,
    });
  }
  return summary;
}

/** The status of a fleet message: dry run, stopped, all failed, some failed or short, or all sent. */
function showOutcome(d: OutcomeDeps, summary: Record<string, unknown>, failed: number, total: number, stop: boolean) {
  const translate = d.status.t;
  const counts = { ok: summary.ok as number, total, failed };
  if (d.dryRun) d.status.dryRun(translate('fleetDryRun', counts));
  else if (stop) d.status.ended(translate(failed ? 'fleetStoppedFailed' : 'fleetStopped', counts));
  else if (failed === total) d.status.failing(translate('fleetFailed', counts));
  else if (failed || summary.shortfall)
    d.status.sentWarning(
      translate(failed ? 'fleetSentFailed' : 'fleetShortfall', {
        ...counts,
        shortfall: String(summary.shortfall),
        unit: d.settings.essUnit,
      }),
    );
  else d.status.sent(translate('fleetSent', counts));
}

/** The one Catch-able error naming the failed sites (the first LISTED, then a count). */
function fleetErrorOf(
  msg: NodeMessage,
  failed: FleetResult[],
  total: number,
  summary: Record<string, unknown>,
): FleetError {
  const named = failed
    .slice(0, LISTED)
    .map((r) => `${r.site} (${r.error!.message})`)
    .join('; ');
  const more = failed.length > LISTED ? `; and ${failed.length - LISTED} more` : '';
  return new FleetError(
    msg.sites !== undefined ? 'msg.sites' : 'sites',
    `${failed.length} of ${total} sites failed: ${named}${more}; the output message carries every site's result (msg.payload.results)`,
    { failed: failed.map((r) => ({ site: r.site, error: r.error! })), summary },
  );
}

/**
 * The one Catch-able error of a fleet message with failed sites: names the list's field and
 * the failed sites; `cause` (which Node-RED copies into the Catch node's msg.error) holds
 * every failed site and its error, and the summary.
 */
class FleetError extends Error {
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
