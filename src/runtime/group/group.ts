/**
 * A group: the instances that run the same flow (the same config node id) against one Redis.
 * One connection, the membership, the per-site leases, the shared budget and the store of what
 * is in force, all under one key prefix of the group. Built only when a config node has a
 * redisUrl; without it nothing here runs.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import {
  GroupConnection,
  systemGroupClock,
  type ConnectionOptions,
  type GroupClock,
  type Reachability,
} from './connection';
import { InForceStore } from './in-force';
import { Leases } from './lease';
import { Membership } from './membership';
import { SharedBudget } from './shared-budget';

export interface GroupOptions extends ConnectionOptions {
  /** What the instances of one group share: the config node's id. */
  groupId: string;
  /** This instance (default: host name, PID and a random part). */
  instanceId?: string;
  /** Lease time per site, ms (default 15000). */
  leaseMs?: number;
  /** Heartbeat TTL, ms (default: the lease time). */
  heartbeatMs?: number;
  /** The account's caps across the group (0 = none). */
  perMinute?: number;
  perDay?: number;
  blockSize?: number;
  clock?: GroupClock;
}

function defaultInstanceId(): string {
  return `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

export class Group {
  readonly instanceId: string;
  readonly prefix: string;
  readonly connection: GroupConnection;
  readonly members: Membership;
  readonly leases: Leases;
  readonly budget: SharedBudget;
  readonly inForce: InForceStore;
  private closing?: Promise<void>;

  constructor(options: GroupOptions) {
    const clock = options.clock ?? systemGroupClock;
    this.instanceId = options.instanceId ?? defaultInstanceId();
    if (/[|\s]/.test(this.instanceId)) throw new Error('a group instance id has no "|" and no white space');
    this.prefix = `ems:group:${options.groupId}:`;
    this.connection = new GroupConnection(options);
    const leaseMs = options.leaseMs ?? 15_000;
    this.members = new Membership(this.connection, {
      instanceId: this.instanceId,
      key: `${this.prefix}members`,
      ttlMs: options.heartbeatMs ?? leaseMs,
      clock,
    });
    this.leases = new Leases(this.connection, { instanceId: this.instanceId, prefix: this.prefix, leaseMs, clock });
    this.budget = new SharedBudget(this.connection, {
      prefix: this.prefix,
      perMinute: options.perMinute ?? 0,
      perDay: options.perDay ?? 0,
      blockSize: options.blockSize,
      members: () => this.members.members.length,
      clock,
    });
    this.inForce = new InForceStore(this.connection, { prefix: this.prefix, clock });
    // The first heartbeat once Redis answers, and at once again after it returns.
    this.connection.onState((state) => {
      if (state === 'reachable') void this.members.beat();
    });
  }

  get reachability(): Reachability {
    return this.connection.reachability;
  }

  /** Leaves the group: the budget's unused requests back, leases released, membership left, connection closed. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.budget.close().catch(() => undefined);
      await this.leases.close().catch(() => undefined);
      await this.members.close().catch(() => undefined);
      await this.connection.close();
    })();
    return this.closing;
  }
}
