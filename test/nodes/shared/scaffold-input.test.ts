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
import { reply } from '../../../src/nodes/shared/messages';
import { SAVED, standIn } from './stand-in';

describe('nodes: scaffold input pipeline (onInput)', () => {
  const tick = () => new Promise((r) => setImmediate(r));
  /** The log from the first input on (after createNode and register). */
  const after = (t: { log: string[] }, from: number) => t.log.slice(from);

  it("a synchronous answer is sent at once, then done(); a list goes out in sequence; nothing: done() alone; copy() keeps the input's fields", () => {
    const fake = standIn(true);
    const scaffold = flowNode(fake.RED, fake.node, SAVED());
    scaffold.onInput((msg, { copy }) =>
      msg.payload === 'none'
        ? undefined
        : msg.payload === 'two'
          ? [copy({ payload: 1 }), copy({ payload: 2 })]
          : copy({ payload: 'out' }),
    );
    const from = fake.log.length;
    fake.input({ topic: 't', payload: 'in' });
    fake.input({ payload: 'two' });
    fake.input({ payload: 'none' });
    assert.deepEqual(after(fake, from), [
      'send {"topic":"t","payload":"out"}',
      'done',
      'send [[{"payload":1},{"payload":2}]]',
      'done',
      'done',
    ]);
  });

  it('a throw or rejection ends the message in one done(err) naming the field, with a red status; nothing is sent', async () => {
    const fake = standIn(true);
    const scaffold = flowNode(fake.RED, fake.node, SAVED());
    scaffold.onInput(async (msg) => {
      if (msg.payload === 'sync') throw new ValidationError('msg.payload', 'must be a number');
      await tick();
      throw new ValidationError('device', 'must be a reference');
    });
    const from = fake.log.length;
    fake.input({ payload: 'sync' });
    fake.input({ payload: 'async' });
    await tick();
    await tick();
    assert.deepEqual(after(fake, from), [
      'status {"fill":"red","shape":"ring","text":"bad msg.payload"}',
      'done err msg.payload must be a number',
      'status {"fill":"red","shape":"ring","text":"bad device"}',
      'done err device must be a reference',
    ]);
  });

  it('a reply sends its messages and then ends in its error (status left to the handler)', async () => {
    const fake = standIn(true);
    const scaffold = flowNode(fake.RED, fake.node, SAVED());
    scaffold.onInput(async (_msg, { copy }) => reply(copy({ payload: 'fleet' }), new Error('2 of 3 sites failed')));
    const from = fake.log.length;
    fake.input({});
    await tick();
    assert.deepEqual(after(fake, from), ['send {"payload":"fleet"}', 'done err 2 of 3 sites failed']);
  });

  it('ordered: each message starts once the one before ended or released its turn; a failure releases too', async () => {
    const fake = standIn(true);
    const scaffold = flowNode(fake.RED, fake.node, SAVED());
    const gates = new Map<string, () => void>();
    scaffold.onInput(
      async (msg, { release }) => {
        const id = String(msg.payload);
        fake.log.push(`start ${id}`);
        if (id === 'early') release();
        await new Promise<void>((r) => gates.set(id, r));
        if (id === 'bad') throw new Error('bad one');
        return { payload: id };
      },
      { ordered: true },
    );
    const from = fake.log.length;
    for (const id of ['a', 'bad', 'early', 'b']) fake.input({ payload: id });
    await tick();
    assert.deepEqual(after(fake, from), ['start a'], 'one at a time');
    gates.get('a')!();
    await tick();
    gates.get('bad')!();
    await tick();
    assert.deepEqual(
      after(fake, from).slice(1),
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
    assert.deepEqual(after(fake, from).slice(-4), ['send {"payload":"b"}', 'done', 'send {"payload":"early"}', 'done']);
  });

  it('once the node closed, an answer is not sent: the message ends with done()', async () => {
    const fake = standIn(true);
    const scaffold = flowNode(fake.RED, fake.node, SAVED());
    let answer!: () => void;
    scaffold.onInput(async (_msg, { signal }) => {
      await new Promise<void>((r) => {
        answer = r;
      });
      return { payload: `aborted=${signal.aborted}` };
    });
    fake.input({});
    await fake.close();
    const from = fake.log.length;
    answer();
    await tick();
    assert.deepEqual(after(fake, from), ['done']);
  });

  it('without a config node (configNode: false): no server, no "no server configured" ring; input and emit work', async () => {
    const fake = standIn(false);
    const scaffold = flowNode(fake.RED, fake.node, { ...SAVED(), server: undefined }, { configNode: false });
    assert.equal(scaffold.server, null);
    assert.deepEqual(fake.statuses, []);
    scaffold.onInput((msg, { copy }) => copy({ payload: (msg.payload as number) * 2 }));
    const from = fake.log.length;
    fake.input({ payload: 21 });
    scaffold.emit(() => ({ payload: 'timer' }));
    scaffold.emit(
      () => {
        throw new Error('no prices');
      },
      { topic: 'kept' },
    );
    assert.deepEqual(after(fake, from), [
      'send {"payload":42}',
      'done',
      'node.send {"payload":"timer"}',
      'status {"fill":"red","shape":"ring","text":"no prices"}',
      'error no prices msg={"topic":"kept"}',
    ]);
  });
});
