/**
 * Ordered steering per site. Requests for one site go out one at a time in arrival order.
 * While one is in flight, later commands wait and are merged component by component, the
 * later one winning per component; so a burst of 100 ESS changes sends at most 2 requests,
 * and a queued ESS change followed by a queued curtailment change sends both. Applying the
 * merged requests gives the same steering state as applying every command in order.
 */
import { ApiError, apiError, ValidationError } from '../client/errors';
import type { EmsClient } from '../client/client';
import type { ActiveSteeringRequest, CurtailmentValue, GridTargetRequest, PowerValue } from '../protocol/types';

export type SteeringKind = 'combined' | 'ess' | 'curtailment' | 'grid-target' | 'cancel-grid-target';
type ComponentName = 'energyStorageSetting' | 'productionCurtailment' | 'maximizeGridImport' | 'gridTarget';

/** A validated steering command, as the node built it. */
export interface SteeringCommand {
  site: string;
  kind: SteeringKind;
  energyStorageSetting?: PowerValue;
  productionCurtailment?: CurtailmentValue;
  maximizeGridImport?: boolean;
  gridTarget?: Pick<GridTargetRequest, 'setpoint' | 'deadband'>;
  validFrom?: number;
  validUntil?: number;
}

export interface SentRequest {
  method: 'POST' | 'DELETE';
  path: string;
  body?: unknown;
}

export interface SteeringResult {
  request: SentRequest;
  response: unknown;
  /** Some of this command's components were replaced by a later command before sending. */
  merged: boolean;
}

interface Waiter {
  owner: unknown;
  /** Components pending while queued; requests to wait for once the batch is cut. */
  outstanding: number;
  merged: boolean;
  last?: SteeringResult;
  failed?: Error;
  resolve: (r: SteeringResult) => void;
  reject: (e: Error) => void;
  signal?: AbortSignal;
}

interface Pending {
  value: unknown;
  kind: SteeringKind;
  validFrom?: number;
  validUntil?: number;
  owner: unknown;
  waiters: Waiter[];
}

interface SiteQueue {
  busy: boolean;
  pending: Map<ComponentName, Pending>;
}

const COMPONENTS: ComponentName[] = ['energyStorageSetting', 'productionCurtailment', 'maximizeGridImport', 'gridTarget'];
const ENDPOINT: Record<string, string> = { ess: '/steering/ess', curtailment: '/steering/curtailment' };

export interface SteeringQueueOptions {
  /** Longest validity of any signal, ms from the moment it is submitted (none when unset). */
  maxValidityMs?: number;
  /** Clock, for tests (default Date.now). */
  now?: () => number;
}

/** "24 h", "90 min", "1 h 30 min": a limit in words. */
export function formatSpan(ms: number): string {
  const min = Math.round(ms / 60_000);
  const h = Math.floor(min / 60);
  const m = min % 60;
  return h === 0 ? `${m} min` : m === 0 ? `${h} h` : `${h} h ${m} min`;
}

/**
 * Refuses a validUntil more than `maxValidityMs` after `now`, naming `field` (where the value
 * came from) and the limit; `got` describes the value as the caller received it.
 */
export function checkMaxValidity(validUntil: number, maxValidityMs: number | undefined, now: number, field = 'validUntil', got?: string): void {
  if (maxValidityMs === undefined || !(maxValidityMs > 0)) return;
  if (Number.isFinite(validUntil) && validUntil - now <= maxValidityMs) return;
  const iso = Number.isFinite(validUntil) && Math.abs(validUntil) <= 8.64e15 ? new Date(validUntil).toISOString() : String(validUntil);
  const limit = `${formatSpan(maxValidityMs)} (the config node's maxValidity, ${Math.round(maxValidityMs / 60_000)} min) from now`;
  const what = field === 'validUntil' || /\.validUntil$/.test(field) ? `must be at most ${limit}; got ${iso}` : `must give a validUntil at most ${limit}; got ${got ?? iso} (validUntil ${iso})`;
  throw new ValidationError(field, `${what}; nothing was sent`, 'unprocessable');
}

export class SteeringQueue {
  private readonly sites = new Map<string, SiteQueue>();
  /** Requests sent, for diagnostics and tests. */
  sent = 0;

  constructor(private readonly client: EmsClient, private readonly opts: SteeringQueueOptions = {}) {}

  /** The longest validity this queue accepts, ms (undefined: no limit). */
  get maxValidityMs(): number | undefined {
    return this.opts.maxValidityMs;
  }

  /**
   * Queues a command; resolves when every component of it has been sent (or merged into a later send).
   * A validUntil more than maxValidityMs from now is refused with a ValidationError; nothing is sent.
   */
  submit(cmd: SteeringCommand, opts: { owner?: unknown; signal?: AbortSignal } = {}): Promise<SteeringResult> {
    return new Promise<SteeringResult>((resolve, reject) => {
      if (cmd.validUntil !== undefined && cmd.kind !== 'cancel-grid-target') {
        try {
          checkMaxValidity(cmd.validUntil, this.opts.maxValidityMs, this.opts.now ? this.opts.now() : Date.now());
        } catch (e) {
          reject(e as Error);
          return;
        }
      }
      const q = this.site(cmd.site);
      const waiter: Waiter = { owner: opts.owner, outstanding: 0, merged: false, resolve, reject, signal: opts.signal };
      for (const name of COMPONENTS) {
        const value = name === 'gridTarget' && cmd.kind === 'cancel-grid-target' ? null : cmd[name];
        if (value === undefined) continue;
        const prev = q.pending.get(name);
        const waiters = prev ? prev.waiters : [];
        if (prev) for (const w of prev.waiters) w.merged = true;
        waiters.push(waiter);
        waiter.outstanding++;
        q.pending.set(name, { value, kind: cmd.kind, validFrom: cmd.validFrom, validUntil: cmd.validUntil, owner: opts.owner, waiters });
      }
      if (waiter.outstanding === 0) {
        reject(apiError({ code: 'EMS_EMPTY', message: 'steering command sets no component', request: { method: 'POST', path: `/sites/${cmd.site}/steering` } }));
        return;
      }
      this.pump(cmd.site, q);
    });
  }

  /** Drops every queued (not yet sent) component of `owner`; returns a description of each. */
  dropOwner(owner: unknown, reason = 'node closed'): string[] {
    const dropped: string[] = [];
    for (const [site, q] of this.sites) {
      for (const [name, p] of [...q.pending]) {
        if (p.owner !== owner) continue;
        q.pending.delete(name);
        dropped.push(`${site} ${name}=${describe(p.value)}`);
        for (const w of p.waiters) this.settle(w, undefined, apiError({ code: 'EMS_DROPPED', message: `steering not sent (${reason}): ${name} for ${site}`, request: { method: 'POST', path: `/sites/${site}/steering` } }));
      }
    }
    return dropped;
  }

  /** Components waiting, for status and tests. */
  queued(site?: string): number {
    let n = 0;
    for (const [s, q] of this.sites) if (!site || s === site) n += q.pending.size;
    return n;
  }

  private site(ref: string): SiteQueue {
    let q = this.sites.get(ref);
    if (!q) this.sites.set(ref, (q = { busy: false, pending: new Map() }));
    return q;
  }

  private pump(site: string, q: SiteQueue): void {
    if (q.busy || q.pending.size === 0) return;
    q.busy = true;
    const batch = new Map(q.pending);
    q.pending.clear();
    this.sendBatch(site, batch)
      .catch(() => undefined)
      .finally(() => {
        q.busy = false;
        if (q.pending.size === 0) this.sites.delete(site);
        else this.pump(site, q);
      });
  }

  /** Sends a batch: one request per validity window (grid target on its own endpoint), one at a time. */
  private async sendBatch(site: string, batch: Map<ComponentName, Pending>): Promise<void> {
    const groups = new Map<string, Array<[ComponentName, Pending]>>();
    for (const entry of batch) {
      const key = entry[0] === 'gridTarget' ? 'gridTarget' : `${entry[1].validFrom ?? ''}|${entry[1].validUntil ?? ''}`;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key)!.push(entry);
    }
    // A waiter is answered once per request that carries any of its components.
    const perGroup = [...groups.values()].map((entries) => [...new Set(entries.flatMap(([, p]) => p.waiters))]);
    for (const w of new Set(perGroup.flat())) w.outstanding = perGroup.filter((g) => g.includes(w)).length;
    for (const [gi, entries] of [...groups.values()].entries()) {
      const waiters = perGroup[gi];
      const live = waiters.filter((w) => !w.signal?.aborted);
      const ctl = new AbortController();
      if (live.length === 0) ctl.abort();
      let remaining = live.length;
      const onAbort = () => { if (--remaining <= 0) ctl.abort(); };
      for (const w of live) w.signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const result = await this.sendGroup(site, entries, ctl.signal);
        this.sent++;
        for (const w of waiters) this.settle(w, result);
      } catch (err) {
        for (const w of waiters) this.settle(w, undefined, err as Error);
      } finally {
        for (const w of live) w.signal?.removeEventListener('abort', onAbort);
      }
    }
  }

  private async sendGroup(site: string, entries: Array<[ComponentName, Pending]>, signal: AbortSignal): Promise<SteeringResult> {
    const request = requestFor(site, entries.map(([n, p]) => ({ name: n, value: p.value, kind: p.kind })), entries[0][1]);
    const o = { signal };
    const c = this.client;
    const body = request.body as never;
    const response = request.method === 'DELETE' ? await c.cancelGridTarget(site, o)
      : request.path.endsWith('/grid-target') ? await c.steerGridTarget(site, body, o)
      : request.path.endsWith('/ess') ? await c.steerEss(site, body, o)
      : request.path.endsWith('/curtailment') ? await c.steerCurtailment(site, body, o)
      : await c.steer(site, body, o);
    return { request, response, merged: entries.some(([, p]) => p.waiters.length > 1) };
  }

  private settle(w: Waiter, result?: SteeringResult, err?: Error): void {
    if (err) w.failed ??= err;
    else if (result) w.last = result;
    if (--w.outstanding > 0) return;
    if (w.failed) w.reject(w.failed);
    else w.resolve({ ...w.last!, merged: w.merged || w.last!.merged });
  }
}

/**
 * The request that carries some components with one validity: grid target on its own
 * endpoint (or DELETE to cancel), a lone component of an ESS-only or curtailment-only
 * command on that command's endpoint, anything else on the combined endpoint.
 */
function requestFor(site: string, comps: Array<{ name: ComponentName; value: unknown; kind: SteeringKind }>, v: { validFrom?: number; validUntil?: number }): SentRequest {
  const base = `/sites/${encodeURIComponent(site)}`;
  const validity = { ...(v.validFrom !== undefined ? { validFrom: v.validFrom } : {}), validUntil: v.validUntil };
  const [first] = comps;
  if (first.name === 'gridTarget') {
    if (first.value === null) return { method: 'DELETE', path: `${base}/steering/grid-target` };
    return { method: 'POST', path: `${base}/steering/grid-target`, body: { ...(first.value as object), ...validity } };
  }
  if (comps.length === 1 && ENDPOINT[first.kind] && (first.name === 'energyStorageSetting') === (first.kind === 'ess')) {
    return { method: 'POST', path: `${base}${ENDPOINT[first.kind]}`, body: { setting: first.value, ...validity } };
  }
  const body: Record<string, unknown> = {};
  for (const c of comps) body[c.name] = c.value;
  return { method: 'POST', path: `${base}/steering`, body: { ...body, ...validity } };
}

/** The request a lone command would be sent as (for dry runs and logs). */
export function requestForCommand(cmd: SteeringCommand): SentRequest {
  const comps = COMPONENTS.flatMap((name) => {
    const value = name === 'gridTarget' && cmd.kind === 'cancel-grid-target' ? null : cmd[name];
    return value === undefined ? [] : [{ name, value, kind: cmd.kind }];
  });
  if (comps.length === 0) throw apiError({ code: 'EMS_EMPTY', message: 'steering command sets no component', request: { method: 'POST', path: `/sites/${cmd.site}/steering` } });
  return requestFor(cmd.site, comps, cmd);
}

function describe(v: unknown): string {
  if (v === null) return 'cancel';
  if (v && typeof v === 'object' && 'value' in v) return `${(v as PowerValue).value} ${(v as PowerValue).unit}`;
  if (v && typeof v === 'object' && 'setpoint' in v) return describe((v as GridTargetRequest).setpoint);
  return String(v);
}
