import assert from 'node:assert/strict';
import { BUILT_IN_SITES, DEFAULT_SITES } from '../../../src/simulator/index';
import {
  cfg,
  flow,
  helper,
  loadFlow,
  resources,
  StatusLog,
  trackTimers,
  turns,
  useRuntime,
  useSimulator,
} from '../../helpers/red';
import { read, series, steer } from '../../helpers/battery-nodes';

const COM = DEFAULT_SITES[0];
const BAT = COM.battery.deviceReference;

describe('nodes: ems-partner-config', () => {
  describe('built-in simulator', () => {
    useRuntime();
    it('simulator: true reads and steers with no URL and no key', async () => {
      const deployed = await loadFlow(
        flow(
          read({ mode: 'devices' }),
          { id: 'cfg', type: 'ems-partner-config', simulator: true, baseUrl: '', authType: 'header' },
          { id: 's', ...steer(), server: 'cfg', wires: [['out']] },
        ),
      );
      const devices = await deployed.ask();
      assert.ok(devices.payload.some((d: { deviceReference: string }) => d.deviceReference === BAT));
      const nextOut = deployed.out.next();
      helper.getNode('s').receive({ payload: -1 });
      const reply = await nextOut;
      assert.match(reply.payload.requestId, /^req_[0-9a-f]{16}$/);
      assert.equal(reply.request.path, `/sites/${COM.siteReference}/steering/ess`);
      const res = await helper.request().post('/ems-partner/test').send({ server: 'cfg' });
      assert.equal(res.body.ok, true);
      // The built-in simulator: the default sites and the steering examples' own, three devices each.
      assert.match(
        res.body.message,
        new RegExp(`^connected to 127\\.0\\.0\\.1:\\d+: ${3 * BUILT_IN_SITES.length} devices$`),
      );
    });

    it('GET ems-partner/simulator gives the URL the config node reads from', async () => {
      await loadFlow(flow(read({ mode: 'devices' }), { id: 'cfg', type: 'ems-partner-config', simulator: true }));
      const rt = await helper.getNode('cfg').runtime();
      const res = await helper.request().get('/ems-partner/simulator').expect(200);
      assert.deepEqual(res.body, { running: true, url: rt.baseUrl });
      assert.match(rt.baseUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    });
  });

  describe('connection state and shutdown', () => {
    const sim = useSimulator({ frozen: false });
    useRuntime();
    afterEach(() => {
      sim.s.sim.setFaults({ rate429: 0 });
    });

    it('a 429 shows as rate limited on every node that uses the config', async () => {
      const deployed = await loadFlow(
        flow(
          read(),
          cfg(sim.s.url),
          { id: 'ts', ...series(), server: 'cfg', wires: [['out']] },
          { id: 'st', ...steer(), server: 'cfg', wires: [['out']] },
        ),
      );
      const others = ['ts', 'st'].map((id) => new StatusLog(helper.getNode(id)));
      const limited = others.map((s) =>
        s.wait((x) => /^rate limited until /.test(x.text ?? ''), 5_000, 'rate limited'),
      );
      sim.s.sim.setFaults({ rate429: 1, retryAfterSeconds: 1 });
      const caught = await deployed.fails();
      assert.match(caught.error.message, /HTTP 429/);
      for (const s of await Promise.all(limited)) assert.equal(s.fill, 'yellow');
    });

    it('closes cleanly on redeploy: no timers or sockets left, polling and renewing stop', async () => {
      const sockets = resources().TCPSocketWrap ?? 0;
      const timers = trackTimers();
      try {
        const deployed = await loadFlow(
          flow(read({ interval: 0.05 }), cfg(sim.s.url), {
            id: 'st',
            ...steer({ validity: 'duration', duration: 1, renew: true }),
            server: 'cfg',
            wires: [['out']],
          }),
        );
        await deployed.out.count(2);
        const nextOut = deployed.out.next();
        helper.getNode('st').receive({ payload: 2 });
        await nextOut;
        assert.ok(
          timers.alive().some((s) => s.includes('poll-scheduler')),
          'the poll timer runs',
        );
        assert.ok(
          timers.alive().some((s) => s.includes('renewal')),
          'the renewal timer runs',
        );
        assert.ok((resources().TCPSocketWrap ?? 0) > sockets, 'a keep-alive connection is open');
        const warnings: unknown[] = [];
        helper.getNode('st').warn = (w: unknown) => warnings.push(w); // the helper's spies go before close
        await helper.unload();
        const received = sim.s.sim.requestsReceived;
        await turns(); // destroy hooks and socket closes are reported a turn later
        assert.deepEqual(timers.alive(), []);
        assert.equal(resources().TCPSocketWrap ?? 0, sockets, 'keep-alive sockets closed');
        assert.equal(sim.s.sim.requestsReceived, received);
        assert.deepEqual(warnings, [], 'nothing was queued to drop');
      } finally {
        timers.stop();
      }
    });

    it('a node with no config node reports it on input and closes at once', async () => {
      const deployed = await loadFlow(
        flow(
          steer({ server: 'missing' }),
          cfg(sim.s.url),
          { id: 'r2', ...read(), server: 'missing', wires: [['out']] },
          { id: 't2', ...series(), server: 'missing', wires: [['out']] },
        ),
      );
      assert.match((await deployed.fails({ payload: 1 })).error.message, /server must be an ems-partner-config node/);
      for (const id of ['r2', 't2']) {
        const nextCaught = deployed.caught.next();
        helper.getNode(id).receive({});
        assert.match((await nextCaught).error.message, /server must be an ems-partner-config node/);
      }
      // Node-RED waits 15 s for a close that never calls done, then goes on: the unload must end
      // long before that, and the verdict is awaited here (not asserted later from a timer).
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<'hung'>((resolve) => {
        timer = setTimeout(() => resolve('hung'), 5_000);
      });
      const ended = await Promise.race([helper.unload().then(() => 'closed' as const), bound]);
      clearTimeout(timer);
      assert.equal(ended, 'closed', 'close did not finish within 5 s (Node-RED gives up at 15 s)');
    });
  });
});
