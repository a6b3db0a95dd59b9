/**
 * What steering and the request budget ask of the group, against a real redis-server: the gate
 * answers lead / standby (naming the leader) / unreachable, a claim goes to one instance and a
 * retry under the same lease (never under a later one), a record only while leading; the local
 * budget draws each attempt from the group's blocks and refuses, naming the cap "of the group",
 * when the group has none left; a request before the first connection waits for it rather than
 * spend a share of a group it has not seen.
 */
import assert from 'node:assert/strict';
import { Budget, NotSteeringError, SteerGate, isNotSteering, groupLeaseMs } from '../../../src/runtime';
import { Group } from '../../../src/runtime/group';
import type { Attempt } from '../../../src/client';
import { freePort } from '../../helpers/spawned';
import { until, useRedisGroup } from '../../helpers/redis';

const attempt = (): Attempt => ({ method: 'GET', url: '/devices', retry: false }) as unknown as Attempt;

describe('group: the steering gate and the budget drawn from the group (redis-server)', function () {
  const env = useRedisGroup<Group>();
  const group = async (id: string, groupId: string, o: Partial<ConstructorParameters<typeof Group>[0]> = {}) => {
    const member = new Group({ url: env.redis.url, groupId, instanceId: id, leaseMs: 1500, ...o });
    env.open.push(member);
    await member.connection.ready();
    return member;
  };

  it('lead: this instance, or standby naming the leader, or unreachable; at most one round trip', async () => {
    const gateA = new SteerGate(await group('ga', 'gate1'));
    const gateB = new SteerGate(await group('gb', 'gate1'));
    const c0 = gateA.group.connection.commands;
    const value = await gateA.lead('site-1');
    assert.match(value, /\|ga$/);
    assert.equal(gateA.group.connection.commands - c0, 1, 'the first: one round trip');
    const c1 = gateA.group.connection.commands;
    assert.equal(await gateA.lead('site-1'), value);
    assert.equal(gateA.group.connection.commands - c1, 0, 'then none');
    await assert.rejects(
      gateB.lead('site-1'),
      (e: unknown) =>
        isNotSteering(e) &&
        e.reason === 'standby' &&
        e.leader === 'ga' &&
        e.message === 'not sent by this instance: standby: ga steers site-1',
    );
    const dead = new SteerGate(
      new Group({ url: `redis://127.0.0.1:${await freePort()}`, groupId: 'gate1', instanceId: 'gd' }),
    );
    env.open.push(dead.group);
    await until(() => dead.group.reachability === 'unreachable', 3000, 'unreachable');
    await assert.rejects(
      dead.lead('site-1'),
      (e: unknown) =>
        e instanceof NotSteeringError &&
        e.reason === 'unreachable' &&
        /Redis unreachable: not steering site-1/.test(e.message),
    );
    assert.equal(dead.leader('site-1').kind, 'unknown');
  });

  it('claims: once in the group; a retry under the same lease; not by the standby; a record only while leading', async () => {
    const gateA = new SteerGate(await group('ca', 'gate2'));
    const gateB = new SteerGate(await group('cb', 'gate2'));
    await gateA.lead('site-2');
    const entry = { kind: 'renewal', id: 'n1', ends: Date.now() + 60_000, data: { x: 1 } };
    await gateA.claim('site-2', 'k1', 10_000, entry);
    await gateA.claim('site-2', 'k1', 10_000); // the same holder again (a send that failed, retried)
    assert.deepEqual(
      (await gateA.entries('site-2', 'renewal', 'n1')).map((e) => e.data),
      [{ x: 1 }],
      'recorded with the claim',
    );
    await assert.rejects(
      gateB.claim('site-2', 'k1', 10_000),
      (e: unknown) => isNotSteering(e) && e.reason === 'standby',
    );
    assert.equal(await gateB.record('site-2', { ...entry, data: { x: 2 } }), false, 'not the leader: not recorded');
    assert.equal(await gateA.record('site-2', { ...entry, data: { x: 3 } }), true);
    assert.deepEqual(
      (await gateB.entries('site-2', 'renewal', 'n1')).map((e) => e.data),
      [{ x: 3 }],
    );
    assert.equal(
      await gateB.share('site-2', { kind: 'schedule', id: 'n2', ends: Date.now() + 60_000, data: { runs: [] } }),
      true,
      'shared by anyone',
    );
    gateB.forget('site-2', 'schedule', 'n2');
    await until(async () => (await gateA.entries('site-2', 'schedule', 'n2')).length === 0, 2000, 'forgotten');
    // The leader goes; b leads with a later lease: the slot a claimed is not claimed again.
    await gateA.group.close();
    await until(async () => (await gateB.group.leases.tick('site-2')).kind === 'me', 5000, 'b leads');
    await assert.rejects(
      gateB.claim('site-2', 'k1', 10_000),
      (e: unknown) =>
        isNotSteering(e) && e.reason === 'claimed' && /sent this request to site-2 already/.test(e.message),
    );
    await gateB.claim('site-2', 'k2', 10_000);
    // Its lease taken away under it: the claim says not the leader.
    await gateB.group.connection.command(['SET', `${gateB.group.prefix}lease:site-2`, '1|intruder', 'PX', '60000']);
    await assert.rejects(gateB.claim('site-2', 'k3', 10_000), (e: unknown) => isNotSteering(e));
  });

  it('the budget draws each attempt from the group: 30 under a cap of 20 a minute, 20 go and 10 are refused naming the cap of the group', async () => {
    const member = await group('ba', `gate3-${Date.now()}`, { perMinute: 20, perDay: 0 });
    await member.members.beat();
    // The group counts calendar minutes of Redis's clock: not at the end of one.
    const [sec, us] = (await member.connection.command<string[]>(['TIME'])).map(Number);
    const left = 60_000 - ((sec * 1000 + Math.floor(us / 1000)) % 60_000);
    if (left < 3000) await new Promise((r) => setTimeout(r, left + 50));
    const budget = new Budget();
    budget.configure({ maxPerMinute: 20, maxPerDay: 0, budgetMode: 'queue' });
    budget.share(member.budget);
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, () => Promise.resolve(budget.before(attempt()))),
    );
    const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    assert.equal(results.length - refused.length, 20);
    assert.equal(refused.length, 10);
    assert.match(
      refused[0].reason.message,
      /^GET \/devices not sent: request budget maxPerMinute of the group reached \(the instances of the group share 20 requests per minute\); frees at about /,
    );
    assert.equal(refused[0].reason.code, 'EMS_BUDGET');
    assert.equal(budget.stats().total.refused, 10);
    // A later runtime's share stays when the earlier one stops drawing.
    const other = { held: 0, take: () => false, acquire: async () => false };
    budget.share(other);
    budget.unshare(member.budget);
    await assert.rejects(Promise.resolve(budget.before(attempt())), /of the group reached/);
    budget.unshare(other);
    budget.configure({ maxPerMinute: 0, maxPerDay: 5, budgetMode: 'refuse' });
    budget.share(other);
    await assert.rejects(
      Promise.resolve(budget.before(attempt())),
      /request budget maxPerDay of the group reached \(the instances of the group share 5 requests per UTC day\)/,
    );
    budget.close();
  });

  it('a read before the first connection waits for it; Redis that never answers: the share decides after the wait', async () => {
    const port = await freePort();
    const member = new Group({
      url: `redis://127.0.0.1:${port}`,
      groupId: 'gate4',
      instanceId: 'wa',
      perMinute: 10,
      perDay: 0,
      connectTimeoutMs: 300,
      backoffMaxMs: 100,
    });
    env.open.push(member);
    member.budget.connectWaitMs = 200;
    assert.equal(await member.budget.acquire(), true, 'no member known: the whole cap is the share');
    assert.equal(member.budget.stats.fallback, 1);
  });

  it('the lease time is 15 s unless EMS_GROUP_LEASE_MS (300 to 60000) says otherwise', () => {
    assert.equal(groupLeaseMs({}), 15_000);
    assert.equal(groupLeaseMs({ EMS_GROUP_LEASE_MS: '1500' }), 1500);
    assert.equal(groupLeaseMs({ EMS_GROUP_LEASE_MS: '100' }), 15_000);
    assert.equal(groupLeaseMs({ EMS_GROUP_LEASE_MS: 'x' }), 15_000);
  });
});
