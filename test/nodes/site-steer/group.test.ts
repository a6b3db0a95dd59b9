/**
 * What coordination costs, counted against a real redis-server in one Node-RED: a steering
 * message to a site this instance leads costs no round trip to Redis (one when renew is on: the
 * chain is recorded), a renewal one (its claim, recording it), a schedule's request one (its
 * claim); reads cost none each (the budget reserves blocks: 200 reads, 2 reservations). The
 * heartbeats and lease renewals that run in the background are left out of the count.
 * A fleet message goes out to the sites this instance leads; the others are answered as standby
 * (msg.payload.results[i].standby), not as failures.
 */
import assert from 'node:assert/strict';
import { cfg, flow, helper, loadFlow, siteSteer, useRuntime, useSimulator } from '../../helpers/red';
import { redisOrSkip, startRedis, until, type StartedRedis } from '../../helpers/redis';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { Group } from '../../../src/runtime/group';

const SITE = DEFAULT_SITES[0].siteReference;

/** Counts the commands a group sends, leaving out the background ones (heartbeats, lease renewals). */
function countCommands(rt: any): { count(): number; reset(): void } {
  let count = 0;
  const conn = rt.group.connection;
  const orig = conn.command.bind(conn);
  conn.command = (args: string[]) => {
    const script = args[0] === 'EVAL' ? args[1] : '';
    const background =
      script.includes('ZADD') ||
      (script.includes("redis.call('PEXPIRE', KEYS[1], ARGV[2]) end") && !script.includes('INCR'));
    if (!background) count++;
    return orig(args);
  };
  return {
    count: () => count,
    reset: () => {
      count = 0;
    },
  };
}

describe('group: round trips per steering message and per read (redis-server)', function () {
  this.timeout(30_000);
  let redis: StartedRedis;
  const sim = useSimulator();
  useRuntime();
  before(async function () {
    redis = await startRedis(redisOrSkip(this));
  });
  after(async () => {
    await redis?.stop();
  });

  it('a message to a site it leads: none (one with renew on); a renewal: one; 200 reads: one reservation per block', async () => {
    const renewing = {
      ...siteSteer(SITE, { validity: 'duration', duration: 0.05, renew: true }),
      id: 'r',
      server: 'cfg',
      wires: [['out']],
    };
    const reads = {
      id: 'reads',
      type: 'ems-device-read',
      server: 'cfg',
      mode: 'devices',
      device: '',
      deviceType: 'str',
      wires: [['out']],
    };
    const deployed = await loadFlow(
      flow(siteSteer(SITE), cfg(sim.url, { redisUrl: redis.url, maxPerMinute: 6000 }), renewing, reads),
    );
    const rt = await helper.getNode('cfg').runtime();
    await rt.group.connection.ready();
    await until(() => rt.group.leases.leader(SITE).kind === 'me', 5000, 'leads the site (watched from deploy)');
    const commands = countCommands(rt);
    const r0 = rt.group.budget.stats.reservations;
    const n0 = deployed.out.msgs.length;
    for (let i = 0; i < 200; i++) helper.getNode('reads').receive({});
    await until(() => deployed.out.msgs.length >= n0 + 200, 20_000, '200 reads');
    const reservations = rt.group.budget.stats.reservations - r0;
    assert.ok(reservations <= 3, `200 reads: ${reservations} reservations (blocks of 100)`);
    assert.ok(commands.count() <= 3, `200 reads: ${commands.count()} round trips`);

    commands.reset();
    const out = await deployed.ask({ payload: 5 });
    assert.ok(out.request, 'sent');
    assert.equal(commands.count(), 0, 'a message to a site it leads: no round trip');

    commands.reset();
    const posts = () => sim.sim.log.entries().filter((e) => e.method === 'POST').length;
    const p0 = posts();
    helper.getNode('r').receive({ payload: 4 });
    await until(() => posts() === p0 + 1, 5000, 'sent');
    await until(() => commands.count() === 1, 5000, 'recorded');
    commands.reset();
    // validity 3 s, renewed 2 s before its end
    await until(() => posts() === p0 + 2, 5000, 'renewed');
    assert.equal(commands.count(), 1, 'a renewal: one round trip (its claim)');
  });

  it('a fleet message: the sites it leads are sent, a site another instance leads is answered standby, without an error', async () => {
    const [A, B] = DEFAULT_SITES.map((x) => x.siteReference);
    const other = new Group({ url: redis.url, groupId: 'cfg', instanceId: 'other-instance', leaseMs: 15_000 });
    try {
      await other.connection.ready();
      other.leases.watch(B);
      await until(() => other.leases.leader(B).kind === 'me', 5000, 'the other instance leads B');
      const deployed = await loadFlow(flow(siteSteer('', { siteType: 'str' }), cfg(sim.url, { redisUrl: redis.url })));
      const before = sim.sim.log.entries().filter((e) => e.method === 'POST').length;
      const out = await deployed.ask({ payload: 2, sites: [A, B] });
      const posts = sim.sim.log
        .entries()
        .filter((e) => e.method === 'POST')
        .slice(before);
      assert.deepEqual(
        posts.map((e) => e.path.split('/')[2]),
        [A],
        'only the site it leads: ' + JSON.stringify(out.payload.results),
      );
      const byRef = Object.fromEntries(out.payload.results.map((r: any) => [r.site, r]));
      assert.equal(byRef[A].ok, true);
      assert.deepEqual(
        { ok: byRef[B].ok, standby: byRef[B].standby, error: byRef[B].error },
        { ok: false, standby: { leader: 'other-instance' }, error: undefined },
      );
      assert.deepEqual(out.payload.summary, { ok: 1, failed: 0, total: 2, standby: 1 });
      assert.equal(deployed.caught.msgs.length, 0, 'no error');
    } finally {
      await other.close();
    }
  });
});
