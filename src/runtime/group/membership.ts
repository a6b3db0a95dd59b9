/**
 * Who is in the group: each instance writes a heartbeat into one sorted set of the group, its
 * score the time (Redis's own clock, so the instances' clocks do not matter) until which it
 * counts as alive; the same script drops members whose time is past and returns the live ones.
 * The live-members view is what the last heartbeat answered; it splits keys (devices) over the
 * members by rendezvous hashing.
 */
import type { GroupClock, GroupConnection } from './connection';
import { ownerOf, split } from './rendezvous';

/** KEYS[1] the set; ARGV: instance, ttl ms. Returns the live members. */
const HEARTBEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 4)
return redis.call('ZRANGE', KEYS[1], 0, -1)`;

export interface MembershipOptions {
  instanceId: string;
  /** The set's key. */
  key: string;
  /** How long a heartbeat keeps a member alive, ms; one is sent every ttl/3. */
  ttlMs: number;
  clock: GroupClock;
}

export class Membership {
  private view: string[] = [];
  private timer: unknown;
  private closed = false;
  private readonly listeners = new Set<(members: readonly string[]) => void>();
  readonly ttlMs: number;
  /** Time (clock) of the last answered heartbeat. */
  lastBeat?: number;

  constructor(
    private readonly connection: GroupConnection,
    private readonly options: MembershipOptions,
  ) {
    this.ttlMs = options.ttlMs;
  }

  /** One heartbeat now (then one every ttl/3, until close); resolves with the live members (the last known view when Redis is away). */
  async beat(): Promise<readonly string[]> {
    if (this.closed) return this.view;
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
    try {
      const members = await this.connection.evalScript<string[]>(
        HEARTBEAT,
        [this.options.key],
        [this.options.instanceId, this.ttlMs],
      );
      this.lastBeat = this.options.clock.now();
      this.update([...members].sort());
    } catch {
      // Redis away: the last known view stays; the next beat tries again
    }
    if (!this.closed)
      this.timer = this.options.clock.setTimeout(() => void this.beat(), Math.max(1, Math.floor(this.ttlMs / 3)));
    return this.view;
  }

  /** The live members as last seen (sorted); this instance is among them once a heartbeat was answered. */
  get members(): readonly string[] {
    return this.view;
  }

  /** Calls `fn` when the live members change; returns the unsubscribe. */
  onChange(fn: (members: readonly string[]) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The keys of `keys` this instance owns under the current view (all of them before any heartbeat was answered). */
  mine(keys: readonly string[]): string[] {
    if (this.view.length === 0) return [...keys];
    return keys.filter((k) => ownerOf(k, this.view) === this.options.instanceId);
  }

  /** The whole split under the current view. */
  split(keys: readonly string[]): Map<string, string[]> {
    return split(keys, this.view);
  }

  /** Stops the heartbeats and leaves the set (best effort). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.connection.command(['ZREM', this.options.key, this.options.instanceId]).catch(() => undefined);
  }

  private update(members: string[]): void {
    if (members.length === this.view.length && members.every((m, i) => m === this.view[i])) return;
    this.view = members;
    for (const listener of [...this.listeners]) {
      try {
        listener(members);
      } catch {
        // a listener's failure stays with it
      }
    }
  }
}
