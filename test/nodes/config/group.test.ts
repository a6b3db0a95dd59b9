/**
 * The config node's group settings in a real Node-RED runtime: a flow without redisUrl (saved by
 * an earlier release) makes no group; with redisUrl and the Redis password credential the
 * deployed config node joins the group in Redis (and leaves it on redeploy), the password never
 * in a log line, status or error; a Redis that does not answer stops nothing else; a URL with
 * credentials in it is refused naming redisUrl; admin settings never make a group.
 */
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { createRuntime } from '../../../src/runtime';
import { helper, loadFlow, useRuntime } from '../../helpers/red';
import { redisOrSkip, startRedis, until, type StartedRedis } from '../../helpers/redis';
import { freePort } from '../../helpers/spawned';

const PASSWORD = 'grp-S3CRET-pw';
const read = { type: 'ems-device-read', device: 'x', deviceType: 'str', mode: 'devices' };
const config = (extra: Record<string, unknown>) => ({
  id: 'cfg',
  type: 'ems-partner-config',
  simulator: true,
  ...extra,
});
const at = { z: 'tab', x: 1, y: 1 };
/** The read node `n` on the config node, with the helper nodes loadFlow expects. */
const nodes = (cfg: Record<string, unknown>) => [
  { id: 'tab', type: 'tab' },
  { id: 'n', ...at, server: 'cfg', wires: [['out']], ...read },
  cfg,
  { id: 'out', ...at, type: 'helper', wires: [] },
  { id: 'caught', ...at, type: 'helper', wires: [] },
];

describe('group: the config node (redisUrl, redisPassword)', function () {
  useRuntime();

  it('a config node saved without redisUrl (version 4) makes no group and still reads', async () => {
    const deployed = await loadFlow(nodes(config({ version: 4 })));
    const rt = await helper.getNode('cfg').runtime();
    assert.equal(rt.group, undefined);
    assert.equal(helper.getNode('cfg').props.redisUrl, '', 'the migration added it, empty');
    assert.ok(Array.isArray((await deployed.ask()).payload));
  });

  it('a Redis that does not answer: the flow deploys and reads, the group says unreachable, and a redeploy closes it at once', async () => {
    const dead = `redis://127.0.0.1:${await freePort()}`;
    const deployed = await loadFlow(nodes(config({ redisUrl: dead })), { cfg: { redisPassword: PASSWORD } });
    const rt = await helper.getNode('cfg').runtime();
    await until(() => rt.group.reachability === 'unreachable', 3000, 'unreachable');
    assert.deepEqual(rt.group.leases.leader('any-site'), { kind: 'unknown', reason: 'unreachable' });
    assert.ok(Array.isArray((await deployed.ask()).payload), 'reads go on');
    await helper.unload();
    await until(() => rt.group.reachability === 'closed', 1000, 'closed');
    assert.doesNotMatch(String(rt.group.connection.lastError), new RegExp(PASSWORD));
  });

  it('settings from an admin request (no config node id) never make a group', async () => {
    const rt = await createRuntime(
      { simulator: true, redisUrl: 'redis://127.0.0.1:6379' },
      { redisPassword: PASSWORD },
    );
    try {
      assert.equal(rt.group, undefined);
    } finally {
      await rt.close();
    }
  });

  it('a redisUrl with a password in it is refused, naming redisUrl, without repeating the password', async () => {
    await loadFlow(nodes(config({ redisUrl: `redis://:${PASSWORD}@127.0.0.1:6379` })));
    await assert.rejects(
      helper.getNode('cfg').runtime(),
      (e: Error & { field?: string }) => e.field === 'redisUrl' && !e.message.includes(PASSWORD),
    );
  });

  describe('with redis-server', function () {
    let redis: StartedRedis;
    let probe: ReturnType<typeof createClient>;
    before(async function () {
      redis = await startRedis(redisOrSkip(this), { password: PASSWORD });
      probe = createClient({ url: redis.url, password: PASSWORD });
      probe.on('error', () => undefined);
      await probe.connect();
    });
    after(async () => {
      await probe?.close();
      await redis?.stop();
    });

    it('with redisUrl and the password credential it joins the group in Redis; closing leaves it; the password shows nowhere', async () => {
      await loadFlow(nodes(config({ redisUrl: redis.url })), { cfg: { redisPassword: PASSWORD } });
      const rt = await helper.getNode('cfg').runtime();
      assert.ok(rt.group, 'a group');
      await rt.group.connection.ready();
      const key = 'ems:group:cfg:members';
      await until(async () => (await probe.zRange(key, 0, -1)).includes(rt.group.instanceId), 3000, 'a member');
      await helper.unload();
      await until(async () => (await probe.zRange(key, 0, -1)).length === 0, 3000, 'left the group');
      const logged = JSON.stringify(
        ((helper as any)._logSpy?.getCalls() ?? []).map((c: { args: unknown[] }) => c.args),
      );
      assert.doesNotMatch(logged, new RegExp(PASSWORD));
    });
  });
});
