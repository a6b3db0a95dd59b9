import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { english, HOLD_MS, Status } from '../../../src/nodes/shared/status';
import { SentHold } from '../../../src/nodes/site-steer/sent-hold';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { cfg, flow, loadFlow, siteSteer, useRuntime, useSimulator } from '../../helpers/red';

describe('nodes: ems-site-steer status of overlapping messages (SentHold)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => (clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] })));
  afterEach(() => clock.uninstall());

  /** A SentHold on a node's Status; `shown` is what the node showed, by text. */
  function setup() {
    const shown: string[] = [];
    const status = new Status(
      { status: (s: { text?: string }) => shown.push(String(s.text)) },
      english('ems-site-steer'),
    );
    const hold = new SentHold(status);
    return { shown, status, hold, show: (text: string) => () => status.sent(text) };
  }

  it('a lone message shows "sending" and its result at once', () => {
    const { shown, status, hold, show } = setup();
    hold.start(() => status.busy('sending 1'));
    hold.sent(show('sent 1'));
    assert.deepEqual(shown, ['sending 1', 'sent 1']);
  });

  it('overlapping: "sending" once; results held, the latest shown when the last message ends', () => {
    const { shown, status, hold, show } = setup();
    for (let i = 1; i <= 3; i++) hold.start(() => status.busy(`sending ${i}`));
    hold.sent(show('sent 1'));
    hold.sent(show('sent 2'));
    assert.deepEqual(shown, ['sending 1']);
    hold.sent(show('sent 3'));
    assert.deepEqual(shown, ['sending 1', 'sent 3']);
    clock.tick(HOLD_MS * 2);
    assert.deepEqual(shown, ['sending 1', 'sent 3'], 'nothing held is shown again');
  });

  it('a result held while others stay under way shows HOLD_MS after it was first held', () => {
    const { shown, status, hold, show } = setup();
    for (let i = 1; i <= 3; i++) hold.start(() => status.busy(`sending ${i}`));
    hold.sent(show('sent 1'));
    clock.tick(HOLD_MS / 2);
    hold.sent(show('sent 2'));
    clock.tick(HOLD_MS / 2 - 1);
    assert.deepEqual(shown, ['sending 1']);
    clock.tick(1);
    assert.deepEqual(shown, ['sending 1', 'sent 2']);
  });

  it('a failure: its error status replaces the held result, which never shows', () => {
    const { shown, status, hold, show } = setup();
    hold.start(() => status.busy('sending 1'));
    hold.start(() => status.busy('sending 2'));
    hold.sent(show('sent 1'));
    hold.failed();
    status.failing('failed 2');
    clock.tick(HOLD_MS * 2);
    assert.deepEqual(shown, ['sending 1', 'failed 2']);
    hold.start(() => status.busy('sending 3'));
    assert.deepEqual(shown, ['sending 1', 'failed 2', 'sending 3'], 'nothing is under way after the failure');
  });

  it('any other status of the node (standby, a stop, a renewal) replaces the held result', () => {
    const { shown, status, hold, show } = setup();
    hold.start(() => status.busy('sending 1'));
    hold.start(() => status.busy('sending 2'));
    hold.sent(show('sent 1'));
    status.standby('node-red-b', 'site-1');
    clock.tick(HOLD_MS * 2);
    assert.equal(shown.length, 2);
    assert.match(shown[1], /node-red-b/);
    hold.sent(show('sent 2'));
    assert.deepEqual(shown.slice(2), ['sent 2']);
  });

  it('closing the node drops the held result and its timer', () => {
    const { shown, status, hold, show } = setup();
    hold.start(() => status.busy('sending 1'));
    hold.start(() => status.busy('sending 2'));
    hold.sent(show('sent 1'));
    status.close();
    clock.tick(HOLD_MS * 2);
    assert.equal(clock.countTimers(), 0);
    assert.equal(shown.includes('sent 1'), false);
  });
});

describe('nodes: ems-site-steer status while messages overlap', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();
  beforeEach(() => sim.s.sim.reset());
  const site = DEFAULT_SITES[0].siteReference;

  it('messages sent at once: the status is not set twice per message, and the last one names the last request', async () => {
    const deployed = await loadFlow(flow(siteSteer(site), cfg(sim.s.url)));
    const count = 8;
    for (let i = 1; i <= count; i++) deployed.send({ payload: -i });
    await deployed.out.count(count);
    const texts = deployed.status.all.map((s) => String(s.text));
    const sending = texts.filter((t) => t.startsWith('sending'));
    const sent = texts.filter((t) => t.startsWith('sent'));
    assert.ok(sending.length < count, `"sending" ${sending.length} times for ${count} overlapping messages`);
    assert.ok(sent.length < count, `"sent" ${sent.length} times for ${count} overlapping messages`);
    assert.match(texts.at(-1)!, new RegExp(`^sent ESS −${count} kW until \\d\\d:\\d\\d$`));
    assert.equal(deployed.status.all.at(-1).fill, 'green');
  });
});
