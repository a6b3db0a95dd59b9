import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { HOLD_MS } from '../../../src/nodes/shared/status';
import { SentHold } from '../../../src/nodes/site-steer/sent-hold';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { cfg, flow, loadFlow, siteSteer, useRuntime, useSimulator } from '../../helpers/red';

describe('nodes: ems-site-steer status of overlapping messages (SentHold)', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => (clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] })));
  afterEach(() => clock.uninstall());

  it('a lone message shows "sending" and its result at once', () => {
    const hold = new SentHold();
    const shown: string[] = [];
    hold.start(() => shown.push('sending 1'));
    hold.sent(() => shown.push('sent 1'));
    assert.deepEqual(shown, ['sending 1', 'sent 1']);
  });

  it('overlapping: "sending" once; results held, the latest shown when the last message ends', () => {
    const hold = new SentHold();
    const shown: string[] = [];
    for (let i = 1; i <= 3; i++) hold.start(() => shown.push(`sending ${i}`));
    hold.sent(() => shown.push('sent 1'));
    hold.sent(() => shown.push('sent 2'));
    assert.deepEqual(shown, ['sending 1']);
    hold.sent(() => shown.push('sent 3'));
    assert.deepEqual(shown, ['sending 1', 'sent 3']);
    clock.tick(HOLD_MS * 2);
    assert.deepEqual(shown, ['sending 1', 'sent 3'], 'nothing held is shown again');
  });

  it('a result held while others stay under way shows HOLD_MS after it was first held', () => {
    const hold = new SentHold();
    const shown: string[] = [];
    for (let i = 1; i <= 3; i++) hold.start(() => shown.push(`sending ${i}`));
    hold.sent(() => shown.push('sent 1'));
    clock.tick(HOLD_MS / 2);
    hold.sent(() => shown.push('sent 2'));
    clock.tick(HOLD_MS / 2 - 1);
    assert.deepEqual(shown, ['sending 1']);
    clock.tick(1);
    assert.deepEqual(shown, ['sending 1', 'sent 2']);
  });

  it('a failure drops the held result: the error status (shown by the caller) stays the last', () => {
    const hold = new SentHold();
    const shown: string[] = [];
    hold.start(() => shown.push('sending 1'));
    hold.start(() => shown.push('sending 2'));
    hold.sent(() => shown.push('sent 1'));
    hold.failed();
    clock.tick(HOLD_MS * 2);
    assert.deepEqual(shown, ['sending 1']);
    hold.start(() => shown.push('sending 3'));
    assert.deepEqual(shown, ['sending 1', 'sending 3'], 'nothing is under way after the failure');
  });

  it('another status of the node (drop) replaces the held result', () => {
    const hold = new SentHold();
    const shown: string[] = [];
    hold.start(() => shown.push('sending 1'));
    hold.start(() => shown.push('sending 2'));
    hold.sent(() => shown.push('sent 1'));
    hold.drop();
    clock.tick(HOLD_MS * 2);
    assert.deepEqual(shown, ['sending 1']);
    hold.sent(() => shown.push('sent 2'));
    assert.deepEqual(shown, ['sending 1', 'sent 2']);
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
