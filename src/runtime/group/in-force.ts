/**
 * What is in force per site, kept in Redis so that a new leader knows it: the schedules and
 * renewing steering signals of each site (a hash per site, one field per entry, each with the
 * time it ends), and a claim per site and slot that makes each slot's request go out once in
 * the whole group: the claim is taken (SET NX) in the same script that checks the claimer's
 * lease value, so an instance whose lease has run out cannot claim, and a slot claimed by the
 * old leader is not claimed again by the new one.
 */
import type { GroupClock, GroupConnection } from './connection';

/**
 * KEYS: lease, claim, in-force hash; ARGV: lease value, claim ttl ms, then optionally field, json,
 * keep ms (the entry recorded with the claim). 1 claimed (or claimed before under this very
 * lease value: a retry of the same holder), 0 claimed before by another, -1 not the leader.
 */
const CLAIM = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local c = redis.call('GET', KEYS[2])
if c and c ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
if ARGV[3] then
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
  if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[5]) then redis.call('PEXPIRE', KEYS[3], ARGV[5]) end
end
return 1`;

/** KEYS: lease, hash; ARGV: lease value, field, json, keep ms. Records only for the lease holder: 1, else -1. */
const PUT_LEADING = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
return 1`;

/** KEYS: hash; ARGV: field, json, ends (ms since epoch), keep ms. */
const PUT = `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return 1`;

export interface InForceEntry<T = unknown> {
  /** e.g. 'schedule' or 'renewal'. */
  kind: string;
  id: string;
  /** Time (ms since epoch) after which the entry is over. */
  ends: number;
  data: T;
}

export type ClaimResult = 'claimed' | 'taken' | 'not-leader';

export interface InForceOptions {
  prefix: string;
  clock: GroupClock;
}

export class InForceStore {
  constructor(
    private readonly connection: GroupConnection,
    private readonly options: InForceOptions,
  ) {}

  /** Records (or replaces) an entry of `site`. */
  async put<T>(site: string, entry: InForceEntry<T>): Promise<void> {
    await this.connection.evalScript(
      PUT,
      [this.hash(site)],
      [`${entry.kind}:${entry.id}`, JSON.stringify(entry), entry.ends, this.keep(entry)],
    );
  }

  /** Records an entry only while `leaseValue` holds the site's lease (one round trip); false when it does not. */
  async putLeading<T>(site: string, leaseValue: string, entry: InForceEntry<T>): Promise<boolean> {
    const answer = await this.connection.evalScript<number>(
      PUT_LEADING,
      [`${this.options.prefix}lease:${site}`, this.hash(site)],
      [leaseValue, `${entry.kind}:${entry.id}`, JSON.stringify(entry), this.keep(entry)],
    );
    return answer === 1;
  }

  private keep(entry: InForceEntry): number {
    return Math.max(60_000, entry.ends - this.options.clock.now() + 60_000);
  }

  /** The entries of `site` not over yet (entries over are dropped from Redis on the way). */
  async list(site: string): Promise<InForceEntry[]> {
    // RESP3 (the connection's protocol): a map, which the client hands out as an object
    const pairs = Object.entries(await this.connection.command<Record<string, string>>(['HGETALL', this.hash(site)]));
    const now = this.options.clock.now();
    const live: InForceEntry[] = [];
    const over: string[] = [];
    for (const [field, json] of pairs) {
      let entry: InForceEntry | undefined;
      try {
        entry = JSON.parse(json) as InForceEntry;
      } catch {
        entry = undefined;
      }
      if (entry && typeof entry.ends === 'number' && entry.ends > now) live.push(entry);
      else over.push(field);
    }
    if (over.length) await this.connection.command(['HDEL', this.hash(site), ...over]).catch(() => undefined);
    return live.sort((a, b) => a.ends - b.ends || a.id.localeCompare(b.id));
  }

  /** Removes an entry (the schedule was stopped, the renewal ended). */
  async remove(site: string, kind: string, id: string): Promise<void> {
    await this.connection.command(['HDEL', this.hash(site), `${kind}:${id}`]);
  }

  /**
   * Claims `slot` of `site` for the holder of the lease value `leaseValue` (Leases.leader's
   * answer): one round trip, and the one claim in the group. `ttlMs` keeps the claim at least as
   * long as the slot can still be sent. The same lease value may claim again (a retry of a send
   * that failed); another, even a later lease of the same instance, may not. `entry`, when
   * given, is recorded in the same script (what is in force once this slot is sent).
   */
  async claim(
    site: string,
    slot: string,
    leaseValue: string,
    ttlMs: number,
    entry?: InForceEntry,
  ): Promise<ClaimResult> {
    const put = entry ? [`${entry.kind}:${entry.id}`, JSON.stringify(entry), this.keep(entry)] : [];
    const answer = await this.connection.evalScript<number>(
      CLAIM,
      [`${this.options.prefix}lease:${site}`, `${this.options.prefix}slot:${site}:${slot}`, this.hash(site)],
      [leaseValue, Math.max(1000, Math.ceil(ttlMs)), ...put],
    );
    return answer === 1 ? 'claimed' : answer === 0 ? 'taken' : 'not-leader';
  }

  /** The lease value that claimed `slot` of `site`, if any. */
  async claimedBy(site: string, slot: string): Promise<string | undefined> {
    return (
      (await this.connection.command<string | null>(['GET', `${this.options.prefix}slot:${site}:${slot}`])) ?? undefined
    );
  }

  private hash(site: string): string {
    return `${this.options.prefix}inforce:${site}`;
  }
}
