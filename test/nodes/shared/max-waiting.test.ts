/**
 * Bursts: cost per message stays flat as a burst grows (counted in operations and listeners,
 * never timed), a node holds a bounded number of waiting messages (the config node's
 * `maxWaiting`), and in a large burst every message ends exactly once.
 */
import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../../../src/simulator';
import { cfg, flow, helper, loadFlow, siteSteer, until, useRuntime, useSimulator } from '../../helpers/red';

const SITE = DEFAULT_SITES[0].siteReference;
const BAT = DEFAULT_SITES[0].battery.deviceReference;

describe('bursts: a node holds at most maxWaiting messages', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();

  const read = {
    type: 'ems-device-read',
    device: BAT,
    deviceType: 'str',
    mode: 'single',
    properties: 'soc',
    propertiesType: 'str',
  };

  it('device read: past the limit a message fails at once with an error naming maxWaiting; the status counts the drops; the rest are answered', async () => {
    const loaded = await loadFlow(flow(read, cfg(sim.s.url, { maxWaiting: 5 })));
    sim.s.sim.setFaults({ latencyMs: [200, 200] });
    for (let i = 0; i < 8; i++) loaded.send({ seq: i });
    // Refused at once: before any answer came back (Catch nodes get their messages a turn later).
    await loaded.caught.count(3);
    assert.equal(loaded.out.msgs.length, 0);
    assert.deepEqual(
      loaded.caught.msgs.map((m) => m.seq),
      [5, 6, 7],
    );
    for (const m of loaded.caught.msgs) {
      assert.match(
        m.error.message,
        /5 messages are waiting in this node already \(maxWaiting of the config node: raise it there\)/,
      );
      assert.equal(m.error.source.id, 'n');
    }
    assert.deepEqual(loaded.status.all.at(-1), { fill: 'red', shape: 'ring', text: '3 dropped: 5 waiting' });
    const outs = await loaded.out.count(5);
    assert.deepEqual(outs.map((m) => m.seq).sort(), [0, 1, 2, 3, 4]);
    assert.match(loaded.status.all.at(-1).text, /· 3 dropped$/, 'later statuses keep the count');
    // Once they ended, the node takes messages again.
    sim.s.sim.setFaults({});
    const ok = await loaded.ask({ seq: 8 });
    assert.equal(ok.seq, 8);
    assert.equal(loaded.caught.msgs.length, 3);
  });

  it('site steer (messages in arrival order): the messages past the limit fail at once; those taken are all sent', async () => {
    const loaded = await loadFlow(flow(siteSteer(SITE, { maxEssPower: 1_000_000 }), cfg(sim.s.url, { maxWaiting: 3 })));
    sim.s.sim.setFaults({ latencyMs: [100, 100] });
    for (let i = 0; i < 6; i++) loaded.send({ payload: i, seq: i });
    await loaded.caught.count(3);
    assert.equal(loaded.out.msgs.length, 0);
    assert.deepEqual(
      loaded.caught.msgs.map((m) => m.seq),
      [3, 4, 5],
    );
    assert.match(loaded.caught.msgs[0].error.message, /maxWaiting/);
    const outs = await loaded.out.count(3);
    assert.deepEqual(
      outs.map((m) => m.seq),
      [0, 1, 2],
    );
    assert.equal(loaded.caught.msgs.length, 3);
  });

  it('without the setting (a config node saved before it) a node holds the default 10000', async () => {
    const loaded = await loadFlow(flow(read, cfg(sim.s.url)));
    sim.s.sim.setFaults({ latencyMs: [300, 300] });
    for (let i = 0; i < 10_002; i++) loaded.send({ seq: i });
    await loaded.caught.count(2);
    assert.deepEqual(
      loaded.caught.msgs.map((m) => m.seq),
      [10_000, 10_001],
    );
    assert.match(loaded.caught.msgs[0].error.message, /10000 messages are waiting/);
    await loaded.out.count(10_000, 60_000);
  });

  it('a burst of 100,000 into one device read: every message ends exactly once, in one output or one error', async function () {
    this.timeout(180_000);
    const total = 100_000;
    const loaded = await loadFlow(flow(read, cfg(sim.s.url, { maxWaiting: 200_000 })));
    sim.s.sim.setFaults({});
    const node = helper.getNode('n');
    for (let i = 0; i < total; i++) node.receive({ seq: i });
    await until(
      [loaded.out, loaded.caught],
      () => loaded.out.msgs.length + loaded.caught.msgs.length >= total,
      150_000,
      () => `${total} ends; got ${loaded.out.msgs.length + loaded.caught.msgs.length}`,
    );
    const seen = new Uint8Array(total);
    for (const m of [...loaded.out.msgs, ...loaded.caught.msgs]) seen[m.seq]++;
    assert.equal(loaded.caught.msgs.length, 0, loaded.caught.msgs[0]?.error?.message);
    assert.ok(
      seen.every((n) => n === 1),
      'none lost, none doubled',
    );
    assert.ok(loaded.out.msgs.every((m) => typeof m.payload === 'number'));
  });
});
