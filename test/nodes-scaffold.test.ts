/**
 * The flow-node scaffold (src/nodes/shared/scaffold.ts): the saved properties upgraded before the
 * node is created, the config node (or the "no server configured" ring), registering for its
 * connection state, and closing in order: abort, deregister, clear the status, the node's own
 * close work, done(); nothing shows after close. First on a recording stand-in for Node-RED,
 * then for each flow node type in the Node-RED runtime.
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../src/protocol';
import { flowNode } from '../src/nodes/shared/scaffold';
import { reply } from '../src/nodes/shared/messages';
import { currentVersion } from '../src/nodes/shared/migrations';
import type { ConfigNode, UserNode } from '../src/nodes/shared/config-node';
import type { Node, RED } from '../src/nodes/shared/node-red-api';
import { cfg, flow, helper, loadFlow, siteSteer, StatusLog, useRuntime, useSimulator } from './helpers/red';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** A stand-in for Node-RED and one node, recording every step in `log`. */
function standIn(withServer: boolean) {
  const log: string[] = [];
  const statuses: any[] = [];
  const users = new Set<UserNode>();
  let closeHandler: ((removed: boolean, done: () => void) => void) | undefined;
  let inputHandler: ((msg: any, send: any, done: any) => void) | undefined;
  const node = {
    id: 'n',
    type: 'ems-device-read',
    on(ev: string, fn: any) {
      if (ev === 'close') closeHandler = fn;
      if (ev === 'input') inputHandler = fn;
    },
    status(s: any) {
      statuses.push(s);
      log.push(`status ${JSON.stringify(s)}`);
    },
    error(e: any, m?: any) {
      log.push(`error ${e?.message ?? e}${m ? ` msg=${JSON.stringify(m)}` : ''}`);
    },
    warn() {},
    log() {},
    send(m: any) {
      log.push(`node.send ${JSON.stringify(m)}`);
    },
  } as unknown as Node;
  /** Gives the node a message; what it sends and how it ends go to `log` ("send …", "done", "done err …"). */
  const input = (msg: any) =>
    inputHandler!(
      msg,
      (m: any) => log.push(`send ${JSON.stringify(m)}`),
      (err?: Error) => log.push(err ? `done err ${err.message}` : 'done'),
    );
  const server = {
    register(u: UserNode) {
      users.add(u);
      log.push('register');
    },
    deregister(u: UserNode) {
      users.delete(u);
      log.push('deregister');
    },
    runtime: () => Promise.resolve('the runtime' as any),
  } as unknown as ConfigNode;
  let created: any;
  const RED = {
    nodes: {
      createNode(n: any, c: any) {
        created = c;
        log.push(`createNode maxSplit=${c.maxSplit} version=${c.version}`);
      },
      getNode: (id: string) => (withServer && id === 'cfg' ? server : null),
    },
    _: (k: string) => k,
  } as unknown as RED;
  const close = (removed = false) =>
    new Promise<void>((resolve) =>
      closeHandler!(removed, () => {
        log.push('done');
        resolve();
      }),
    );
  return { log, statuses, users, node, RED, close, input, created: () => created };
}

const SAVED = () => ({ id: 'n', type: 'ems-device-read', server: 'cfg', mode: 'map', version: 1 });

describe('nodes: scaffold', () => {
  it('upgrades the saved properties in place before the node is created, and keeps them as node.props', () => {
    const t = standIn(true);
    const saved = SAVED();
    const f = flowNode(t.RED, t.node, saved);
    assert.equal(t.log[0], 'createNode maxSplit=1000 version=2');
    assert.equal(t.created(), saved, "Node-RED's own copy, with its hidden _flow, is the one upgraded");
    assert.equal(f.props, saved);
    assert.equal((t.node as any).props, saved);
  });

  it('registers with the config node and shows its connection state: rate limited (yellow), error (red), nothing while all is well', () => {
    const t = standIn(true);
    const f = flowNode(t.RED, t.node, SAVED());
    assert.equal(t.users.size, 1);
    assert.equal(f.configNode(), f.server);
    const [user] = t.users;
    user.onConnectionState({ state: 'ok' } as any);
    assert.deepEqual(t.statuses, []);
    const until = Date.now() + 60_000;
    user.onConnectionState({ state: 'rate-limited', until } as any);
    user.onConnectionState({ state: 'error', reason: 'HTTP 401: check credentials' } as any);
    user.onConnectionState({ state: 'error' } as any);
    assert.deepEqual(t.statuses, [
      { fill: 'yellow', shape: 'ring', text: `rate limited until ${new Date(until).toLocaleTimeString()}` },
      { fill: 'red', shape: 'ring', text: 'HTTP 401: check credentials' },
      { fill: 'red', shape: 'ring', text: 'connection error' },
    ]);
  });

  it('without a config node: a red "no server configured" ring; configNode() and runtime() name the field server', async () => {
    const t = standIn(false);
    const f = flowNode(t.RED, t.node, { ...SAVED(), server: '' });
    assert.equal(f.server, null);
    assert.deepEqual(t.statuses, [{ fill: 'red', shape: 'ring', text: 'no server configured' }]);
    assert.throws(
      () => f.configNode(),
      (e: unknown) => e instanceof ValidationError && e.field === 'server',
    );
    await assert.rejects(f.runtime(), /server must be an ems-partner-config node/);
    await t.close();
    assert.deepEqual(t.log.slice(-2), ['status {}', 'done']);
  });

  it("closes in order: abort, deregister, clear the status, the node's own work (awaited), done(); nothing shows afterwards", async () => {
    const t = standIn(true);
    const f = flowNode(t.RED, t.node, SAVED());
    let release!: () => void;
    f.onClose((removed) => {
      t.log.push(`own work removed=${removed} aborted=${f.signal.aborted} users=${t.users.size}`);
      return new Promise<void>((r) => {
        release = r;
      });
    });
    const closed = t.close(true);
    await new Promise((r) => setImmediate(r));
    f.status.ok('late');
    f.status.error(new Error('late'));
    assert.deepEqual(
      t.log.slice(1),
      ['register', 'deregister', 'status {}', 'own work removed=true aborted=true users=0'],
      'done waits for the own work',
    );
    release();
    await closed;
    assert.equal(t.log.at(-1), 'done');
    assert.equal(t.statuses.length, 1, 'nothing after the cleared status');
  });

  it('close ends with done() even when the own work throws or rejects (reported with node.error)', async () => {
    for (const work of [
      () => {
        throw new Error('sync');
      },
      () => Promise.reject(new Error('async')),
    ]) {
      const t = standIn(true);
      const f = flowNode(t.RED, t.node, SAVED());
      f.onClose(work);
      await t.close();
      assert.deepEqual(
        t.log.slice(-2).map((l) => l.replace(/sync|async/, 'X')),
        ['error X', 'done'],
      );
    }
  });
  it("the node's signal takes one listener per read in flight without Node.js' leak warning (a poll of many devices)", async () => {
    const t = standIn(true);
    const f = flowNode(t.RED, t.node, SAVED());
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const listeners = Array.from({ length: 200 }, () => () => undefined);
      for (const l of listeners) f.signal.addEventListener('abort', l, { once: true });
      await new Promise((r) => setImmediate(r));
      for (const l of listeners) f.signal.removeEventListener('abort', l);
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(warnings, []);
    await t.close();
  });
});

describe('nodes: scaffold input pipeline (onInput)', () => {
  const tick = () => new Promise((r) => setImmediate(r));
  /** The log from the first input on (after createNode and register). */
  const after = (t: { log: string[] }, from: number) => t.log.slice(from);

  it("a synchronous answer is sent at once, then done(); a list goes out in sequence; nothing: done() alone; copy() keeps the input's fields", () => {
    const t = standIn(true);
    const f = flowNode(t.RED, t.node, SAVED());
    f.onInput((msg, { copy }) =>
      msg.payload === 'none'
        ? undefined
        : msg.payload === 'two'
          ? [copy({ payload: 1 }), copy({ payload: 2 })]
          : copy({ payload: 'out' }),
    );
    const from = t.log.length;
    t.input({ topic: 't', payload: 'in' });
    t.input({ payload: 'two' });
    t.input({ payload: 'none' });
    assert.deepEqual(after(t, from), [
      'send {"topic":"t","payload":"out"}',
      'done',
      'send [[{"payload":1},{"payload":2}]]',
      'done',
      'done',
    ]);
  });

  it('a throw or rejection ends the message in one done(err) naming the field, with a red status; nothing is sent', async () => {
    const t = standIn(true);
    const f = flowNode(t.RED, t.node, SAVED());
    f.onInput(async (msg) => {
      if (msg.payload === 'sync') throw new ValidationError('msg.payload', 'must be a number');
      await tick();
      throw new ValidationError('device', 'must be a reference');
    });
    const from = t.log.length;
    t.input({ payload: 'sync' });
    t.input({ payload: 'async' });
    await tick();
    await tick();
    assert.deepEqual(after(t, from), [
      'status {"fill":"red","shape":"ring","text":"bad msg.payload"}',
      'done err msg.payload must be a number',
      'status {"fill":"red","shape":"ring","text":"bad device"}',
      'done err device must be a reference',
    ]);
  });

  it('a reply sends its messages and then ends in its error (status left to the handler)', async () => {
    const t = standIn(true);
    const f = flowNode(t.RED, t.node, SAVED());
    f.onInput(async (_msg, { copy }) => reply(copy({ payload: 'fleet' }), new Error('2 of 3 sites failed')));
    const from = t.log.length;
    t.input({});
    await tick();
    assert.deepEqual(after(t, from), ['send {"payload":"fleet"}', 'done err 2 of 3 sites failed']);
  });

  it('ordered: each message starts once the one before ended or released its turn; a failure releases too', async () => {
    const t = standIn(true);
    const f = flowNode(t.RED, t.node, SAVED());
    const gates = new Map<string, () => void>();
    f.onInput(
      async (msg, { release }) => {
        const id = String(msg.payload);
        t.log.push(`start ${id}`);
        if (id === 'early') release();
        await new Promise<void>((r) => gates.set(id, r));
        if (id === 'bad') throw new Error('bad one');
        return { payload: id };
      },
      { ordered: true },
    );
    const from = t.log.length;
    for (const id of ['a', 'bad', 'early', 'b']) t.input({ payload: id });
    await tick();
    assert.deepEqual(after(t, from), ['start a'], 'one at a time');
    gates.get('a')!();
    await tick();
    gates.get('bad')!();
    await tick();
    assert.deepEqual(
      after(t, from).slice(1),
      [
        'send {"payload":"a"}',
        'done',
        'start bad',
        'status {"fill":"red","shape":"ring","text":"bad one"}',
        'done err bad one',
        'start early',
        'start b',
      ],
      'released by the failure; "early" released its turn before it ended',
    );
    gates.get('b')!();
    gates.get('early')!();
    await tick();
    assert.deepEqual(after(t, from).slice(-4), ['send {"payload":"b"}', 'done', 'send {"payload":"early"}', 'done']);
  });

  it('once the node closed, an answer is not sent: the message ends with done()', async () => {
    const t = standIn(true);
    const f = flowNode(t.RED, t.node, SAVED());
    let answer!: () => void;
    f.onInput(async (_msg, { signal }) => {
      await new Promise<void>((r) => {
        answer = r;
      });
      return { payload: `aborted=${signal.aborted}` };
    });
    t.input({});
    await t.close();
    const from = t.log.length;
    answer();
    await tick();
    assert.deepEqual(after(t, from), ['done']);
  });

  it('without a config node (configNode: false): no server, no "no server configured" ring; input and emit work', async () => {
    const t = standIn(false);
    const f = flowNode(t.RED, t.node, { ...SAVED(), server: undefined }, { configNode: false });
    assert.equal(f.server, null);
    assert.deepEqual(t.statuses, []);
    f.onInput((msg, { copy }) => copy({ payload: (msg.payload as number) * 2 }));
    const from = t.log.length;
    t.input({ payload: 21 });
    f.emit(() => ({ payload: 'timer' }));
    f.emit(
      () => {
        throw new Error('no prices');
      },
      { topic: 'kept' },
    );
    assert.deepEqual(after(t, from), [
      'send {"payload":42}',
      'done',
      'node.send {"payload":"timer"}',
      'status {"fill":"red","shape":"ring","text":"no prices"}',
      'error no prices msg={"topic":"kept"}',
    ]);
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
      const f = await loadFlow(
        flow({ ...node, version: 1 }, cfg(sim.s.url), {
          id: 'r',
          ...NODES['ems-device-read'],
          server: 'cfg',
          wires: [[]],
        }),
      );
      assert.equal(f.node.props.version, currentVersion(type), `the running node sees version ${currentVersion(type)}`);
      const limited = f.status.wait((s) => /^rate limited until /.test(s.text ?? ''), 5_000, 'rate limited');
      sim.s.sim.setFaults({ rate429: 1, retryAfterSeconds: 0 });
      helper.getNode('r').receive({});
      assert.equal((await limited).fill, 'yellow');

      await f.node.close(true);
      await new Promise((r) => setImmediate(r)); // the helper reports each status a tick later
      const after = f.status.all.length;
      assert.deepEqual(f.status.all.at(-1), {}, 'cleared on close');
      // A 500 changes the connection state to an error: the other node hears of it, the closed one not.
      sim.s.sim.setFaults({ rate429: 0, rate500: 1 });
      const other = new StatusLog(helper.getNode('r'));
      helper.getNode('r').receive({});
      await other.wait((s) => s.text === 'HTTP 500', 5_000, 'the connection state on the other node');
      await new Promise((r) => setImmediate(r));
      assert.equal(f.status.all.length, after, 'a closed node is deregistered: no state reaches it');
    });
  }
});
