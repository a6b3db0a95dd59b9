/**
 * The flow-node scaffold (src/nodes/shared/scaffold.ts): the saved properties upgraded before the
 * node is created, the config node (or the "no server configured" ring), registering for its
 * connection state, and closing in order: abort, deregister, clear the status, the node's own
 * close work, done(); nothing shows after close. First on a recording stand-in for Node-RED,
 * then for each flow node type in the Node-RED runtime.
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../../../src/protocol';
import { flowNode } from '../../../src/nodes/shared/scaffold';
import { currentVersion } from '../../../src/nodes/shared/migrations';
import { SAVED, standIn } from './stand-in';
import { cfg, flow, helper, loadFlow, siteSteer, StatusLog, useRuntime, useSimulator } from '../../helpers/red';

describe('nodes: scaffold', () => {
  it('upgrades the saved properties in place before the node is created, and keeps them as node.props', () => {
    const fake = standIn(true);
    const saved = SAVED();
    const scaffold = flowNode(fake.RED, fake.node, saved);
    assert.equal(fake.log[0], 'createNode maxSplit=1000 version=2');
    assert.equal(fake.created(), saved, "Node-RED's own copy, with its hidden _flow, is the one upgraded");
    assert.equal(scaffold.props, saved);
    assert.equal((fake.node as any).props, saved);
  });

  it('registers with the config node and shows its connection state: rate limited (yellow), error (red), nothing while all is well', () => {
    const fake = standIn(true);
    const scaffold = flowNode(fake.RED, fake.node, SAVED());
    assert.equal(fake.users.size, 1);
    assert.equal(scaffold.configNode(), scaffold.server);
    const [user] = fake.users;
    user.onConnectionState({ state: 'ok' } as any);
    assert.deepEqual(fake.statuses, []);
    const until = Date.now() + 60_000;
    user.onConnectionState({ state: 'rate-limited', until } as any);
    user.onConnectionState({ state: 'error', reason: 'HTTP 401: check credentials' } as any);
    user.onConnectionState({ state: 'error' } as any);
    assert.deepEqual(fake.statuses, [
      { fill: 'yellow', shape: 'ring', text: `rate limited until ${new Date(until).toLocaleTimeString()}` },
      { fill: 'red', shape: 'ring', text: 'HTTP 401: check credentials' },
      { fill: 'red', shape: 'ring', text: 'connection error' },
    ]);
  });

  it('without a config node: a red "no server configured" ring; configNode() and runtime() name the field server', async () => {
    const fake = standIn(false);
    const scaffold = flowNode(fake.RED, fake.node, { ...SAVED(), server: '' });
    assert.equal(scaffold.server, null);
    assert.deepEqual(fake.statuses, [{ fill: 'red', shape: 'ring', text: 'no server configured' }]);
    assert.throws(
      () => scaffold.configNode(),
      (e: unknown) => e instanceof ValidationError && e.field === 'server',
    );
    await assert.rejects(scaffold.runtime(), /server must be an ems-partner-config node/);
    await fake.close();
    assert.deepEqual(fake.log.slice(-2), ['status {}', 'done']);
  });

  it("closes in order: abort, deregister, clear the status, the node's own work (awaited), done(); nothing shows afterwards", async () => {
    const fake = standIn(true);
    const scaffold = flowNode(fake.RED, fake.node, SAVED());
    let release!: () => void;
    scaffold.onClose((removed) => {
      fake.log.push(`own work removed=${removed} aborted=${scaffold.signal.aborted} users=${fake.users.size}`);
      return new Promise<void>((r) => {
        release = r;
      });
    });
    const closed = fake.close(true);
    await new Promise((r) => setImmediate(r));
    scaffold.status.ok('late');
    scaffold.status.error(new Error('late'));
    assert.deepEqual(
      fake.log.slice(1),
      ['register', 'deregister', 'status {}', 'own work removed=true aborted=true users=0'],
      'done waits for the own work',
    );
    release();
    await closed;
    assert.equal(fake.log.at(-1), 'done');
    assert.equal(fake.statuses.length, 1, 'nothing after the cleared status');
  });

  it('close ends with done() even when the own work throws or rejects (reported with node.error)', async () => {
    for (const work of [
      () => {
        throw new Error('sync');
      },
      () => Promise.reject(new Error('async')),
    ]) {
      const fake = standIn(true);
      const scaffold = flowNode(fake.RED, fake.node, SAVED());
      scaffold.onClose(work);
      await fake.close();
      assert.deepEqual(
        fake.log.slice(-2).map((l) => l.replace(/sync|async/, 'X')),
        ['error X', 'done'],
      );
    }
  });
  it("the node's signal takes one listener per read in flight without Node.js' leak warning (a poll of many devices)", async () => {
    const fake = standIn(true);
    const scaffold = flowNode(fake.RED, fake.node, SAVED());
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const listeners = Array.from({ length: 200 }, () => () => undefined);
      for (const l of listeners) scaffold.signal.addEventListener('abort', l, { once: true });
      await new Promise((r) => setImmediate(r));
      for (const l of listeners) scaffold.signal.removeEventListener('abort', l);
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(warnings, []);
    await fake.close();
  });
});

describe('nodes: scaffold in the Node-RED runtime', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();
  afterEach(() => {
    sim.s.sim.setFaults({ rate429: 0, rate500: 0, retryAfterSeconds: 1 });
  });

  const NODES: Record<string, Record<string, unknown>> = {
    'ems-device-read': {
      type: 'ems-device-read',
      device: 'dvc_aIcgt4KDesKb',
      deviceType: 'str',
      mode: 'map',
      properties: 'soc',
      propertiesType: 'str',
    },
    'ems-time-series': {
      type: 'ems-time-series',
      device: 'dvc_aIcgt4KDesKb',
      deviceType: 'str',
      property: 'soc',
      propertyType: 'str',
      range: 'last',
      last: 2,
      lastUnit: 'hours',
      resolution: 1,
      output: 'points',
    },
    'ems-site-steer': siteSteer('ste_lepVqjIyPshx'),
  };

  for (const [type, node] of Object.entries(NODES)) {
    it(`${type}: shows the config node's state while deployed; once closed, its status is cleared and nothing more shows`, async () => {
      // `n` is the node under test; `r` another read on the same config node makes the service answer 429.
      const deployed = await loadFlow(
        flow({ ...node, version: 1 }, cfg(sim.s.url), {
          id: 'r',
          ...NODES['ems-device-read'],
          server: 'cfg',
          wires: [[]],
        }),
      );
      assert.equal(
        deployed.node.props.version,
        currentVersion(type),
        `the running node sees version ${currentVersion(type)}`,
      );
      const limited = deployed.status.wait((s) => /^rate limited until /.test(s.text ?? ''), 5_000, 'rate limited');
      sim.s.sim.setFaults({ rate429: 1, retryAfterSeconds: 0 });
      helper.getNode('r').receive({});
      assert.equal((await limited).fill, 'yellow');

      await deployed.node.close(true);
      await new Promise((r) => setImmediate(r)); // the helper reports each status a tick later
      const after = deployed.status.all.length;
      assert.deepEqual(deployed.status.all.at(-1), {}, 'cleared on close');
      // A 500 changes the connection state to an error: the other node hears of it, the closed one not.
      sim.s.sim.setFaults({ rate429: 0, rate500: 1 });
      const other = new StatusLog(helper.getNode('r'));
      helper.getNode('r').receive({});
      await other.wait((s) => s.text === 'HTTP 500', 5_000, 'the connection state on the other node');
      await new Promise((r) => setImmediate(r));
      assert.equal(deployed.status.all.length, after, 'a closed node is deregistered: no state reaches it');
    });
  }
});
