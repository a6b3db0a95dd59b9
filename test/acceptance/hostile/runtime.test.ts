/**
 * The hostile service in a running Node-RED: a config node (simulator off) on a
 * hostile service that answers {}, null, HTML, broken JSON, 204, "NaN", an endless, a 200 MB
 * or a dripping body. Node-RED keeps running (no unhandled rejection, no uncaught exception),
 * every message ends in exactly one Catch-able error (or, for a steering answer without a
 * body, one output), the admin route answers with an error, and the heap comes back.
 */
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { helper, NODES, Inbox, until, useRuntime } from '../../helpers/red';
import { useCrashWatch } from '../../helpers/faults';
import { startHostile, type HostileMode, type HostileServer } from '../../helpers/hostile-server';
import { delivered, watchOwnTimers, watchPushes } from '../../helpers/barrier';
import { idleTurns, realTurns } from '../../helpers/real-turns';
import FakeTimers from '@sinonjs/fake-timers';

const DEV = 'dvc_a';
const at = { z: 'tab', x: 100, y: 100 };

/** Node ids under test, and what a message to each must end in, by mode. */
const READS = ['single', 'map', 'list', 'series'];
const STEER = 'steer';
/** Modes in which the steering answer is acceptable (an object or no body). */
const STEER_OK: HostileMode[] = ['empty-object', 'no-content', 'nan'];
const MODES: HostileMode[] = [
  'empty-object',
  'null',
  'html',
  'broken-json',
  'no-content',
  'nan',
  'endless',
  'drip',
  'huge',
  'flood',
];

/** What the error of a read says, by mode. */
const SAYS: Record<string, RegExp> = {
  'empty-object': /answered 200 with no /,
  null: /answered 200 with null, expected/,
  html: /answered 200 with an HTML page, expected/,
  'broken-json': /answered 200 with broken or cut-off JSON, expected/,
  'no-content': /answered 204 with no body, expected/,
  nan: /"NaN" \(a string, not a finite number\)/,
  endless: /timed out after 300 ms \(ETIMEDOUT\)/,
  drip: /timed out after 300 ms \(ETIMEDOUT\)/,
  huge: /over the limit of 1 MB \(maxBodyMB\)/,
  flood: /over the limit of 1 MB \(maxBodyMB\)/,
};

type Timers = ReturnType<typeof watchOwnTimers>;

/**
 * The point after which no answer to the messages sent so far can still come. A late answer
 * needs something still running: a request of the config node's client (its response, body or
 * deadline), a queued steering command, or a timer of the package. None is: no request holds
 * or awaits a slot, no steering is queued, and once a sentinel sent now by each node in `paths`
 * reached its inbox (Node-RED delivers in order: every answer sent before it has arrived, and
 * the timers cleared before it are reported gone), no timer that src/ set is pending.
 */
async function settled(timers: Timers, paths: Array<[node: any, inbox: Inbox]>): Promise<void> {
  const rt = await helper.getNode('cfg').runtime();
  assert.equal(rt.client.transport.limiter.inFlight, 0, 'no request in flight');
  assert.equal(rt.client.transport.limiter.queued, 0, 'no request waiting for a slot');
  assert.equal(rt.steering.queued(), 0, 'no steering queued');
  await delivered(paths);
  assert.deepEqual(timers.pending(), [], 'no timer of the package pending');
}

function gcFunction(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

describe('hostile service in a running Node-RED', function () {
  this.timeout(120_000);
  useRuntime();
  const crashes = useCrashWatch();
  let timers: Timers; // the package's timers, watched from before each flow is loaded
  beforeEach(() => {
    timers = watchOwnTimers();
  });
  afterEach(() => {
    timers.stop();
  });
  let hostile: HostileServer;
  before(async () => {
    hostile = await startHostile({ dripMs: 1000, trickleMs: 5 });
  });
  after(async () => {
    await hostile?.close();
  });

  it('every message ends in exactly one Catch-able error, Node-RED keeps running, the heap comes back', async () => {
    await helper.load(NODES, [
      { id: 'tab', type: 'tab', label: 'hostile' },
      // retries 0 and a 300 ms wall-clock deadline keep the run short; maxBodyMB 1 (the client's default of 10 MB is tested in hostile-client).
      {
        id: 'cfg',
        type: 'ems-partner-config',
        baseUrl: hostile.url,
        simulator: false,
        authType: 'none',
        retries: 0,
        timeout: 300,
        coalesceMs: 20,
        maxBodyMB: 1,
      },
      {
        id: 'single',
        ...at,
        type: 'ems-device-read',
        server: 'cfg',
        device: DEV,
        deviceType: 'str',
        mode: 'single',
        properties: 'soc',
        propertiesType: 'str',
        wires: [['out']],
      },
      {
        id: 'map',
        ...at,
        type: 'ems-device-read',
        server: 'cfg',
        device: DEV,
        deviceType: 'str',
        mode: 'map',
        properties: 'soc,power',
        propertiesType: 'str',
        wires: [['out']],
      },
      {
        id: 'list',
        ...at,
        type: 'ems-device-read',
        server: 'cfg',
        device: DEV,
        deviceType: 'str',
        mode: 'list',
        properties: 'power',
        propertiesType: 'str',
        split: true,
        wires: [['out']],
      },
      {
        id: 'series',
        ...at,
        type: 'ems-time-series',
        server: 'cfg',
        device: DEV,
        deviceType: 'str',
        property: 'soc',
        propertyType: 'str',
        range: 'last',
        last: 3,
        lastUnit: 'hours',
        resolution: 1,
        output: 'points',
        wires: [['out']],
      },
      {
        id: STEER,
        ...at,
        type: 'ems-site-steer',
        server: 'cfg',
        site: 'ste_a',
        siteType: 'str',
        mode: 'ess',
        essValue: 'payload',
        essValueType: 'msg',
        essUnit: 'kW',
        validity: 'quarter-hour',
        wires: [['out']],
      },
      { id: 'out', ...at, type: 'helper', wires: [] },
      { id: 'c', ...at, type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', ...at, type: 'helper', wires: [] },
    ]);
    const out = new Inbox(helper.getNode('out'));
    const caught = new Inbox(helper.getNode('caught'));
    let seq = 0;

    /** One round in a mode: the three reads together (merged by the coalescer), then a lone read, the series and a steer. */
    const round = async (mode: HostileMode) => {
      hostile.mode = mode;
      const sent: Array<{ seq: number; node: string }> = [];
      const send = (node: string, msg: Record<string, unknown> = {}) => {
        const message = { ...msg, seq: ++seq, mode };
        sent.push({ seq: message.seq, node });
        helper.getNode(node).receive(message);
      };
      for (const id of ['single', 'map', 'list']) send(id);
      await until(
        [out, caught],
        () => answered(sent) >= 3,
        15_000,
        () => `merged reads in ${mode}`,
      );
      send('single');
      send('series');
      send(STEER, { payload: 5 });
      await until(
        [out, caught],
        () => answered(sent) >= sent.length,
        15_000,
        () => `${sent.length} answers in ${mode}; got ${answered(sent)}`,
      );
      await settled(timers, [
        [helper.getNode('single'), out],
        [helper.getNode('c'), caught],
      ]); // a second answer to any message has arrived by now
      for (const s of sent) {
        const errs = caught.msgs.filter((m) => m.seq === s.seq);
        const outs = out.msgs.filter((m) => m.seq === s.seq);
        if (s.node === STEER && STEER_OK.includes(mode)) {
          assert.equal(errs.length, 0, `${mode}: steer has no error`);
          assert.equal(outs.length, 1, `${mode}: steer has one output`);
          continue;
        }
        assert.equal(
          outs.length,
          0,
          `${mode}: ${s.node} sent no output (${JSON.stringify(outs[0]?.payload)?.slice(0, 80)})`,
        );
        assert.equal(errs.length, 1, `${mode}: ${s.node} ended in exactly one error`);
        const text = errs[0].error.message as string;
        if (s.node !== STEER && s.node !== 'series')
          assert.match(text, /^(\w+Error: )?GET \/devices\/dvc_a\/measurement/, `${mode}: ${text}`);
        if (READS.includes(s.node)) assert.match(text, SAYS[mode], `${mode}: ${s.node}: ${text}`);
      }
    };
    const answered = (sent: Array<{ seq: number }>) => {
      const ids = new Set(sent.map((s) => s.seq));
      return out.msgs.filter((m) => ids.has(m.seq)).length + caught.msgs.filter((m) => ids.has(m.seq)).length;
    };

    const gc = gcFunction();
    for (const mode of MODES) await round(mode); // warm-up: every code path loaded once
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < 2; i++) for (const mode of MODES) await round(mode);
    // The admin route (read permission) on the same hostile answers: an error reply, no crash.
    for (const mode of ['html', 'huge', 'drip', 'null'] as HostileMode[]) {
      hostile.mode = mode;
      const res = await helper.request().post('/ems-partner/devices').send({ server: 'cfg' });
      assert.ok(res.status >= 400, `admin route in ${mode}: ${res.status}`);
      assert.doesNotMatch(JSON.stringify(res.body), /<html|<title/i, 'no raw page relayed');
    }
    await settled(timers, [
      [helper.getNode('single'), out],
      [helper.getNode('c'), caught],
    ]); // nothing of the rounds still running
    out.msgs.length = 0;
    caught.msgs.length = 0;
    gc();
    const grown = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
    console.log(
      `      heap after 2 x ${MODES.length} hostile rounds: ${grown >= 0 ? '+' : ''}${grown.toFixed(1)} MB; ${hostile.received.length} requests received`,
    );
    assert.ok(grown < 20, `heap grew by ${grown.toFixed(1)} MB`);
    assert.deepEqual(crashes.events, [], 'no unhandled rejection or uncaught exception');
    assert.equal(helper.getNode('cfg')?.type, 'ems-partner-config', 'Node-RED and the flow are still running');
  });

  it('six dripping reads hold every slot for one deadline at most: a steering command goes out after it', async () => {
    let clock: ReturnType<typeof FakeTimers.install> | undefined;
    hostile.mode = 'drip';
    hostile.override(/^\/sites\//, 'ok');
    const log = watchPushes(hostile.received);
    try {
      await helper.load(NODES, [
        { id: 'tab', type: 'tab', label: 'drip' },
        {
          id: 'cfg',
          type: 'ems-partner-config',
          baseUrl: hostile.url,
          simulator: false,
          authType: 'none',
          retries: 0,
          timeout: 300,
          concurrency: 6,
        },
        {
          id: 'read',
          ...at,
          type: 'ems-device-read',
          server: 'cfg',
          device: DEV,
          deviceType: 'str',
          mode: 'single',
          properties: 'soc',
          propertiesType: 'str',
          wires: [['out']],
        },
        {
          id: STEER,
          ...at,
          type: 'ems-site-steer',
          server: 'cfg',
          site: 'ste_a',
          siteType: 'str',
          mode: 'ess',
          essValue: 'payload',
          essValueType: 'msg',
          essUnit: 'kW',
          validity: 'quarter-hour',
          wires: [['out']],
        },
        { id: 'out', ...at, type: 'helper', wires: [] },
        { id: 'c', ...at, type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
        { id: 'caught', ...at, type: 'helper', wires: [] },
      ]);
      const out = new Inbox(helper.getNode('out'));
      const caught = new Inbox(helper.getNode('caught'));
      // The attempts' deadlines on a fake clock (Node-RED delivers with setImmediate; the drip's bytes come in real time).
      clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'], now: 0 });
      // Six devices, so the coalescer cannot merge them: six requests, six slots.
      const before = hostile.received.length;
      for (let i = 1; i <= 6; i++) helper.getNode('read').receive({ seq: i, deviceReference: `dvc_${i}` });
      // The server got all six: each holds its slot until its 300 ms deadline (the drip sends nothing before 1 s).
      await realTurns(
        () => hostile.received.slice(before).filter((r) => r.path.endsWith('/measurement')).length >= 6,
        'six reads at the server',
      );
      const rt = await helper.getNode('cfg').runtime();
      assert.equal(rt.client.transport.limiter.inFlight, 6, 'the drips hold every slot');
      const answered = () => out.msgs.some((m) => m.seq === 7) || caught.msgs.some((m) => m.seq === 7);
      helper.getNode(STEER).receive({ seq: 7, payload: 3 });
      await clock.tickAsync(299);
      await idleTurns();
      assert.equal(answered(), false, "no slot is free before the drips' deadline");
      await clock.tickAsync(1);
      await realTurns(answered, 'the steering answer');
      assert.equal(clock.now, 300, 'the command waited one deadline (300 ms) behind the drips, no more');
      assert.equal(out.msgs.find((m) => m.seq === 7)?.payload?.requestId, 'req_1', 'the command was answered');
      await realTurns(() => caught.msgs.length >= 6, 'six timeouts');
      clock.uninstall();
      clock = undefined;
      await settled(timers, [
        [helper.getNode('read'), out],
        [helper.getNode(STEER), out],
        [helper.getNode('c'), caught],
      ]); // a second error would have arrived
      assert.deepEqual(
        caught.msgs.map((m) => m.seq).sort(),
        [1, 2, 3, 4, 5, 6],
        'each read ended in exactly one error',
      );
      for (const m of caught.msgs) assert.match(m.error.message, /timed out after 300 ms \(ETIMEDOUT\)/);
      assert.deepEqual(crashes.events, []);
    } finally {
      clock?.uninstall();
      log.restore();
      hostile.clearOverrides();
    }
  });
});
