/**
 * One leader per site: a lease key per site in Redis, taken with SET NX PX inside a script that
 * first draws a fencing token (larger than any before, even after Redis lost its data: it is
 * at least Redis's time in ms),
 * renewed every third of the lease by a check-and-extend script (extend only if the key still
 * holds our value), released on close by a check-and-delete. Locally a lease counts only until
 * the time its last grant or renewal was SENT plus the lease, less a margin for clock drift,
 * and only while Redis is reachable: an instance that cannot prove it leads answers "unknown",
 * and unknown means not leading.
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

const parse = (v: string): { token: number; instance: string } => {
  const i = v.indexOf('|');
  return { token: Number(v.slice(0, i)), instance: v.slice(i + 1) };
};

export class Leases {
  readonly leaseMs: number;
  private readonly sites = new Map<string, Site>();
  private readonly listeners = new Set<(site: string, a: LeaderAnswer) => void>();
  private closed = false;

  constructor(
    private readonly conn: GroupConnection,
    private readonly o: LeaseOptions,
  ) {
    this.leaseMs = o.leaseMs;
    // Losing Redis: every site's answer turns to unknown at once (and back when a renewal succeeds).
    conn.onState(() => {
      for (const [site, s] of this.sites) this.notify(site, s);
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
    const s = this.sites.get(site);
    if (!s) return;
    this.sites.delete(site);
    if (s.timer !== undefined) this.o.clock.clearTimeout(s.timer);
    if (s.held) await this.conn.evalScript(RELEASE, [this.key(site)], [s.held.value]).catch(() => undefined);
  }

  /** Who leads `site`, as far as this instance can prove now. */
  leader(site: string): LeaderAnswer {
    if (!this.conn.reachable) return { kind: 'unknown', reason: 'unreachable' };
    const s = this.sites.get(site);
    const now = this.o.clock.now();
    if (s?.held && now < s.held.until) return { kind: 'me', token: s.held.token, value: s.held.value };
    if (s?.other && now < s.other.until) return { kind: 'other', instance: s.other.instance };
    return { kind: 'unknown', reason: 'pending' };
  }

  /**
   * Who leads `site`, watching it first: the answer at hand when there is one (no round trip),
   * else that of the attempt under way or of one new attempt (at most one round trip).
   */
  async ensure(site: string): Promise<LeaderAnswer> {
    this.watch(site);
    let a = this.leader(site);
    if (a.kind === 'unknown' && a.reason === 'unreachable' && this.conn.reachability === 'connecting') {
      // A group that has not connected yet (just deployed): the message waits for it, bounded,
      // instead of being refused as if Redis were gone; after the wait the answer is what it is.
      await this.conn.ready(FIRST_CONNECT_WAIT_MS).catch(() => undefined);
      a = this.leader(site);
    }
    if (a.kind !== 'unknown' || a.reason === 'unreachable') return a;
    const s = this.sites.get(site);
    if (!s) return a;
    return s.inflight ?? this.tick(site);
  }

  /** Calls `fn(site, answer)` when a site's answer changes kind or holder. */
  onChange(fn: (site: string, a: LeaderAnswer) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** One attempt now: take, renew or learn the holder of `site`. */
  tick(site: string): Promise<LeaderAnswer> {
    const s = this.sites.get(site);
    if (!s || this.closed) return Promise.resolve(this.leader(site));
    const p = this.attempt(site, s).finally(() => {
      if (s.inflight === p) s.inflight = undefined;
    });
    s.inflight = p;
    return p;
  }

  private async attempt(site: string, s: Site): Promise<LeaderAnswer> {
    if (s.timer !== undefined) this.o.clock.clearTimeout(s.timer);
    s.timer = undefined;
    const sent = this.o.clock.now();
    // Counted from before the request went out, less 1 % and 50 ms for clock drift (as Redlock does).
    const until = sent + this.leaseMs - Math.ceil(this.leaseMs * 0.01) - 50;
    let failed = false;
    try {
      if (s.held) {
        const ok = await this.conn.evalScript<number>(RENEW, [this.key(site)], [s.held.value, this.leaseMs]);
        if (ok === 1) s.held.until = until;
        else s.held = undefined;
      }
      if (!s.held) {
        const [mine, value, pttl] = await this.conn.evalScript<[number, string, number]>(
          ACQUIRE,
          [this.key(site), this.fenceKey(site)],
          [this.o.instanceId, this.leaseMs],
        );
        const p = parse(String(value));
        if (mine === 1) {
          s.held = { value: String(value), token: p.token, until };
          s.other = undefined;
        } else {
          s.other = { instance: p.instance, until: sent + Math.max(0, Number(pttl)) };
        }
      }
    } catch {
      // Redis away or slow: what we held runs out by its own time; leader() says unknown meanwhile
      failed = true;
    }
    // unwatched (or closed) while the answer was on its way: nothing more to do for it
    if (this.sites.get(site) !== s || this.closed) return this.leader(site);
    // A holder renews every third of the lease; the others try again just after the holder's
    // lease would run out, so a dead leader is replaced right after its lease expires.
    const third = Math.floor(this.leaseMs / 3);
    const retry = failed
      ? Math.min(1000, third)
      : s.held
        ? third
        : Math.min(third, Math.max(20, s.other!.until - this.o.clock.now() + 20));
    s.timer = this.o.clock.setTimeout(() => void this.tick(site), retry);
    this.notify(site, s);
    return this.leader(site);
  }

  /** Releases every lease held and stops. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.sites.keys()].map((s) => this.unwatch(s)));
  }

  private key(site: string): string {
    return `${this.o.prefix}lease:${site}`;
  }

  private fenceKey(site: string): string {
    return `${this.o.prefix}fence:${site}`;
  }

  private notify(site: string, s: Site): void {
    const a = this.leader(site);
    const sig = a.kind === 'me' ? `me:${a.token}` : a.kind === 'other' ? `other:${a.instance}` : `unknown:${a.reason}`;
    if (sig === s.last) return;
    s.last = sig;
    for (const l of [...this.listeners]) {
      try {
        l(site, a);
      } catch {
        // a listener's failure stays with it
      }
    }
  }
}
