/**
 * Several instances on one account (opt-in, a config node with a redisUrl): the connection to
 * Redis, membership and the split of keys over the live members, a leader lease per site, the
 * account's budget across the group, and what is in force per site with a claim per slot.
 */
export {
  GroupConnection,
  GroupError,
  checkRedisUrl,
  redact,
  systemGroupClock,
  type GroupClock,
  type Reachability,
  type ConnectionOptions,
} from './connection';
export { Membership, type MembershipOptions } from './membership';
export { ownerOf, split } from './rendezvous';
export { Leases, type LeaderAnswer, type LeaseOptions } from './lease';
export { SharedBudget, type SharedBudgetOptions, type SharedBudgetStats } from './shared-budget';
export { InForceStore, type ClaimResult, type InForceEntry, type InForceOptions } from './in-force';
export { Group, defaultInstanceId, type GroupOptions } from './group';
export { SteerGate, NotSteeringError, isNotSteering, type NotSteeringReason } from './steer-gate';
