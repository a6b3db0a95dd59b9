/**
 * Backoff on a polling ems-device-read: against a dead port it backs off (tries
 * 2, 4, 8, then every 10 intervals apart), logs the same error once (not on every poll), shows
 * the backoff in its status, and is back at its interval as soon as the service answers again.
 *
 * Attempts are counted by order, not timed: a witness poller in the same group of the node's
 * PollScheduler runs once per turn, so the witness runs between two attempts are the gap in
 * turns. (The minute of the log throttle and the schedule on fake timers: test/runtime/poll-scheduler.test.ts.)
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { startSimulator, DEFAULT_SITES, type StartedSimulator } from '../../../src/simulator/index';
import { useCrashWatch } from '../../helpers/faults';
import { NODES, callsOf, cfg, flow, helper, loadFlow, trackTimers, turns, useRuntime } from '../../helpers/red';

const BAT = DEFAULT_SITES[0].battery.deviceReference;
const INTERVAL_S = 0.05;

/** A port on 127.0.0.1 that refuses connections (opened, then closed). */
async function deadPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

/** Gaps, in witness turns, between consecutive attempts (A) that both came after the witness joined (J). */
function gaps(events: string[]): number[] {
  const out: number[] = [];
  let seen = -1;
  let waits = 0;
  for (const e of events.slice(Math.max(0, events.indexOf('J')))) {
    if (e === 'W') waits++;
    else if (e === 'A') {
      if (seen >= 0) out.push(waits - seen);
      seen = waits;
    }
  }
  return out;
}

describe('nodes: polling backoff against a dead port', function () {
  this.timeout(30_000);
  useRuntime();
  const crashes = useCrashWatch();
  let sim: StartedSimulator | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  it('tries 2, 4, 8, 10, 10 intervals apart, logs the error once, shows the wait; back to every interval when the service answers', async () => {
    const port = await deadPort();
    const timers = trackTimers();
    try {
      const deployed = await loadFlow(
        flow(
          {
            type: 'ems-device-read',
            device: BAT,
            deviceType: 'str',
            mode: 'map',
            properties: 'soc',
            propertiesType: 'str',
            interval: INTERVAL_S,
          },
          cfg(`http://127.0.0.1:${port}`, { coalesceMs: 0 }),
        ),
      );
      const events: string[] = [];
      const config = helper.getNode('cfg');
      const rt = await config.runtime();
      // Every try is one read through the config node's client (coalescing off), made in the poll's turn.
      const read = rt.client.read.bind(rt.client);
      rt.client.read = ((...a: Parameters<typeof read>) => {
        events.push('A');
        return read(...a);
      }) as typeof read;
      events.push('J');
      rt.polls.add(INTERVAL_S * 1000, () => {
        events.push('W');
      });
      const failed = (s: { text?: string }) => /^unreachable, next try in [\d.]+ s$/.test(s.text ?? '');

      // Down: wait for the tries until two gaps of 10 turns were seen.
      await deployed.status.count(failed, 1);
      while (gaps(events).filter((g) => g === 10).length < 2) await deployed.status.wait(failed);
      const down = gaps(events);
      // 2, 4, 8, 10, 10, ... (or a tail of it, should the first tries come before the witness joined).
      assert.ok([2, 4, 8, 10].includes(down[0]) && down.length >= 3, `gaps ${down.join(', ')}`);
      assert.deepEqual(
        down,
        down.map((_, i) => Math.min(10, down[0] * 2 ** i)),
      );
      const st = deployed.status.all.filter(failed);
      assert.ok(st.every((s) => s.fill === 'red' && s.shape === 'ring'));
      assert.match(st.at(-1).text, /^unreachable, next try in 0\.[45] s$/, 'the last wait is 10 intervals (0.5 s)');

      // The same error, logged once (Catch-able, with an empty message), not on every try.
      const tries = events.filter((e) => e === 'A').length;
      assert.ok(tries >= 6, `${tries} tries`);
      const errors = callsOf('error', 'n');
      assert.equal(errors.length, 1, `${errors.length} errors logged for ${tries} failed tries`);
      assert.match(String(errors[0][0]), new RegExp(`ECONNREFUSED`));
      assert.equal(deployed.caught.msgs.length, 1);
      assert.equal(deployed.out.msgs.length, 0);

      // The service comes back on that port: the next try reads, and then every turn does.
      sim = await startSimulator({ port });
      const mark = events.length;
      await deployed.out.count(6);
      const up = gaps(events.slice(mark));
      assert.ok(up.length >= 5, `gaps after recovery ${up.join(', ')}`);
      assert.deepEqual(up.slice(0, 5), [1, 1, 1, 1, 1]);
      assert.equal(deployed.out.msgs[0].deviceReference, BAT);
      assert.equal(deployed.status.all.at(-1).fill, 'green');
      assert.equal(callsOf('error', 'n').length, 1, 'no further error');

      // Shutdown leaves no timer of the package.
      await helper.unload();
      await turns();
      assert.deepEqual(timers.alive(), []);
      assert.deepEqual(crashes.events, []);
      await helper.load(NODES, []);
    } finally {
      timers.stop();
    }
  });

  it('backs off on 5xx and bad answers too, logs each new error text at once, and not on a refusal of its own request (404)', async () => {
    let answer: (res: http.ServerResponse) => void = (res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"message":"maintenance"}');
    };
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => answer(res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
      const deployed = await loadFlow(
        flow(
          {
            type: 'ems-device-read',
            device: 'dvc_a',
            deviceType: 'str',
            mode: 'single',
            properties: 'soc',
            propertiesType: 'str',
            interval: INTERVAL_S,
          },
          cfg(url, { coalesceMs: 0 }),
        ),
      );
      const waiting = (re: RegExp) => (s: { text?: string }) => re.test(s.text ?? '');
      await deployed.status.count(waiting(/^HTTP 503 maintenance, next try in [\d.]+ s$/), 3);
      assert.equal(callsOf('error', 'n').length, 1);
      answer = (res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>maintenance</html>');
      };
      await deployed.status.count(waiting(/^bad answer, next try in [\d.]+ s$/), 2, deployed.status.all.length);
      answer = (res) => {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"message":"unknown device"}');
      };
      await deployed.status.count(waiting(/^HTTP 404 unknown device$/), 2, deployed.status.all.length);
      const logged = callsOf('error', 'n').map((a) => String(a[0]));
      assert.equal(logged.length, 3, logged.join('\n'));
      assert.match(logged[0], /HTTP 503 maintenance/);
      assert.match(logged[1], /answered 200 with an HTML page/);
      assert.match(logged[2], /HTTP 404 unknown device/);
      assert.equal(deployed.caught.msgs.length, 3);
      assert.equal(deployed.out.msgs.length, 0);
      assert.deepEqual(crashes.events, []);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
