/**
 * One leader per site: a lease key per site in Redis, taken with SET NX PX inside a script that
 * first draws a fencing token (larger than any before, even after Redis lost its data: it is at
 * least Redis's time in ms), renewed every third of the lease by a check-and-extend script (extend
 * only if the key still holds our value), released on close by a check-and-delete. Locally a lease
 * counts only until the time its last grant or renewal was SENT plus the lease, less a margin for
 * clock drift, and only while Redis is reachable: an instance that cannot prove it leads answers
 * "unknown", and unknown means not leading.
 */
import type { GroupClock, GroupConnection } from './connection';

/** How long a steering message waits for a group that is still making its first connection (its connect deadline is 2 s). */
const FIRST_CONNECT_WAIT_MS = 2500;

/** KEYS: lease, fence counter; ARGV: instance, lease ms. Returns {1, value} (ours) or {0, value of the holder, its ms left}. */
const ACQUIRE = `
local cur = redis.call('GET', KEYS[1])
if cur then
  if string.sub(cur, -(string.len(ARGV[1]) + 1)) == ('|' .. ARGV[1]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, cur}
  end
  return {0, cur, redis.call('PTTL', KEYS[1])}
end
local t = redis.call('TIME')
local f = math.max(redis.call('INCR', KEYS[2]), tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
redis.call('SET', KEYS[2], f)
local v = f .. '|' .. ARGV[1]
if redis.call('SET', KEYS[1], v, 'NX', 'PX', ARGV[2]) then return {1, v} end
return {0, redis.call('GET', KEYS[1]) or '', redis.call('PTTL', KEYS[1])}`;

/** KEYS: lease; ARGV: our value, lease ms. 1 extended, 0 not ours any more. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export type LeaderAnswer =
  | { kind: 'me'; token: number; value: string }
  | { kind: 'other'; instance: string }
  | { kind: 'unknown'; reason: 'unreachable' | 'pending' };

export interface LeaseOptions {
  instanceId: string;
  /** The group's key prefix. */
  prefix: string;
  /** Lease time, ms; renewed every leaseMs/3. */
  leaseMs: number;
  clock: GroupClock;
}

interface Held {
  value: string;
  token: number;
  /** Local time until which the lease counts as ours. */
  until: number;
}

interface Site {
  held?: Held;
  other?: { instance: string; until: number };
  timer?: unknown;
  /** The attempt under way, if any (so that asking does not send a second one). */
  inflight?: Promise<LeaderAnswer>;
  last: string;
}

const parse = (value: string): { token: number; instance: string } => {
  const bar = value.indexOf('|');
  return { token: Number(value.slice(0, bar)), instance: value.slice(bar + 1) };
};

export class Leases {
  readonly leaseMs: number;
  private readonly sites = new Map<string, Site>();
  private readonly listeners = new Set<(site: string, answer: LeaderAnswer) => void>();
  private closed = false;

  constructor(
    private readonly connection: GroupConnection,
    private readonly options: LeaseOptions,
  ) {
    this.leaseMs = options.leaseMs;
    // Losing Redis: every site's answer turns to unknown at once (and back when a renewal succeeds).
    connection.onState(() => {
      for (const [site, state] of this.sites) this.notify(site, state);
    });
  }

  /** Keeps trying to lead `site` (at once, then every leaseMs/3) until unwatch or close. */
  watch(site: string): void {
    if (this.closed || this.sites.has(site)) return;
    this.sites.set(site, { last: '' });
    void this.tick(site);
  }

  /** Stops watching `site` and releases its lease if held. */
  async unwatch(site: string): Promise<void> {
    const state = this.sites.get(site);
    if (!state) return;
    this.sites.delete(site);
    if (state.timer !== undefined) this.options.clock.clearTimeout(state.timer);
    if (state.held)
      await this.connection.evalScript(RELEASE, [this.key(site)], [state.held.value]).catch(() => undefined);
  }

  /** Who leads `site`, as far as this instance can prove now. */
  leader(site: string): LeaderAnswer {
    if (!this.connection.reachable) return { kind: 'unknown', reason: 'unreachable' };
    const state = this.sites.get(site);
    const now = this.options.clock.now();
    if (state?.held && now < state.held.until) return { kind: 'me', token: state.held.token, value: state.held.value };
    if (state?.other && now < state.other.until) return { kind: 'other', instance: state.other.instance };
    return { kind: 'unknown', reason: 'pending' };
  }

  /**
   * Who leads `site`, watching it first: the answer at hand when there is one (no round trip),
   * else that of the attempt under way or of one new attempt (at most one round trip).
   */
  async ensure(site: string): Promise<LeaderAnswer> {
    this.watch(site);
    let answer = this.leader(site);
    if (answer.kind === 'unknown' && answer.reason === 'unreachable' && this.connection.reachability === 'connecting') {
      // A group that has not connected yet (just deployed): the message waits for it, bounded,
      // instead of being refused as if Redis were gone; after the wait the answer is what it is.
      await this.connection.ready(FIRST_CONNECT_WAIT_MS).catch(() => undefined);
      answer = this.leader(site);
    }
    if (answer.kind !== 'unknown' || answer.reason === 'unreachable') return answer;
    const state = this.sites.get(site);
    if (!state) return answer;
    return state.inflight ?? this.tick(site);
  }

  /** Calls `fn(site, answer)` when a site's answer changes kind or holder. */
  onChange(fn: (site: string, answer: LeaderAnswer) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** One attempt now: take, renew or learn the holder of `site`. */
  tick(site: string): Promise<LeaderAnswer> {
    const state = this.sites.get(site);
    if (!state || this.closed) return Promise.resolve(this.leader(site));
    const pending = this.attempt(site, state).finally(() => {
      if (state.inflight === pending) state.inflight = undefined;
    });
    state.inflight = pending;
    return pending;
  }

  private async attempt(site: string, state: Site): Promise<LeaderAnswer> {
    if (state.timer !== undefined) this.options.clock.clearTimeout(state.timer);
    state.timer = undefined;
    const sent = this.options.clock.now();
    // Counted from before the request went out, less 1 % and 50 ms for clock drift (as Redlock does).
    const until = sent + this.leaseMs - Math.ceil(this.leaseMs * 0.01) - 50;
    let failed = false;
    try {
      if (state.held) {
        const ok = await this.connection.evalScript<number>(RENEW, [this.key(site)], [state.held.value, this.leaseMs]);
        if (ok === 1) state.held.until = until;
        else state.held = undefined;
      }
      if (!state.held) {
        const [mine, value, pttl] = await this.connection.evalScript<[number, string, number]>(
          ACQUIRE,
          [this.key(site), this.fenceKey(site)],
          [this.options.instanceId, this.leaseMs],
        );
        const holder = parse(String(value));
        if (mine === 1) {
          state.held = { value: String(value), token: holder.token, until };
          state.other = undefined;
        } else {
          state.other = { instance: holder.instance, until: sent + Math.max(0, Number(pttl)) };
        }
      }
    } catch {
      // Redis away or slow: what we held runs out by its own time; leader() says unknown meanwhile
      failed = true;
    }
    // unwatched (or closed) while the answer was on its way: nothing more to do for it
    if (this.sites.get(site) !== state || this.closed) return this.leader(site);
    // A holder renews every third of the lease; the others try again just after the holder's
    // lease would run out, so a dead leader is replaced right after its lease expires.
    const third = Math.floor(this.leaseMs / 3);
    const retry = failed
      ? Math.min(1000, third)
      : state.held
        ? third
        : Math.min(third, Math.max(20, state.other!.until - this.options.clock.now() + 20));
    state.timer = this.options.clock.setTimeout(() => void this.tick(site), retry);
    this.notify(site, state);
    return this.leader(site);
  }

  /** Releases every lease held and stops. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.sites.keys()].map((site) => this.unwatch(site)));
  }

  private key(site: string): string {
    return `${this.options.prefix}lease:${site}`;
  }

  private fenceKey(site: string): string {
    return `${this.options.prefix}fence:${site}`;
  }

  private notify(site: string, state: Site): void {
    const answer = this.leader(site);
    const signature =
      answer.kind === 'me'
        ? `me:${answer.token}`
        : answer.kind === 'other'
          ? `other:${answer.instance}`
          : `unknown:${answer.reason}`;
    if (signature === state.last) return;
    state.last = signature;
    for (const listener of [...this.listeners]) {
      try {
        listener(site, answer);
      } catch {
        // a listener's failure stays with it
      }
    }
  }
}
