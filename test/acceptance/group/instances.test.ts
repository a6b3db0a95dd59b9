/**
 * A group of three Node-RED processes on one Redis, running one flow against one simulator
 * (each process a real Node-RED runtime of its own, test/helpers/group-instance.ts, with
 * EMS_GROUP_LEASE_MS=1500 so that a failover takes seconds, not 15 s):
 * - the request budget holds across the group: 3 x 100 reads under maxPerMinute 50 send 50;
 * - a steering message arriving at all three is sent once, by the leader of its site; the
 *   others answer msg.standby and show "standby: <leader> steers <site>";
 * - a polling device read node of 300 devices polls each device from one instance only (300
 *   requests per interval in the group), and within two intervals of one instance's kill the
 *   other two poll all 300, each once;
 * - kill -9 of the leader while a schedule plays and a renewing site steer runs: another
 *   instance sends the next slot and the next renewal within the lease time plus 1 s, no slot
 *   twice, none skipped, the renewal chain never lapses, and the delivery reports go on;
 * - Redis gone: nobody steers (status "Redis unreachable: not steering", a Catch-able error),
 *   reads go on; Redis back (with its data, appendonly): one leader again, nothing sent twice.
 */
import assert from 'node:assert/strict';
import { BUILT_IN_SITES, startSimulator, type LogEntry, type StartedSimulator } from '../../../src/simulator/index';
import { redisOrSkip, startRedis, until, type StartedRedis } from '../../helpers/redis';
import { LEASE_MS, S1, S2, S3, SLOT_MS, POLL_S, DEVICES, flowFor, FLEET, Instance } from '../../helpers/group-flow';

describe('group: three Node-RED processes on one Redis (acceptance)', function () {
  this.timeout(180_000);
  let redis: StartedRedis;
  let sim: StartedSimulator;
  let all: Instance[] = [];
  const posts = (site: string): LogEntry[] =>
    sim.sim.log.entries().filter((e) => e.method === 'POST' && e.path.startsWith(`/sites/${site}/`));
  const alive = () => all.filter((i) => !i.dead);

  before(async function () {
    redis = await startRedis(redisOrSkip(this), { appendonly: true });
    sim = await startSimulator({ port: 0, sites: [...BUILT_IN_SITES, ...FLEET] });
    const flow = flowFor(sim.url, redis.url);
    // The first instance first, so that it leads every site; the two others join it.
    all = [new Instance('nr1')];
    await all[0].load(flow);
    all.push(new Instance('nr2'), new Instance('nr3'));
    await Promise.all(all.slice(1).map((i) => i.load(flow)));
    await until(
      () => all.every((i) => i.lastStatus('sched2')?.startsWith('standby') || i.lastStatus('sched2') === undefined),
      10_000,
      'deployed',
    );
  });

  after(async () => {
    await Promise.all(all.map((i) => i.stop()));
    await sim?.close();
    await redis?.stop();
  });

  it('the request budget holds across the group: 3 x 100 reads under maxPerMinute 50 send 50 in all', async () => {
    // The group counts Redis's calendar minutes: the burst is kept inside one.
    const sec = (Date.now() / 1000) % 60;
    if (sec > 45) await new Promise((r) => setTimeout(r, (61 - sec) * 1000));
    const before = sim.sim.log.entries().filter((e) => e.route === 'GET /devices').length;
    for (const i of all)
      i.input(
        'reads',
        Array.from({ length: 100 }, () => ({})),
      );
    const answered = () =>
      all.reduce(
        (n, i) => n + i.of('reads-out').length + i.of('caught').filter((m) => m.error?.code === 'EMS_BUDGET').length,
        0,
      );
    await until(() => answered() >= 300, 30_000, '300 reads answered');
    const sent = sim.sim.log.entries().filter((e) => e.route === 'GET /devices').length - before;
    const ok = all.reduce((n, i) => n + i.of('reads-out').length, 0);
    assert.equal(sent, 50, 'requests the simulator got');
    assert.equal(ok, 50, 'reads answered with a result');
    assert.equal(answered(), 300, 'each of the 300 ended once: 50 results, 250 Catch-able budget errors');
  });

  it('a steering message arriving at all three is sent once, by the leader; the others answer msg.standby and show who steers', async () => {
    const n0 = posts(S1).length;
    for (const i of all) i.input('steer1', [{ payload: 3 }]);
    await until(() => all.every((i) => i.of('steer1-out').length === 1), 10_000, 'three answers');
    assert.equal(posts(S1).length - n0, 1, 'one request in the group');
    const senders = all.filter((i) => i.of('steer1-out')[0].request);
    assert.equal(senders.length, 1);
    const leader = senders[0].ids.cfgB;
    for (const i of all.filter((x) => x !== senders[0])) {
      assert.deepEqual(i.of('steer1-out')[0].standby, { leader });
      assert.equal(i.of('steer1-out')[0].payload, null);
      assert.equal(i.lastStatus('steer1'), `standby: ${leader} steers ${S1}`);
    }
  });

  it('polling: each device is polled by one instance; together they poll all of them', async () => {
    // Once the three are members (a heartbeat each), the last poll of each is its share.
    const last = () => alive().map((i) => Object.keys(i.of('poll-out').at(-1)?.payload ?? {}));
    await until(
      () => last().every((s) => s.length > 0) && last().flat().length === DEVICES.length,
      15_000,
      'three shares',
    );
    const shares = last();
    const every = shares.flat();
    assert.equal(new Set(every).size, every.length, 'no device in two shares');
    assert.deepEqual([...every].sort(), [...DEVICES].sort(), 'every device in a share');
    assert.ok(
      shares.every((s) => s.length > 0),
      `three shares: ${shares.map((s) => s.length)}`,
    );
    assert.equal(DEVICES.length, 300);
    // One interval later each instance polled its share again, unchanged: 300 requests an interval in the group, one per device.
    const counts = alive().map((i) => i.of('poll-out').length);
    await until(
      () => alive().every((i, k) => i.of('poll-out').length > counts[k]),
      2 * POLL_S * 1000,
      'a poll of each in the next interval',
    );
    assert.deepEqual(
      last().map((x) => [...x].sort()),
      shares.map((x) => [...x].sort()),
      'the same shares an interval later',
    );
    // What the simulator got over three intervals: every device, each 3 times (2 or 4 where a poll
    // straddles the window's edge); a device two instances polled would be there 6 times.
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 3 * POLL_S * 1000));
    const perDevice = new Map<string, number>();
    for (const e of sim.sim.log.entries()) {
      if (e.time < t0 || e.route !== 'GET /devices/:ref/measurements/map') continue;
      const ref = e.path.split('/')[2];
      perDevice.set(ref, (perDevice.get(ref) ?? 0) + 1);
    }
    assert.equal(perDevice.size, 300, 'every device polled');
    const counts3 = [...perDevice.values()];
    assert.ok(
      Math.min(...counts3) >= 2 && Math.max(...counts3) <= 4,
      `polls per device in three intervals: ${Math.min(...counts3)}-${Math.max(...counts3)}`,
    );
  });

  it('kill -9 of the leader while a schedule plays and a renewal runs: the next slot and renewal come from another instance within the lease + 1 s; nothing twice, nothing skipped', async () => {
    const start = Date.now() + 500;
    const slots = Array.from({ length: 96 }, (_, k) => ({
      start: start + k * SLOT_MS,
      end: start + (k + 1) * SLOT_MS,
      energyStorage: (k % 5) + 1,
    }));
    for (const i of all) i.input('sched2', [{ payload: slots }]);
    for (const i of all) i.input('renew3', [{ payload: 2 }]);
    await until(() => posts(S2).length >= 2 && posts(S3).length >= 2, 20_000, 'two slots and a renewal sent');
    const leader = all.find((i) => i.of('sched2-out').length > 0)!;
    assert.ok(leader, 'the leader of the schedule');
    assert.ok(leader.of('renew3-out').length > 0, 'it leads the renewing site too');
    const killedAt = Date.now();
    await leader.kill();
    const sentBefore = posts(S2).filter((e) => e.time <= killedAt).length;
    await until(() => posts(S2).length >= sentBefore + 2, 20_000, 'two more slots after the kill');
    const afterKill = posts(S2).filter((e) => e.time > killedAt);
    // The dead leader's lease ran out by killedAt + LEASE_MS at the latest: the next slot went out within 1 s of that, or of its start if later.
    const next = slots.find((x) => x.end === Number((afterKill[0].body as any).validUntil))!;
    assert.ok(
      afterKill[0].time <= Math.max(next.start, killedAt + LEASE_MS) + 1000,
      `the next slot: ${afterKill[0].time - Math.max(next.start, killedAt + LEASE_MS)} ms late`,
    );
    await until(() => posts(S3).filter((e) => e.time > killedAt).length >= 1, 10_000, 'a renewal after the kill');
    // The next renewal was due 2 s before the signal in force ran out: it went out within 1 s of that, or of the lease's end if later.
    const inForce = posts(S3)
      .filter((e) => e.time <= killedAt)
      .at(-1)!;
    const due = Number((inForce.body as any).validUntil) - 2000;
    const renewed = posts(S3).filter((e) => e.time > killedAt)[0];
    assert.ok(
      renewed.time <= Math.max(due, killedAt + LEASE_MS) + 1000,
      `the next renewal: ${renewed.time - Math.max(due, killedAt + LEASE_MS)} ms late`,
    );
    // Every slot from the first to the last sent is sent exactly once (its validUntil is the slot's end).
    const ends = posts(S2).map((e) => Number((e.body as any).validUntil));
    assert.equal(new Set(ends).size, ends.length, `no slot twice: ${ends}`);
    const first = slots.findIndex((s) => s.end === ends[0]);
    const expected = slots.slice(first, first + ends.length).map((s) => s.end);
    assert.deepEqual(ends, expected, 'no slot skipped');
    // The renewal chain never lapsed: each link went out before the one before it ran out, none twice.
    const links = posts(S3).map((e) => ({ at: e.time, until: Number((e.body as any).validUntil) }));
    for (let k = 1; k < links.length; k++)
      assert.ok(links[k].at < links[k - 1].until, `link ${k} before the last ran out`);
    assert.equal(new Set(links.map((l) => l.until)).size, links.length, 'no link twice');
    // The delivery reports go on, from the instance that sends now.
    await until(
      () => alive().some((i) => i.of('sched2-out').length > 0 && i.of('sched2-report').length > 0),
      3 * SLOT_MS,
      'a delivery report from the new leader',
    );
    // The two left poll all 300 devices, each once, within two intervals of the kill.
    const covered = () => {
      const shares = alive().map((i) =>
        Object.keys(i.outs.filter((o) => o.node === 'poll-out' && o.at > killedAt).at(-1)?.msg.payload ?? {}),
      );
      return shares.flat().length === DEVICES.length && new Set(shares.flat()).size === DEVICES.length;
    };
    await until(covered, 2 * POLL_S * 1000 + 2000, 'the two left poll all devices');
    // The first moment after the kill at which the two survivors' latest polls covered all 300.
    const polls = alive().flatMap((i) =>
      i.outs
        .filter((o) => o.node === 'poll-out' && o.at > killedAt)
        .map((o) => ({ i, at: o.at, keys: Object.keys(o.msg.payload ?? {}) })),
    );
    const coveredAt = polls
      .map((p) => p.at)
      .sort((a, b) => a - b)
      .find((t) => {
        const latest = alive().map((i) => polls.filter((p) => p.i === i && p.at <= t).at(-1)?.keys ?? []);
        return latest.flat().length === DEVICES.length && new Set(latest.flat()).size === DEVICES.length;
      })!;
    assert.ok(
      coveredAt - killedAt <= 2 * POLL_S * 1000,
      `all 300 polled by the two left ${coveredAt - killedAt} ms after the kill (two intervals: ${2 * POLL_S * 1000} ms)`,
    );
  });

  it('Redis gone: nobody steers, the status says so, reads go on; Redis back: one leader again and nothing sent twice', async () => {
    await redis.kill();
    await until(
      () => alive().every((i) => i.lastStatus('steer1') === 'Redis unreachable: not steering'),
      10_000,
      'statuses',
    );
    const n0 = posts(S1).length;
    const caught0 = alive().map((i) => i.of('caught').length);
    for (const i of alive()) i.input('steer1', [{ payload: 4 }]);
    await until(() => alive().every((i, k) => i.of('caught').length > caught0[k]), 10_000, 'Catch-able errors');
    for (const i of alive()) assert.match(i.of('caught').at(-1).error.message, /Redis unreachable: not steering/);
    assert.equal(posts(S1).length, n0, 'nothing sent');
    const reads0 = alive().map((i) => i.of('readB-out').length);
    for (const i of alive()) i.input('readB', [{}]);
    await until(() => alive().every((i, k) => i.of('readB-out').length > reads0[k]), 10_000, 'reads go on');
    await redis.restart();
    await until(() => alive().some((i) => i.lastStatus('steer1')?.startsWith('standby')), 15_000, 'a leader again');
    const n1 = posts(S2).length;
    await until(() => posts(S2).length >= n1 + 1, 15_000, 'the schedule goes on');
    const ends = posts(S2).map((e) => Number((e.body as any).validUntil));
    assert.equal(new Set(ends).size, ends.length, 'no slot twice across the outage');
  });
});
