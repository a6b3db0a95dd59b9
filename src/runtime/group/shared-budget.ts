/**
 * The account's request budget across the group: a counter per calendar minute and per UTC day
 * in Redis (Redis's clock), from which each instance reserves blocks of requests. A read spends
 * from the local block without asking Redis; a new block is reserved when one runs low (one
 * script, atomic: it never grants beyond a cap, so the group as a whole cannot over-spend).
 * What a block leaves unused goes back to the day's counter when its minute ends, and to both
 * counters on close. While Redis is unreachable each instance spends at most its share of each
 * cap: the cap divided by the live members it last knew of.
 */
import type { GroupClock, GroupConnection } from './connection';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** ARGV: prefix, wanted, cap per minute, cap per day (0 = none). Returns {granted, minute, ms left in it, day}. */
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local m = math.floor(now / 60000)
local d = math.floor(now / 86400000)
local mk = ARGV[1] .. 'm:' .. m
local dk = ARGV[1] .. 'd:' .. d
local g = tonumber(ARGV[2])
if tonumber(ARGV[3]) > 0 then g = math.min(g, tonumber(ARGV[3]) - tonumber(redis.call('GET', mk) or '0')) end
if tonumber(ARGV[4]) > 0 then g = math.min(g, tonumber(ARGV[4]) - tonumber(redis.call('GET', dk) or '0')) end
if g < 0 then g = 0 end
if g > 0 then
  redis.call('INCRBY', mk, g)
  redis.call('PEXPIRE', mk, 120000)
  redis.call('INCRBY', dk, g)
  redis.call('PEXPIRE', dk, 172800000)
end
return {g, m, 60000 - (now % 60000), d}`;

/** ARGV: prefix, n, minute ('' = not to the minute), day. Gives back unused requests (never below 0). */
const RETURN = `
local n = tonumber(ARGV[2])
local function back(k)
  local v = tonumber(redis.call('GET', k) or '0')
  if v > 0 then redis.call('DECRBY', k, math.min(v, n)) end
end
if ARGV[3] ~= '' then back(ARGV[1] .. 'm:' .. ARGV[3]) end
back(ARGV[1] .. 'd:' .. ARGV[4])
return 1`;

export interface SharedBudgetOptions {
  /** The group's key prefix. */
  prefix: string;
  /** Caps across the group, 0 = none. */
  perMinute: number;
  perDay: number;
  /** Requests per reservation (default: a quarter of the smaller cap's share per member, 1 to 100). */
  blockSize?: number;
  /** The live members last known (for the block size and the share when Redis is away). */
  members: () => number;
  clock: GroupClock;
}

interface Block {
  left: number;
  minute: number;
  day: number;
  /** Local time at which its minute ends. */
  until: number;
}

export interface SharedBudgetStats {
  /** Requests spent here. */
  spent: number;
  /** Requests refused here. */
  refused: number;
  /** Reservations that reached Redis. */
  reservations: number;
  /** Requests spent on the fallback share (Redis away). */
  fallback: number;
}

export class SharedBudget {
  private block?: Block;
  private refill?: Promise<void>;
  private closed = false;
  /** Local time until which a cap is known to be spent (no reservation is tried before). */
  private dryUntil = -Infinity;
  /** The last reservation failed (no answer from Redis). */
  private reserveFailed = false;
  /** Local counts per local minute and day, for the fallback share. */
  private local = { minute: -1, inMinute: 0, day: -1, inDay: 0 };
  /** How long a request waits for the first connection to Redis, ms. */
  connectWaitMs = 2500;
  readonly stats: SharedBudgetStats = { spent: 0, refused: 0, reservations: 0, fallback: 0 };

  constructor(
    private readonly connection: GroupConnection,
    private readonly options: SharedBudgetOptions,
  ) {}

  /** Whether there is a cap at all (without one nothing is counted in Redis). */
  get capped(): boolean {
    return this.options.perMinute > 0 || this.options.perDay > 0;
  }

  /** Spends one request if the block (or, with Redis away, the share) allows; never waits for Redis. */
  take(): boolean {
    if (!this.capped) return this.spend();
    this.expire();
    const block = this.block;
    if (block && block.left > 0) {
      block.left--;
      if (block.left <= Math.floor(this.size() / 4)) void this.reserve();
      return this.spend();
    }
    if (this.connection.reachable) {
      void this.reserve();
      this.stats.refused++;
      return false;
    }
    if (this.withinShare()) {
      this.stats.fallback++;
      return this.spend();
    }
    this.stats.refused++;
    return false;
  }

  /**
   * Like take, but when the block is empty and Redis is reachable it waits for reservations
   * first: as many as it takes to get one request while the group has some (many reads waiting
   * at once share each block), none once a cap is known spent, and stops at a reservation that
   * failed (Redis slow or away: the share decides).
   */
  async acquire(): Promise<boolean> {
    if (!this.capped) return this.spend();
    // Not connected yet (just deployed): the share of a group not seen yet is unknown, so it
    // waits for the first connection (bounded by its deadline) rather than spend a share.
    if (this.connection.reachability === 'connecting')
      await this.connection.ready(this.connectWaitMs).catch(() => undefined);
    for (let i = 0; i < 100; i++) {
      this.expire();
      if (
        (this.block?.left ?? 0) > 0 ||
        !this.connection.reachable ||
        this.closed ||
        this.options.clock.now() < this.dryUntil
      )
        break;
      await this.reserve();
      if (this.reserveFailed) break;
    }
    return this.take();
  }

  /** Requests left in the local block. */
  get held(): number {
    this.expire();
    return this.block?.left ?? 0;
  }

  /** Gives back what the block holds and stops. */
  async close(): Promise<void> {
    this.closed = true;
    await this.refill?.catch(() => undefined);
    const block = this.block;
    this.block = undefined;
    if (block && block.left > 0)
      await this.giveBack(block, this.options.clock.now() < block.until).catch(() => undefined);
  }

  /** Reserves a block now unless one is being reserved (one at a time). */
  reserve(): Promise<void> {
    if (this.closed || !this.capped || this.options.clock.now() < this.dryUntil) return Promise.resolve();
    this.refill ??= this.doReserve().finally(() => {
      this.refill = undefined;
    });
    return this.refill;
  }

  private size(): number {
    if (this.options.blockSize) return Math.max(1, Math.floor(this.options.blockSize));
    const memberCount = Math.max(1, this.options.members());
    const caps = [this.options.perMinute, this.options.perDay].filter((c) => c > 0);
    return Math.max(1, Math.min(100, Math.floor(Math.min(...caps) / (4 * memberCount))));
  }

  private async doReserve(): Promise<void> {
    const sentAt = this.options.clock.now();
    try {
      this.stats.reservations++;
      const [granted, minute, msLeft, day] = (
        await this.connection.evalScript<number[]>(
          RESERVE,
          [],
          [`${this.options.prefix}budget:`, this.size(), this.options.perMinute, this.options.perDay],
        )
      ).map(Number);
      const until = sentAt + msLeft;
      // Nothing granted: a cap is spent; asked again when this minute ends, not on every read.
      if (granted === 0) this.dryUntil = until;
      const block = this.block;
      if (this.closed) {
        if (granted > 0) await this.giveBack({ left: granted, minute, day, until }, true);
        return;
      }
      this.reserveFailed = false;
      if (block && block.minute === minute) block.left += granted;
      else {
        if (block && block.left > 0) await this.giveBack(block, false).catch(() => undefined);
        this.block = { left: granted, minute, day, until };
      }
    } catch {
      // Redis away: take() spends the fallback share until it is back
      this.reserveFailed = true;
    }
  }

  /** A block whose minute has ended: its unused requests go back to the day. */
  private expire(): void {
    const block = this.block;
    if (!block || this.options.clock.now() < block.until) return;
    this.block = undefined;
    if (block.left > 0) void this.giveBack(block, false).catch(() => undefined);
  }

  private giveBack(block: Block, minuteToo: boolean): Promise<unknown> {
    return this.connection.evalScript(
      RETURN,
      [],
      [`${this.options.prefix}budget:`, block.left, minuteToo ? block.minute : '', block.day],
    );
  }

  private withinShare(): boolean {
    const now = this.options.clock.now();
    const memberCount = Math.max(1, this.options.members());
    const minute = Math.floor(now / MINUTE);
    const day = Math.floor(now / DAY);
    if (this.local.minute !== minute) this.local = { ...this.local, minute, inMinute: 0 };
    if (this.local.day !== day) this.local = { ...this.local, day, inDay: 0 };
    if (this.options.perMinute > 0 && this.local.inMinute >= Math.floor(this.options.perMinute / memberCount))
      return false;
    if (this.options.perDay > 0 && this.local.inDay >= Math.floor(this.options.perDay / memberCount)) return false;
    return true;
  }

  private spend(): true {
    const now = this.options.clock.now();
    const minute = Math.floor(now / MINUTE);
    const day = Math.floor(now / DAY);
    if (this.local.minute !== minute) this.local = { ...this.local, minute, inMinute: 0 };
    if (this.local.day !== day) this.local = { ...this.local, day, inDay: 0 };
    this.local.inMinute++;
    this.local.inDay++;
    this.stats.spent++;
    return true;
  }
}
