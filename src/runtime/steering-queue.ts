/**
 * Ordered steering per site. Requests for one site go out one at a time in arrival order.
 * While one is in flight, later commands wait and are merged component by component, the
 * later one winning per component; so a burst of 100 ESS changes sends at most 2 requests,
 * and a queued ESS change followed by a queued curtailment change sends both. Applying the
 * merged requests gives the same steering state as applying every command in order.
 */
import { apiError, onAbort, ValidationError } from '../client';
import type { EmsClient } from '../client';
import { checkMaxValidity, mergeKey, partsOf, sentForm, steeringRequestFor, steeringRequestOf } from '../protocol';
import type {
  GridTargetRequest,
  PowerValue,
  ApiPaths,
  SentRequest,
  SteeringCommand,
  SteeringComponent,
  SteeringEndpoint,
  SteeringPart,
} from '../protocol';
import { SteeringTypes, type Displaced } from './steering-types';

export type { SentRequest, SteeringCommand } from '../protocol';
export type { Displaced } from './steering-types';
/** The endpoint a command is meant for (the protocol's SteeringEndpoint). */
type SteeringKind = SteeringEndpoint;
type ComponentName = SteeringComponent;

export interface SteeringResult {
  /** The request that was sent: its method, path and body, as the client sent them. */
  request: SentRequest;
  response: unknown;
  /** Some of this command's components were replaced by a later command before sending. */
  merged: boolean;
  /**
   * The steering types the request(s) ended on the site, which this runtime had in force
   * (asset steering vs grid target); absent when none.
   */
  displaced?: Displaced[];
}

interface Waiter {
  owner: unknown;
  /** Components pending while queued; requests to wait for once the batch is cut. */
  outstanding: number;
  merged: boolean;
  displaced?: Displaced[];
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
  /** None until a command waits (a site steered once in a while never needs a second Map). */
  pending?: Map<ComponentName, Pending>;
}

export interface SteeringQueueOptions {
  /** Longest validity of any signal, ms from the moment it is submitted (none when unset). */
  maxValidityMs?: number;
  /** Clock, for tests (default Date.now). */
  now?: () => number;
  /** The configured paths (protocol/paths.ts): each request is built with them. */
  paths?: Partial<ApiPaths>;
  /**
   * With a group: resolves when this instance may steer `site` now, else rejects (the error
   * names why); asked before each request goes out, so no path sends to a site it does not lead.
   */
  gate?: (site: string) => Promise<unknown>;
}

export class SteeringQueue {
  private readonly sites = new Map<string, SiteQueue>();
  /** Requests sent, for diagnostics and tests. */
  sent = 0;
  /**
   * Steps of merging: one per command merged into a component already queued, one per waiter
   * counted for a batch of several requests. For tests: a burst of N commands takes O(N) of them.
   */
  mergeSteps = 0;
  /**
   * Which steering type each site has in force from this runtime (steering-types.ts): a result
   * names the type its request ended (asset steering and grid target displace each other on the
   * service), so the sender can warn.
   */
  readonly types: SteeringTypes;

  constructor(
    private readonly client: EmsClient,
    private readonly opts: SteeringQueueOptions = {},
  ) {
    this.types = new SteeringTypes(opts.now ?? Date.now);
  }

  /** The longest validity this queue accepts, ms (undefined: no limit). */
  get maxValidityMs(): number | undefined {
    return this.opts.maxValidityMs;
  }

  /**
   * Queues a command (validated already: the site-steer node's buildCommand); resolves when every
   * component of it has been sent (or merged into a later send).
   * A validUntil more than maxValidityMs from now is refused with a ValidationError; nothing is sent.
   */
  submit(cmd: SteeringCommand, opts: { owner?: unknown; signal?: AbortSignal } = {}): Promise<SteeringResult> {
    return new Promise<SteeringResult>((resolve, reject) => {
      if (cmd.kind !== 'cancel-grid-target') {
        try {
          if (cmd.validUntil === undefined)
            throw new ValidationError('validUntil', 'is required: epoch milliseconds, an ISO 8601 string or a Date');
          checkMaxValidity(cmd.validUntil, this.opts.maxValidityMs, this.opts.now ? this.opts.now() : Date.now());
        } catch (e) {
          reject(e as Error);
          return;
        }
      }
      const parts = partsOf(cmd);
      if (parts.length === 0) {
        reject(
          apiError({
            code: 'EMS_EMPTY',
            message: 'steering command sets no component',
            request: { method: 'POST', path: `/sites/${cmd.site}/steering` },
          }),
        );
        return;
      }
      const queue = this.site(cmd.site);
      const pending = (queue.pending ??= new Map());
      const waiter: Waiter = { owner: opts.owner, outstanding: 0, merged: false, resolve, reject, signal: opts.signal };
      for (const { name, value } of parts) {
        const prev = pending.get(name);
        const waiters = prev ? prev.waiters : [];
        // Every waiter of a component but its last was marked when the next came: marking the
        // last is enough, so a burst of N commands costs N, not N².
        if (prev) {
          waiters[waiters.length - 1].merged = true;
          this.mergeSteps++;
        }
        waiters.push(waiter);
        waiter.outstanding++;
        pending.set(name, {
          value,
          kind: cmd.kind,
          validFrom: cmd.validFrom,
          validUntil: cmd.validUntil,
          owner: opts.owner,
          waiters,
        });
      }
      this.pump(cmd.site, queue);
    });
  }

  /** Drops every queued (not yet sent) component of `owner`; returns a description of each. */
  dropOwner(owner: unknown, reason = 'node closed'): string[] {
    const dropped: string[] = [];
    for (const [site, q] of this.sites) {
      if (!q.pending) continue;
      for (const [name, p] of [...q.pending]) {
        if (p.owner !== owner) continue;
        q.pending.delete(name);
        dropped.push(`${site} ${name}=${describe(p.value)}`);
        for (const w of p.waiters)
          this.settle(
            w,
            undefined,
            apiError({
              code: 'EMS_DROPPED',
              message: `steering not sent (${reason}): ${name} for ${site}`,
              request: { method: 'POST', path: `/sites/${site}/steering` },
            }),
          );
      }
    }
    return dropped;
  }

  /** Components waiting, for status and tests. */
  queued(site?: string): number {
    let count = 0;
    for (const [s, q] of this.sites) if (!site || s === site) count += q.pending?.size ?? 0;
    return count;
  }

  private site(ref: string): SiteQueue {
    let queue = this.sites.get(ref);
    if (!queue) this.sites.set(ref, (queue = { busy: false, pending: undefined }));
    return queue;
  }

  private pump(site: string, q: SiteQueue): void {
    const batch = q.pending;
    if (q.busy || !batch || batch.size === 0) return;
    q.busy = true;
    q.pending = undefined;
    const next = () => {
      q.busy = false;
      if (!q.pending || q.pending.size === 0) this.sites.delete(site);
      else this.pump(site, q);
    };
    this.sendBatch(site, batch).then(next, next);
  }

  /** Sends a batch: one request per carrying endpoint and validity window (grid target on its own), one at a time. */
  private sendBatch(site: string, batch: Map<ComponentName, Pending>): Promise<void> {
    if (batch.size === 1) {
      // One component (most messages): one request, and each of its waiters is answered by it.
      const entries = [...batch];
      const waiters = entries[0][1].waiters;
      for (const w of waiters) w.outstanding = 1;
      return this.sendAndSettle(site, entries, waiters);
    }
    return this.sendGroups(site, batch);
  }

  /** Several components: grouped by the request that carries them (mergeKey), each group sent in turn. */
  private async sendGroups(site: string, batch: Map<ComponentName, Pending>): Promise<void> {
    const groups = new Map<string, Array<[ComponentName, Pending]>>();
    for (const entry of batch) {
      const [name, pending] = entry;
      const key = mergeKey(name, pending);
      const group = groups.get(key);
      if (group) group.push(entry);
      else groups.set(key, [entry]);
    }
    // A waiter is answered once per request that carries any of its components (counted in one
    // pass over each group's waiters: linear in the waiters, not waiters x groups x waiters).
    const perGroup = [...groups.values()].map((entries) => [...new Set(entries.flatMap(([, p]) => p.waiters))]);
    const counts = new Map<Waiter, number>();
    for (const g of perGroup) {
      for (const w of g) counts.set(w, (counts.get(w) ?? 0) + 1);
      this.mergeSteps += g.length;
    }
    for (const [w, n] of counts) w.outstanding = n;
    let gi = 0;
    for (const entries of groups.values()) await this.sendAndSettle(site, entries, perGroup[gi++]);
  }

  /** Sends one group's request and answers its waiters (never rejects); a promise chain, no async frame per request. */
  private sendAndSettle(site: string, entries: Array<[ComponentName, Pending]>, waiters: Waiter[]): Promise<void> {
    const combined = groupSignal(waiters);
    let sent: Promise<SteeringResult>;
    try {
      sent = this.sendGroup(site, entries, combined.signal);
    } catch (err) {
      sent = Promise.reject(err as Error);
    }
    return sent.then(
      (result) => {
        this.sent++;
        for (const w of waiters) this.settle(w, result);
        combined.release();
      },
      (err: unknown) => {
        for (const w of waiters) this.settle(w, undefined, err as Error);
        combined.release();
      },
    );
  }

  /**
   * Builds the group's one typed request once (the protocol's endpoint table, steeringRequestFor)
   * and has the client's trusted path send exactly that; the result names that very request.
   */
  private sendGroup(
    site: string,
    entries: Array<[ComponentName, Pending]>,
    signal: AbortSignal | undefined,
  ): Promise<SteeringResult> {
    const parts: SteeringPart[] = entries.map(([name, p]) => ({ name, value: p.value, from: p.kind }));
    const req = steeringRequestFor(site, parts, entries[0][1], this.opts.paths);
    const gate = this.opts.gate;
    const sent = gate
      ? gate(site).then(() => this.client.sendSteering(req, { signal }))
      : this.client.sendSteering(req, { signal });
    return sent.then((response) => {
      const displaced = this.types.accepted(site, req.endpoint, req.validUntil);
      const result: SteeringResult = {
        request: sentForm(req),
        response,
        merged: mergedAny(entries),
      };
      if (displaced.length > 0) result.displaced = displaced;
      return result;
    });
  }

  private settle(w: Waiter, result?: SteeringResult, err?: Error): void {
    if (err) w.failed ??= err;
    else if (result) {
      w.last = result;
      if (result.displaced) (w.displaced ??= []).push(...result.displaced);
    }
    if (--w.outstanding > 0) return;
    if (w.failed) w.reject(w.failed);
    else {
      // Built field by field: a spread then a delete makes a slow (dictionary) object of every result.
      const last = w.last!;
      const settled: SteeringResult = {
        request: last.request,
        response: last.response,
        merged: w.merged || last.merged,
      };
      if (w.displaced) settled.displaced = w.displaced;
      w.resolve(settled);
    }
  }
}

/** The request a lone command would be sent as (dry runs), in the form msg.request shows it. */
export function requestForCommand(cmd: SteeringCommand, paths?: Partial<ApiPaths>): SentRequest {
  const req = steeringRequestOf(cmd, paths);
  if (!req)
    throw apiError({
      code: 'EMS_EMPTY',
      message: 'steering command sets no component',
      request: { method: 'POST', path: `/sites/${cmd.site}/steering` },
    });
  return sentForm(req);
}

const NO_LISTENERS = (): void => undefined;

/** Whether a later command was merged into any component of the group (a loop: no closure per request). */
function mergedAny(entries: Array<[ComponentName, Pending]>): boolean {
  for (let i = 0; i < entries.length; i++) if (entries[i][1].waiters.length > 1) return true;
  return false;
}

/**
 * The signal of a group's request: it aborts once every waiter's signal has aborted (never when
 * a waiter has none). Waiters that share one signal (one command, or every site of a fleet
 * message) have it passed on as it is: no controller, listener or combined signal per request
 * (the client makes its combined signal once per caller signal). `release` removes what was added.
 */
function groupSignal(waiters: Waiter[]): { signal: AbortSignal | undefined; release: () => void } {
  const first = waiters[0]?.signal;
  let same = true;
  for (const w of waiters) {
    if (!w.signal) return { signal: undefined, release: NO_LISTENERS };
    if (w.signal !== first) same = false;
  }
  if (same) return { signal: first, release: NO_LISTENERS };
  const live = [...new Set(waiters.map((w) => w.signal as AbortSignal))].filter((sig) => !sig.aborted);
  if (live.length === 0) return { signal: AbortSignal.abort(), release: NO_LISTENERS };
  const ctl = new AbortController();
  let remaining = live.length;
  const one = () => {
    if (--remaining === 0) ctl.abort();
  };
  const offs = live.map((sig) => onAbort(sig, one));
  return {
    signal: ctl.signal,
    release: () => {
      for (const off of offs) off();
    },
  };
}

function describe(v: unknown): string {
  if (v === null) return 'cancel';
  if (v && typeof v === 'object' && 'value' in v) return `${(v as PowerValue).value} ${(v as PowerValue).unit}`;
  if (v && typeof v === 'object' && 'setpoint' in v) return describe((v as GridTargetRequest).setpoint);
  return String(v);
}
