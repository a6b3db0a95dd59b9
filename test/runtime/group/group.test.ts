/**
 * The group's events and edges against a real redis-server: who hears what (lease and member
 * changes, a listener that throws stops no other), a lease taken away under its holder, the
 * claims and entries as stored, the budget's block at the end of its minute and on close while
 * a reservation is in flight, a budget without caps, a connection that never becomes reachable.
 */
import assert from 'node:assert/strict';
import { Group, GroupConnection, GroupError, type LeaderAnswer } from '../../../src/runtime/group';
import { freePort } from '../../helpers/spawned';
import { until, useRedisGroup } from '../../helpers/redis';

describe('group: events and edges (redis-server)', function () {
  const env = useRedisGroup<Group>();
  const group = async (id: string, o: Partial<ConstructorParameters<typeof Group>[0]> = {}) => {
    const member = new Group({
      url: env.redis.url,
      groupId: 'cfgE',
      instanceId: id,
      leaseMs: 1500,
      heartbeatMs: 600,
      ...o,
    });
    env.open.push(member);
    await member.connection.ready();
    return member;
  };

  it('lease changes reach every listener, even past one that throws; a lease taken away under its holder turns to "other"', async () => {
    const member = await group('e1');
    const heard: string[] = [];
    member.leases.onChange(() => {
      throw new Error('a broken listener');
    });
    const off = member.leases.onChange((site, a) =>
      heard.push(`${site} ${a.kind}${a.kind === 'other' ? ` ${a.instance}` : ''}`),
    );
    member.leases.watch('site-X');
    member.leases.watch('site-X'); // once is enough
    await until(() => member.leases.leader('site-X').kind === 'me', 3000, 'leads');
    // an operator (or a bug elsewhere) hands the lease to another instance
    await member.connection.command(['SET', `${member.prefix}lease:site-X`, '9|intruder', 'PX', '60000']);
    assert.deepEqual(await member.leases.tick('site-X'), { kind: 'other', instance: 'intruder' });
    assert.deepEqual(heard, ['site-X me', 'site-X other intruder']);
    off();
    await member.leases.unwatch('site-X');
    await member.leases.unwatch('site-X');
    assert.deepEqual(
      await member.leases.tick('site-X'),
      { kind: 'unknown', reason: 'pending' },
      'not watched any more',
    );
    assert.equal(heard.length, 2);
  });

  it('member changes reach the listeners; the split under the view covers every key once', async () => {
    const memberA = await group('m1');
    const views: string[][] = [];
    memberA.members.onChange(() => {
      throw new Error('a broken listener');
    });
    memberA.members.onChange((m) => views.push([...m]));
    await until(async () => (await memberA.members.beat()).includes('m1'), 3000, 'a member');
    const memberB = await group('m2');
    await until(async () => (await memberB.members.beat()).length === 2, 3000, 'two members');
    await memberA.members.beat();
    assert.deepEqual(views.at(-1), ['m1', 'm2']);
    const keys = Array.from({ length: 50 }, (_, i) => `k${i}`);
    const parts = memberA.members.split(keys);
    assert.deepEqual([...parts.keys()], ['m1', 'm2']);
    assert.deepEqual([...parts.values()].flat().sort(), [...keys].sort());
    assert.deepEqual(memberA.members.mine(keys), parts.get('m1'));
    await memberB.close();
    assert.deepEqual(await memberA.members.beat(), ['m1'], 'b left on close');
  });

  it('claims name their holder; an entry Redis holds in an unreadable form is dropped', async () => {
    const member = await group('c1');
    member.leases.watch('site-Y');
    await until(() => member.leases.leader('site-Y').kind === 'me', 3000, 'leads');
    const leadership = member.leases.leader('site-Y') as Extract<LeaderAnswer, { kind: 'me' }>;
    assert.equal(await member.inForce.claimedBy('site-Y', 's1'), undefined);
    assert.equal(await member.inForce.claim('site-Y', 's1', leadership.value, 10), 'claimed');
    assert.equal(await member.inForce.claimedBy('site-Y', 's1'), leadership.value);
    await member.connection.command(['HSET', `${member.prefix}inforce:site-Y`, 'schedule:bad', '{not json']);
    assert.deepEqual(await member.inForce.list('site-Y'), []);
    assert.equal(await member.connection.command(['HLEN', `${member.prefix}inforce:site-Y`]), 0);
  });

  it('a block whose minute ended gives its unused requests back to the day; a reservation in flight at close is given back too', async () => {
    let offset = 0;
    const clock = {
      now: () => Date.now() + offset,
      setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
      clearTimeout: (t: unknown) => clearTimeout(t as NodeJS.Timeout),
    };
    const member = await group('budget1', { perMinute: 0, perDay: 1000, blockSize: 10, clock, groupId: 'cfgE2' });
    assert.equal(await member.budget.acquire(), true);
    assert.equal(member.budget.held, 9);
    const day = async () =>
      Number(
        await member.connection.command([
          'GET',
          (await member.connection.command<string[]>(['KEYS', `${member.prefix}budget:d:*`]))[0],
        ]),
      );
    assert.equal(await day(), 10);
    offset += 61_000; // past the end of the block's minute
    assert.equal(member.budget.held, 0);
    await until(async () => (await day()) === 1, 2000, 'the 9 unused back to the day');
    const pending = member.budget.reserve();
    const closing = member.close();
    await pending;
    await closing;
    const probe = await group('probe', { groupId: 'cfgE2' });
    const left = await probe.connection.command<string[]>(['KEYS', `${member.prefix}budget:d:*`]);
    assert.equal(Number(await probe.connection.command(['GET', left[0]])), 1, 'only the one request spent counts');
  });

  it('without caps nothing is counted in Redis and every request may go', async () => {
    const member = await group('free', { groupId: 'cfgE3' });
    const before = member.connection.commands;
    for (let i = 0; i < 20; i++) assert.equal(member.budget.take(), true);
    assert.equal(await member.budget.acquire(), true);
    assert.equal(member.connection.commands, before);
    assert.equal(member.budget.stats.spent, 21);
  });

  it('a reservation while the connection is gone fails quietly (nothing held); an instance id of its own by default, none with "|"', async () => {
    const member = await group('gone', { groupId: 'cfgE4', perMinute: 10 });
    await member.connection.close();
    await member.budget.reserve();
    assert.equal(member.budget.held, 0);
    const byDefault = new Group({ url: env.redis.url, groupId: 'cfgE4' });
    env.open.push(byDefault);
    assert.match(byDefault.instanceId, /^\S+-\d+-[0-9a-f]{6}$/);
    assert.equal(byDefault.leases.leaseMs, 15_000, 'the default lease');
    assert.throws(() => new Group({ url: env.redis.url, groupId: 'x', instanceId: 'a|b' }), /no "\|"/);
  });

  it('a Redis that never answers: ready() gives up with a GroupError, listeners that throw do no harm, close twice is fine', async () => {
    const connection = new GroupConnection({
      url: `redis://127.0.0.1:${await freePort()}`,
      backoffMaxMs: 100,
      connectTimeoutMs: 200,
    });
    connection.onState(() => {
      throw new Error('a broken listener');
    });
    await assert.rejects(
      connection.ready(300),
      (e: Error) => e instanceof GroupError && /not reachable within 300 ms/.test(e.message),
    );
    await connection.close();
    await connection.close();
    assert.equal(connection.reachability, 'closed');
    await assert.rejects(connection.command(['PING']), /closed/);
    // a group that never reached Redis: no members known, so each instance keeps all its devices (none skipped)
    const member = new Group({
      url: `redis://127.0.0.1:${await freePort()}`,
      groupId: 'cfgE5',
      instanceId: 'alone',
      backoffMaxMs: 100,
    });
    env.open.push(member);
    assert.deepEqual(member.members.mine(['d1', 'd2']), ['d1', 'd2']);
    assert.deepEqual(member.members.split(['d1']), new Map());
  });
});
