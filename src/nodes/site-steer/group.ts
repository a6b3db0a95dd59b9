/**
 * The site-steer node in a group (a config node with a redisUrl): a message's request goes out
 * only from the instance that leads its site (no round trip once the lease is at hand, one for
 * the first message to a site); a renewal is claimed in the group before it goes out (one round
 * trip, which also records it as what is in force), so each link of a renewal chain is sent once
 * in the group; a message sent with renew on is recorded (one round trip) so that the instance
 * that leads the site next takes the chain over where it was. Without a group nothing here acts.
 */
import { isNotSteering, type LeaderAnswer, type Runtime, type SteerGate, type SteeringCommand } from '../../runtime';
import type { NodeMessage, Renewal, Status } from '../shared';

const KIND = 'renewal';

interface Stored {
  cmd: SteeringCommand;
  sentAt: number;
}

export interface SteerGroupDeps {
  id: string;
  renewal: Renewal;
  renew: boolean;
  status: Status;
}

export class SteerGroup {
  private gate?: SteerGate;
  private off?: () => void;
  /** Per site, counted up by every message: a take-over read before a message does not undo it. */
  private readonly touched = new Map<string, number>();
  /** The sites whose leader the status follows (the node's own, those of its messages). */
  private readonly sites = new Set<string>();

  constructor(private readonly o: SteerGroupDeps) {}

  /** Binds to the runtime's gate (once) and watches `site`; undefined without a group. */
  attach(rt: Runtime, site?: string): SteerGate | undefined {
    if (!rt.gate) return undefined;
    if (!this.gate) {
      this.gate = rt.gate;
      this.off = rt.gate.onChange((s, a) => this.changed(s, a));
    }
    if (site !== undefined && !this.sites.has(site)) {
      if (this.sites.size >= 10_000) this.sites.clear();
      this.sites.add(site);
      this.gate.watch(site);
    }
    return this.gate;
  }

  /** The node's own site (a constant) is watched from deploy: a standby shows who leads it, a new leader takes its renewals over. */
  watchOwn(rt: Promise<Runtime>, config: { site?: unknown; siteType?: unknown }, signal: AbortSignal): void {
    const siteType = config.siteType;
    if (!config.site || (siteType !== undefined && siteType !== '' && siteType !== 'str')) return;
    rt.then(
      (r) => {
        if (!signal.aborted) this.attach(r, String(config.site));
      },
      () => undefined,
    );
  }

  /**
   * Before a message's request to `site`: undefined when this instance leads it (or there is no
   * group); the message's answer when another instance leads it (output 1, msg.standby: the
   * leader sends it; the status says so). Redis unreachable: rejects (a Catch-able error, since
   * no instance steers the site then).
   */
  async standby(
    rt: Runtime,
    site: string,
    copy: (fields: NodeMessage) => NodeMessage,
  ): Promise<NodeMessage | undefined> {
    try {
      await this.lead(rt, site);
      return undefined;
    } catch (e) {
      if (!isNotSteering(e) || e.reason !== 'standby') throw e;
      this.o.status.standby(e.leader ?? '?', site);
      return copy({ payload: null, site, standby: { leader: e.leader } });
    }
  }

  /** Before a message's request to `site`: resolves when this instance leads it, else rejects (NotSteeringError). */
  async lead(rt: Runtime, site: string): Promise<void> {
    const group = this.attach(rt, site);
    if (!group) return;
    this.touch(site);
    await group.lead(site);
  }

  /** A message's request went out with renew on: renewed from here, and in a group recorded as the chain the group renews. */
  renewing(cmd: SteeringCommand): void {
    this.o.renewal.schedule(cmd);
    if (!this.gate || !this.o.renew || cmd.validUntil === undefined) return;
    void this.gate.record(cmd.site, {
      kind: KIND,
      id: this.o.id,
      ends: cmd.validUntil,
      data: { cmd, sentAt: Date.now() } satisfies Stored,
    });
  }

  /** A stop: the group renews nothing more of this node on `site` (a node without renew records nothing). */
  stopped(site: string): void {
    this.touch(site);
    if (this.o.renew) this.gate?.forget(site, KIND, this.o.id);
  }

  /** Claims the renewal `next` of `prev` in the group before it goes out (rejects when another instance sends it, or none may). */
  async renewal(runtime: Promise<Runtime>, next: SteeringCommand, prev: SteeringCommand): Promise<void> {
    const group = this.attach(await runtime, next.site);
    if (!group) return;
    const ttl = Math.max(0, (prev.validUntil ?? 0) - Date.now()) + 60_000;
    const entry = {
      kind: KIND,
      id: this.o.id,
      ends: next.validUntil ?? Date.now(),
      data: { cmd: next, sentAt: Date.now() } satisfies Stored,
    };
    await group.claim(next.site, `renew:${this.o.id}:${prev.validUntil}`, ttl, entry);
  }

  close(): void {
    this.off?.();
  }

  private touch(site: string): void {
    this.touched.set(site, (this.touched.get(site) ?? 0) + 1);
  }

  private changed(site: string, a: LeaderAnswer): void {
    if (!this.sites.has(site)) return;
    if (a.kind === 'other') this.o.status.standby(a.instance, site);
    else if (a.kind === 'unknown' && a.reason === 'unreachable') this.o.status.redisUnreachable();
    else if (a.kind === 'me') {
      this.o.status.leading(site);
      if (this.o.renew) void this.takeOver(site);
    }
  }

  /** This instance leads `site` now: the renewal chain in force there (recorded by the last leader) goes on from here. */
  private async takeOver(site: string): Promise<void> {
    const mark = this.touched.get(site);
    const entries = await this.gate!.entries(site, KIND, this.o.id);
    if (this.touched.get(site) !== mark || entries.length === 0) return;
    const { cmd, sentAt } = entries[entries.length - 1].data as Stored;
    if (!cmd || typeof cmd.validUntil !== 'number' || cmd.validUntil <= Date.now()) return;
    this.o.renewal.schedule(cmd, sentAt);
  }
}
