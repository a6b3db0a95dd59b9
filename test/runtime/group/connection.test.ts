/**
 * The group's connection and membership against a real redis-server (test/helpers/redis.ts):
 * the redisUrl check, a password that never shows in an error, reachable / unreachable / back
 * when Redis is killed and restarted, heartbeats and the live members, and the rendezvous split
 * of 300 devices (each exactly once; a dead member's devices, and only those, move).
 */
import assert from 'node:assert/strict';
import { checkRedisUrl, Group, GroupConnection, GroupError, redact } from '../../../src/runtime/group';
import { redisOrSkip, startRedis, until, type StartedRedis } from '../../helpers/redis';

const DEVICES = Array.from({ length: 300 }, (_, i) => `dev-${i}`);

describe('group: redisUrl, connection, membership, split', () => {
  it('checkRedisUrl takes redis:// and rediss:// without credentials, "" as none; refuses the rest naming the field', () => {
    assert.equal(checkRedisUrl(''), undefined);
    assert.equal(checkRedisUrl('  '), undefined);
    assert.equal(checkRedisUrl(undefined), undefined);
    assert.equal(checkRedisUrl('redis://redis:6379'), 'redis://redis:6379');
    assert.equal(checkRedisUrl('rediss://r.example.com:6380/2'), 'rediss://r.example.com:6380/2');
    for (const bad of [
      'http://redis:6379',
      'redis://:secret@redis:6379',
      'redis://user:secret@redis',
      'redis://secret@redis',
      'redis://r/x',
      'redis://r?password=x',
      'not a url',
      7,
    ]) {
      assert.throws(
        () => checkRedisUrl(bad),
        (e: Error & { field?: string }) => e.field === 'redisUrl' && !/secret/.test(e.message),
        String(bad),
      );
    }
    assert.equal(redact('connect redis://u:pw@h failed: pw', 'pw'), 'connect redis://***@h failed: ***');
  });

  describe('against redis-server', function () {
    let redis: StartedRedis;
    const open: Group[] = [];
    const group = (id: string, o: Partial<ConstructorParameters<typeof Group>[0]> = {}) => {
      const member = new Group({
        url: redis.url,
        groupId: 'cfg1',
        instanceId: id,
        heartbeatMs: 600,
        backoffMaxMs: 200,
        ...o,
      });
      open.push(member);
      return member;
    };

    before(async function () {
      redis = await startRedis(redisOrSkip(this), { password: 'pa55-w0rd-xyz' });
    });
    after(async () => {
      await redis?.stop();
    });
    afterEach(async () => {
      await Promise.all(open.splice(0).map((g) => g.close()));
    });

    it('connects with the password from the credentials; a wrong one fails without showing it', async () => {
      const member = group('ok', { password: 'pa55-w0rd-xyz' });
      await member.connection.ready();
      assert.equal(await member.connection.command(['PING']), 'PONG');
      const bad = new GroupConnection({ url: redis.url, password: 'wrong-s3cret-value', backoffMaxMs: 200 });
      try {
        await until(() => bad.lastError !== undefined, 3000, 'an auth error');
        assert.ok(!bad.reachable);
        assert.doesNotMatch(bad.lastError!, /wrong-s3cret-value/);
        await assert.rejects(
          bad.command(['PING']),
          (e: Error) => e instanceof GroupError && !e.message.includes('wrong-s3cret-value'),
        );
      } finally {
        await bad.close();
      }
    });

    it('unreachable at once when Redis dies (commands fail fast, nothing queued), reachable again when it returns', async () => {
      const member = group('r1', { password: 'pa55-w0rd-xyz' });
      await member.connection.ready();
      const states: string[] = [];
      member.connection.onState((s) => states.push(s));
      await redis.kill();
      await until(() => member.reachability === 'unreachable', 3000, 'unreachable');
      await assert.rejects(member.connection.command(['PING']), /Redis unreachable/);
      await redis.restart();
      await until(() => member.reachability === 'reachable', 5000, 'reachable again');
      assert.equal(await member.connection.command(['PING']), 'PONG');
      assert.deepEqual(states.filter((s, i) => s !== states[i - 1]).slice(0, 2), ['unreachable', 'reachable']);
    });

    it('membership: three live members; one stops its heartbeats and drops out after its TTL; the split then moves only its devices', async () => {
      const [a, b, c] = ['a', 'b', 'c'].map((id) => group(id, { password: 'pa55-w0rd-xyz' }));
      await Promise.all([a, b, c].map((g) => g.connection.ready()));
      await until(async () => (await a.members.beat()).length === 3, 3000, 'three members');
      await Promise.all([b, c].map((g) => g.members.beat()));
      const before = [a, b, c].map((g) => g.members.mine(DEVICES));
      assert.equal(new Set(before.flat()).size, 300);
      assert.equal(before.flat().length, 300, 'each device polled by exactly one instance');
      // b "dies": its connection is gone, it never leaves the set itself
      await b.connection.close();
      await until(
        async () => (await a.members.beat()).length === 2 && (await c.members.beat()).length === 2,
        3000,
        'b expired',
      );
      assert.deepEqual(a.members.members, ['a', 'c']);
      const after = [a, c].map((g) => g.members.mine(DEVICES));
      assert.equal(after.flat().length, 300);
      assert.equal(new Set(after.flat()).size, 300);
      for (const [i, g] of [
        [0, a],
        [2, c],
      ] as const) {
        const now = after[i === 0 ? 0 : 1];
        for (const k of before[i]) assert.ok(now.includes(k), `${k} stays with ${g.instanceId}`);
      }
    });
  });
});
