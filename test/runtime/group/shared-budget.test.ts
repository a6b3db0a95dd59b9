/**
 * The account's budget across the group against a real redis-server: three instances asking
 * 100 reads each under 50 a minute get 50 in all; reads spend from reserved blocks (Redis round
 * trips counted: far fewer than reads); what is unused goes back on close; with Redis gone each
 * instance spends at most its share (cap / live members last known) per minute of its clock.
 */
import assert from 'node:assert/strict';
import { Group, type GroupClock } from '../../../src/runtime/group';
import { until, useRedisGroup } from '../../helpers/redis';

/** The real clock, shifted by `offset` (tests move it to the next minute). */
function shiftedClock(): GroupClock & { offset: number } {
  const shifted = {
    offset: 0,
    now: () => Date.now() + shifted.offset,
    setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
    clearTimeout: (t: unknown) => clearTimeout(t as NodeJS.Timeout),
  };
  return shifted;
}

describe('group: the budget across the group (redis-server)', function () {
  const env = useRedisGroup<Group>();
  const groups = async (n: number, o: Partial<ConstructorParameters<typeof Group>[0]>) => {
    const id = `cfgB-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const same = Array.from(
      { length: n },
      (_, i) => new Group({ url: env.redis.url, groupId: id, instanceId: `b${i}`, backoffMaxMs: 200, ...o }),
    );
    env.open.push(...same);
    await Promise.all(same.map((g) => g.connection.ready()));
    await until(async () => (await same[0].members.beat()).length === n, 3000, 'all members');
    await Promise.all(same.map((g) => g.members.beat()));
    return same;
  };
  /** Waits, when the current minute of Redis's clock ends within 5 s, for the next one (the caps count calendar minutes). */
  const awayFromMinuteEnd = async (g: Group) => {
    const [s, us] = (await g.connection.command<string[]>(['TIME'])).map(Number);
    const left = 60_000 - ((s * 1000 + Math.floor(us / 1000)) % 60_000);
    if (left < 5000) await new Promise((r) => setTimeout(r, left + 50));
  };

  it('3 instances x 100 reads under 50 a minute: 50 granted in all, and the counter says 50', async () => {
    const gs = await groups(3, { perMinute: 50, perDay: 0 });
    await awayFromMinuteEnd(gs[0]);
    const before = gs.map((g) => g.connection.commands);
    const granted = await Promise.all(
      gs.map(async (g) => {
        let count = 0;
        for (let i = 0; i < 100; i++) if (await g.budget.acquire()) count++;
        return count;
      }),
    );
    assert.equal(
      granted.reduce((a, b) => a + b, 0),
      50,
      `granted ${granted}`,
    );
    const keys = await gs[0].connection.command<string[]>(['KEYS', `${gs[0].prefix}budget:m:*`]);
    assert.equal(keys.length, 1);
    assert.equal(Number(await gs[0].connection.command(['GET', keys[0]])), 50);
    // the round trips: one per reservation (and none per refusal once the minute is spent), not one per read
    const trips = gs.map((g, i) => g.connection.commands - before[i]);
    assert.ok(trips.reduce((a, b) => a + b, 0) <= 30, `${trips} round trips for 300 reads`);
  });

  it('reads spend from blocks: 1000 reads under 6000 a minute cost at most 12 round trips (blocks of 100); close gives the unused back', async () => {
    const [g] = await groups(1, { perMinute: 6000, perDay: 100_000 });
    await awayFromMinuteEnd(g);
    const before = g.connection.commands;
    let ok = 0;
    for (let i = 0; i < 1000; i++) if (g.budget.take() || (await g.budget.acquire())) ok++;
    assert.equal(ok, 1000);
    const trips = g.connection.commands - before;
    assert.ok(trips <= 12, `${trips} round trips for 1000 reads`);
    await g.budget.reserve();
    const held = g.budget.held;
    assert.ok(held > 0, 'a block is held');
    const mKey = (await g.connection.command<string[]>(['KEYS', `${g.prefix}budget:m:*`]))[0];
    const dKey = (await g.connection.command<string[]>(['KEYS', `${g.prefix}budget:d:*`]))[0];
    assert.equal(Number(await g.connection.command(['GET', mKey])), 1000 + held);
    const probe = new Group({ url: env.redis.url, groupId: 'probe', instanceId: 'p' });
    env.open.push(probe);
    await probe.connection.ready();
    await g.close();
    assert.equal(Number(await probe.connection.command(['GET', mKey])), 1000, 'the minute counts what was spent');
    assert.equal(Number(await probe.connection.command(['GET', dKey])), 1000, 'the day too');
  });

  it('Redis gone: each of 3 instances spends at most 50/3 a minute (its share), and again in the next minute of its clock', async () => {
    const clock = shiftedClock();
    const gs = await groups(3, { perMinute: 50, perDay: 0, blockSize: 1, clock });
    // spend the one-request blocks they may hold, then lose Redis
    await env.redis.kill();
    await until(() => gs.every((g) => !g.connection.reachable), 3000, 'unreachable');
    const spent = () =>
      gs.map((g) => {
        let count = 0;
        for (let i = 0; i < 100; i++) if (g.budget.take()) count++;
        return count;
      });
    clock.offset = 60_000 - (Date.now() % 60_000) + 1000; // the start of a local minute: one window for the whole count
    const first = spent();
    for (const n of first) assert.ok(n <= 16 + 1, `${first}`); // its share, plus at most the one request of a block it held
    assert.ok(first.reduce((a, b) => a + b, 0) <= 50);
    assert.ok(
      first.every((n) => n >= 16),
      `each spends its share: ${first}`,
    );
    clock.offset += 60_000;
    const second = spent();
    assert.deepEqual(second, [16, 16, 16]);
    await env.redis.restart();
  });
});
