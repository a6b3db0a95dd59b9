/**
 * Leader leases and slot claims against a real redis-server (test/helpers/redis.ts), three
 * group clients in one process: one leader per site, the others name it; a leader that dies
 * (its connection gone, nothing released) is replaced within the lease time plus one second
 * with a larger fencing token; with Redis gone nobody leads (unknown), and when it returns
 * there is again exactly one leader; 96 slots claimed by three instances across a failover are
 * each claimed exactly once, and only by the holder of the lease.
 */
import assert from 'node:assert/strict';
import { Group, type LeaderAnswer } from '../../../src/runtime/group';
import { until, useRedisGroup } from '../../helpers/redis';

const LEASE = 1500;
const leaders = (gs: Group[], site: string) => gs.filter((g) => g.leases.leader(site).kind === 'me');

describe('group: leader leases and slot claims (redis-server)', function () {
  const env = useRedisGroup<Group>();
  const three = async () => {
    const gs = ['i1', 'i2', 'i3'].map(
      (id) => new Group({ url: env.redis.url, groupId: 'cfgL', instanceId: id, leaseMs: LEASE, backoffMaxMs: 200 }),
    );
    env.open.push(...gs);
    await Promise.all(gs.map((g) => g.connection.ready()));
    return gs;
  };

  it('one leader per site; the others answer "X leads"; a released lease moves on close', async () => {
    const gs = await three();
    for (const g of gs) g.leases.watch('site-A');
    await until(() => gs.every((g) => g.leases.leader('site-A').kind !== 'unknown'), 3000, 'everyone knows');
    const lead = leaders(gs, 'site-A');
    assert.equal(lead.length, 1);
    for (const g of gs.filter((x) => x !== lead[0]))
      assert.deepEqual(g.leases.leader('site-A'), { kind: 'other', instance: lead[0].instanceId });
    await lead[0].close();
    const rest = gs.filter((x) => x !== lead[0]);
    await until(() => leaders(rest, 'site-A').length === 1, LEASE + 1000, 'a new leader after release');
  });

  it('a dead leader (nothing released) is replaced within lease + 1 s, with a larger fencing token; never two leaders', async () => {
    const gs = await three();
    for (const g of gs) g.leases.watch('site-B');
    await until(() => leaders(gs, 'site-B').length === 1, 3000, 'a leader');
    const old = leaders(gs, 'site-B')[0];
    const oldToken = (old.leases.leader('site-B') as Extract<LeaderAnswer, { kind: 'me' }>).token;
    let two = 0;
    const rest = gs.filter((g) => g !== old);
    const watch = setInterval(() => {
      if (leaders(gs, 'site-B').length > 1) two++;
    }, 5);
    try {
      const killedAt = Date.now();
      await old.connection.close(); // like kill -9: no release, no renewal
      await until(() => leaders(rest, 'site-B').length === 1, LEASE + 1000, 'a new leader within lease + 1 s');
      const took = Date.now() - killedAt;
      const now = leaders(rest, 'site-B')[0].leases.leader('site-B') as Extract<LeaderAnswer, { kind: 'me' }>;
      assert.ok(now.token > oldToken, `fencing token ${now.token} > ${oldToken}`);
      assert.ok(took <= LEASE + 1000, `took ${took} ms`);
    } finally {
      clearInterval(watch);
    }
    assert.equal(two, 0, 'never two leaders at once');
  });

  it('Redis gone: every answer is "unknown (unreachable)" at once; back: exactly one leader again', async () => {
    const gs = await three();
    for (const g of gs) g.leases.watch('site-C');
    await until(() => leaders(gs, 'site-C').length === 1, 3000, 'a leader');
    await env.redis.kill();
    await until(() => gs.every((g) => g.reachability === 'unreachable'), 3000, 'unreachable');
    for (const g of gs) assert.deepEqual(g.leases.leader('site-C'), { kind: 'unknown', reason: 'unreachable' });
    await env.redis.restart();
    await until(
      () => leaders(gs, 'site-C').length === 1 && gs.every((g) => g.leases.leader('site-C').kind !== 'unknown'),
      5000,
      'one leader again',
    );
  });

  it('96 slots, three instances claiming each, a failover at slot 40: every slot claimed exactly once, only by the lease holder', async () => {
    const gs = await three();
    for (const g of gs) g.leases.watch('site-D');
    await until(() => leaders(gs, 'site-D').length === 1, 3000, 'a leader');
    const claims = new Map<number, string[]>();
    const claimAll = async (alive: Group[], slot: number) => {
      await Promise.all(
        alive.map(async (g) => {
          const leadership = g.leases.leader('site-D');
          // a non-leader tries with a made-up lease value: refused
          const value = leadership.kind === 'me' ? leadership.value : `1|${g.instanceId}`;
          const outcome = await g.inForce.claim(
            'site-D',
            `2026-11-27T00:${String(slot).padStart(3, '0')}`,
            value,
            60_000,
          );
          if (outcome === 'claimed') claims.set(slot, [...(claims.get(slot) ?? []), g.instanceId]);
          if (leadership.kind !== 'me') assert.equal(outcome, 'not-leader');
        }),
      );
    };
    let alive = gs;
    for (let slot = 0; slot < 96; slot++) {
      if (slot === 40) {
        const old = leaders(alive, 'site-D')[0];
        // it claimed slot 40 just before it died
        const leadership = old.leases.leader('site-D') as Extract<LeaderAnswer, { kind: 'me' }>;
        assert.equal(await old.inForce.claim('site-D', '2026-11-27T00:040', leadership.value, 60_000), 'claimed');
        claims.set(40, [old.instanceId]);
        await old.connection.close();
        alive = alive.filter((g) => g !== old);
        await until(() => leaders(alive, 'site-D').length === 1, LEASE + 1000, 'new leader');
      }
      await claimAll(alive, slot);
    }
    for (let slot = 0; slot < 96; slot++)
      assert.equal(claims.get(slot)?.length, 1, `slot ${slot}: ${claims.get(slot)}`);
  });

  it('a lease counts locally only until the time of its last renewal plus the lease (injected clock): past it, "unknown" until renewed', async () => {
    let offset = 0;
    const clock = {
      now: () => Date.now() + offset,
      setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
      clearTimeout: (t: unknown) => clearTimeout(t as NodeJS.Timeout),
    };
    const member = new Group({ url: env.redis.url, groupId: 'cfgL', instanceId: 'clocked', leaseMs: 60_000, clock });
    env.open.push(member);
    await member.connection.ready();
    member.leases.watch('site-F');
    await until(() => member.leases.leader('site-F').kind === 'me', 3000, 'leads');
    const first = member.leases.leader('site-F') as Extract<LeaderAnswer, { kind: 'me' }>;
    offset += 60_000; // the renewals did not happen in time (as seen by this instance's clock)
    assert.deepEqual(member.leases.leader('site-F'), { kind: 'unknown', reason: 'pending' });
    assert.deepEqual(await member.leases.tick('site-F'), first, 'renewed: the same lease, the same fencing token');
  });

  it('what is in force per site survives the leader: the next one reads it; entries over are dropped', async () => {
    const [a, b] = await three();
    const now = Date.now();
    await a.inForce.put('site-E', {
      kind: 'schedule',
      id: 'n1',
      ends: now + 3_600_000,
      data: { slots: 96, first: '2026-11-27T00:00:00Z' },
    });
    await a.inForce.put('site-E', { kind: 'renewal', id: 'n2', ends: now - 1, data: { mode: 'ess' } });
    const seen = await b.inForce.list('site-E');
    assert.deepEqual(
      seen.map((e) => `${e.kind}:${e.id}`),
      ['schedule:n1'],
    );
    assert.deepEqual(seen[0].data, { slots: 96, first: '2026-11-27T00:00:00Z' });
    assert.equal(
      await b.connection.command(['HEXISTS', `${b.prefix}inforce:site-E`, 'renewal:n2']),
      0,
      'the ended entry was dropped',
    );
    await b.inForce.remove('site-E', 'schedule', 'n1');
    assert.deepEqual(await a.inForce.list('site-E'), []);
  });
});
