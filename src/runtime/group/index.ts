/**
 * Several instances on one account (opt-in, a config node with a redisUrl): the connection to
 * Redis, membership and the split of keys over the live members, a leader lease per site, the
 * account's budget across the group, and what is in force per site with a claim per slot.
 */
export { GroupConnection, GroupError, checkRedisUrl, redact, type GroupClock } from './connection';
export { split } from './rendezvous';
export type { LeaderAnswer } from './lease';
export { Group } from './group';
export { SteerGate, NotSteeringError, isNotSteering } from './steer-gate';
