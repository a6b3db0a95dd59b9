/**
 * What steering asks of the group: may this instance send to a site now? Only the holder of the
 * site's lease may, and only while it can prove it (Leases: Redis reachable, lease not run out).
 * A message costs no round trip while the answer is at hand and one when it is not (the first
 * message for a site); a slot or a renewal costs one (its claim, with the entry of what is then
 * in force recorded in the same script). Whatever may not be sent is refused with a
 * NotSteeringError that says why: another instance leads (standby), the request was sent by the
 * group already (claimed), or Redis cannot be reached (unreachable: no instance steers).
 */
import { GroupError } from './connection';
import type { Group } from './group';
import type { InForceEntry } from './in-force';
import type { LeaderAnswer } from './lease';

export type NotSteeringReason = 'standby' | 'unreachable' | 'claimed';

export class NotSteeringError extends GroupError {
  readonly notSteering = true;
  constructor(
    readonly site: string,
    readonly reason: NotSteeringReason,
    readonly leader?: string,
  ) {
    super(
      reason === 'standby'
        ? `not sent by this instance: standby: ${leader} steers ${site}`
        : reason === 'claimed'
          ? `not sent by this instance: the group sent this request to ${site} already`
          : `not sent: Redis unreachable: not steering ${site} (an instance of the group that cannot prove it leads a site sends nothing to it; its signals run out and the site falls back)`,
    );
  }
}

export function isNotSteering(e: unknown): e is NotSteeringError {
  return e instanceof NotSteeringError;
}

export class SteerGate {
  constructor(readonly group: Group) {}

  get instanceId(): string {
    return this.group.instanceId;
  }

  /** Starts trying to lead `site` (a node's own site, at deploy). */
  watch(site: string): void {
    this.group.leases.watch(site);
  }

  /** The lease value when this instance leads `site`; else a NotSteeringError. At most one round trip. */
  async lead(site: string): Promise<string> {
    return valueOf(site, await this.group.leases.ensure(site));
  }

  /**
   * Leads `site` and claims `key` there (one round trip once the lease is at hand), recording
   * `entry` with the claim. Resolves when this instance is the one to send it.
   */
  async claim(site: string, key: string, ttlMs: number, entry?: InForceEntry): Promise<void> {
    const value = await this.lead(site);
    let outcome: string;
    try {
      outcome = await this.group.inForce.claim(site, key, value, ttlMs, entry);
    } catch {
      throw new NotSteeringError(site, 'unreachable');
    }
    if (outcome === 'claimed') return;
    if (outcome === 'taken') throw new NotSteeringError(site, 'claimed');
    // The lease was lost on the way: whatever this instance now knows of the holder.
    valueOf(site, this.group.leases.leader(site));
    throw new NotSteeringError(site, 'unreachable');
  }

  /** Records `entry` as in force on `site` while this instance leads it (one round trip); false when it was not recorded. */
  async record(site: string, entry: InForceEntry): Promise<boolean> {
    const answer = this.group.leases.leader(site);
    if (answer.kind !== 'me') return false;
    return this.group.inForce.putLeading(site, answer.value, entry).catch(() => false);
  }

  /** Records `entry` as in force on `site`, leading it or not (what every instance received; best effort). */
  async share(site: string, entry: InForceEntry): Promise<boolean> {
    return this.group.inForce.put(site, entry).then(
      () => true,
      () => false,
    );
  }

  /** The entries of `kind` and `id` in force on `site` (none when Redis cannot say). */
  async entries(site: string, kind: string, id: string): Promise<InForceEntry[]> {
    try {
      return (await this.group.inForce.list(site)).filter((e) => e.kind === kind && e.id === id);
    } catch {
      return [];
    }
  }

  /** Forgets an entry (best effort: it runs out by its own time). */
  forget(site: string, kind: string, id: string): void {
    void this.group.inForce.remove(site, kind, id).catch(() => undefined);
  }

  /** Calls `fn(site, answer)` when the leader of a watched site changes (this instance taking it, losing it, Redis lost). */
  onChange(fn: (site: string, answer: LeaderAnswer) => void): () => void {
    return this.group.leases.onChange(fn);
  }

  /** What this instance knows now of `site` (no round trip). */
  leader(site: string): LeaderAnswer {
    return this.group.leases.leader(site);
  }
}

function valueOf(site: string, answer: LeaderAnswer): string {
  if (answer.kind === 'me') return answer.value;
  if (answer.kind === 'other') throw new NotSteeringError(site, 'standby', answer.instance);
  throw new NotSteeringError(site, 'unreachable');
}
