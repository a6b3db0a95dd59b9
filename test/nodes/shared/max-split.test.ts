/**
 * Limits on the read nodes: a split sends at most `maxSplit` messages
 * (beyond it, one Catch-able error naming maxSplit and the count, and nothing sent), and an
 * answer of the wrong shape ends the message in one Catch-able error, never in a message
 * without payload or with topic "<ref>/undefined".
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DAY_MS, HOUR_MS } from '../../../src/protocol/time';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { useCrashWatch } from '../../helpers/faults';
import { callsOf, cfg, flow, loadFlow, logged, useRuntime, useSimulator, type Loaded } from '../../helpers/red';

const COM = DEFAULT_SITES[0];
const BAT = COM.battery.deviceReference;
const TS = 'POST /devices/:ref/measurements/time-series';
const MAP = 'GET /devices/:ref/measurements/map';

const read = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-device-read',
  device: BAT,
  deviceType: 'str',
  mode: 'map',
  properties: 'soc,power,totalEnergyConsumed',
  propertiesType: 'str',
  split: true,
  ...extra,
});
const series = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-time-series',
  device: BAT,
  deviceType: 'str',
  property: 'soc',
  propertyType: 'str',
  range: 'last',
  last: 3,
  lastUnit: 'days',
  resolution: 1,
  output: 'split',
  ...extra,
});

/** Sends `msg`, expects one error matching `re`, and checks that nothing was sent and the status is red. */
async function refused(f: Loaded, msg: Record<string, unknown>, re: RegExp): Promise<void> {
  const [o, c] = [f.out.msgs.length, f.caught.msgs.length];
  const caught = await f.fails(msg);
  assert.match(caught.error.message, re);
  assert.equal(caught.error.source.id, 'n');
  assert.equal(f.status.all.at(-1).fill, 'red');
  assert.equal(f.out.msgs.length, o, 'nothing sent');
  assert.equal(f.caught.msgs.length, c + 1, 'exactly one error');
}

describe('nodes: read limits (maxSplit)', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();

  it('device read: a split of more properties than maxSplit is one error naming maxSplit and the count; nothing asked, nothing sent', async () => {
    const deployed = await loadFlow(flow(read({ maxSplit: 2 }), cfg(sim.s.url)));
    const asked = logged(sim.s, MAP).length;
    await refused(
      deployed,
      { foo: 1 },
      /maxSplit exceeded: the read would split into 3 messages \(one per property\); the node's maxSplit is 2/,
    );
    await refused(
      deployed,
      { properties: ['soc', 'power', 'totalEnergyProduced'] },
      /would split into 3 messages .*maxSplit is 2/,
    );
    assert.equal(logged(sim.s, MAP).length, asked, 'refused before the request');
    // Within the limit the split goes out as before.
    deployed.send({ properties: 'soc,power' });
    const msgs = await deployed.out.count(2);
    assert.deepEqual(
      msgs.map((m) => m.topic),
      [`${BAT}/soc`, `${BAT}/power`],
    );
    assert.equal(deployed.caught.msgs.length, 2);
  });

  it('device read: maxSplit counts messages of a split only (map without split, and single, are one message)', async () => {
    const deployed = await loadFlow(flow(read({ maxSplit: 1, split: false }), cfg(sim.s.url)));
    const reply = await deployed.ask();
    assert.deepEqual(Object.keys(reply.payload), ['soc', 'power', 'totalEnergyConsumed']);
    const listFlow = await loadFlow(flow(read({ mode: 'list', properties: 'soc,power', maxSplit: 2 }), cfg(sim.s.url)));
    listFlow.send();
    assert.equal((await listFlow.out.count(2)).length, 2);
  });

  it('time series: a 3-day hourly split with maxSplit 10 is one error; nothing asked, nothing sent', async () => {
    const deployed = await loadFlow(flow(series({ maxSplit: 10 }), cfg(sim.s.url)));
    const asked = logged(sim.s, TS).length;
    await refused(
      deployed,
      {},
      /maxSplit exceeded: the read would split into (72|73) messages \(one per point\); the node's maxSplit is 10/,
    );
    assert.equal(logged(sim.s, TS).length, asked, 'refused before the request');
    // points and arrays are one message each: no cap.
    for (const output of ['points', 'arrays']) {
      const seriesFlow = await loadFlow(flow(series({ maxSplit: 10, output }), cfg(sim.s.url)));
      const reply = await seriesFlow.ask();
      const points = output === 'points' ? reply.payload.length : reply.payload.time.length;
      assert.ok(points >= 72, `${output}: ${points} points in one message`);
    }
  });

  it('time series: the default maxSplit is 1000 (a flow saved without it); 42 days hourly is refused, 41 days split', async () => {
    const end = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 2 * HOUR_MS;
    const deployed = await loadFlow(flow(series(), cfg(sim.s.url)));
    await refused(
      deployed,
      { start: end - 42 * DAY_MS, end },
      /would split into 1008 messages \(one per point\); the node's maxSplit is 1000/,
    );
    deployed.send({ start: end - 41 * DAY_MS, end });
    const msgs = await deployed.out.count(984);
    assert.equal(msgs.at(-1).timestamp, end - HOUR_MS);
    assert.equal(deployed.caught.msgs.length, 1);
  });

  for (const [what, node] of [
    ['device read', read({ maxSplit: 0 })],
    ['time series', series({ maxSplit: '1e6' })],
  ] as Array<[string, Record<string, unknown>]>) {
    it(`${what}: a bad maxSplit is reported at deploy, and each split read is refused naming it`, async () => {
      const deployed = await loadFlow(flow(node, cfg(sim.s.url)));
      const errors = callsOf('error', 'n');
      assert.equal(errors.length, 1);
      assert.match(String(errors[0][0]), /maxSplit must be a whole number of messages from 1 to 100000/);
      await refused(deployed, {}, /maxSplit must be a whole number of messages from 1 to 100000 \(default 1000\)/);
    });
  }

  it('a bad maxSplit on a node that does not split is not reported', async () => {
    const deployed = await loadFlow(flow(read({ split: false, maxSplit: 'lots' }), cfg(sim.s.url)));
    assert.equal(callsOf('error', 'n').length, 0);
    assert.equal(typeof (await deployed.ask()).payload.soc, 'number');
  });
});

/** A hostile service on 127.0.0.1:0 whose answer each test sets. */
function useHostile(): { url: string; answer: (res: http.ServerResponse, path: string) => void; hits: number } {
  const box = {
    url: '',
    hits: 0,
    answer: (res: http.ServerResponse) => {
      res.end();
    },
  } as ReturnType<typeof useHostile>;
  let server: http.Server;
  before(async () => {
    server = http.createServer((req, res) => {
      box.hits++;
      req.resume();
      req.on('end', () => box.answer(res, req.url ?? ''));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    box.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return box;
}

const json =
  (body: unknown, status = 200) =>
  (res: http.ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

describe('nodes: read limits against a hostile service', () => {
  const hostile = useHostile();
  useRuntime();
  const crashes = useCrashWatch();

  it('a 100,000-item list with split: one error naming maxSplit and the count, no message', async () => {
    const items = Array.from({ length: 100_000 }, (_, i) => ({
      timestamp: 1_750_000_000_000,
      property: i % 2 ? 'soc' : 'power',
      value: i,
      unit: 'W',
    }));
    hostile.answer = json({ reference: 'dvc_a', measurements: items });
    const deployed = await loadFlow(
      flow(read({ device: 'dvc_a', mode: 'list', properties: 'soc,power' }), cfg(hostile.url)),
    );
    await refused(deployed, {}, /would split into 100000 messages; the node's maxSplit is 1000/);
    assert.deepEqual(crashes.events, []);
  });

  it('answers of the wrong shape: one error each, never a message without payload or with topic "<ref>/undefined"', async () => {
    const cases: Array<[string, string, (res: http.ServerResponse) => void]> = [
      [
        'single',
        '204',
        (res) => {
          res.writeHead(204);
          res.end();
        },
      ],
      [
        'single',
        'HTML page',
        (res) => {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<html><body>maintenance</body></html>');
        },
      ],
      ['single', 'value "NaN"', json({ timestamp: 1, property: 'soc', value: 'NaN', unit: '%', reference: 'dvc_a' })],
      ['single', 'no property', json({ timestamp: 1, value: 5, unit: '%', reference: 'dvc_a' })],
      ['single', 'null', json('null')],
      ['single', 'broken JSON', json('{"timestamp": 1, "prop')],
      ['map', '{}', json({})],
      ['map', 'null value', json({ reference: 'dvc_a', measurements: { soc: null } })],
      ['map', 'measurements array', json({ reference: 'dvc_a', measurements: [] })],
      [
        'list',
        'property a number',
        json({ reference: 'dvc_a', measurements: [{ timestamp: 1, property: 5, value: 1, unit: '%' }] }),
      ],
      ['list', 'no measurements', json({ reference: 'dvc_a' })],
    ];
    for (const [mode, what, answer] of cases) {
      hostile.answer = answer;
      for (const split of [false, true]) {
        if (mode === 'single' && split) continue;
        const deployed = await loadFlow(
          flow(read({ device: 'dvc_a', mode, properties: 'soc', split }), cfg(hostile.url)),
        );
        const caught = await deployed.fails({});
        assert.match(caught.error.message, /answered/, `${mode} ${what}: ${caught.error.message}`);
        assert.equal(caught.error.code, 'EMS_BAD_RESPONSE', `${mode} ${what}`);
        assert.equal(deployed.status.all.at(-1).fill, 'red');
        assert.equal(deployed.out.msgs.length, 0, `${mode} ${what}: nothing sent`);
        assert.equal(deployed.caught.msgs.length, 1, `${mode} ${what}: one error`);
      }
    }
    assert.deepEqual(crashes.events, []);
  });

  it('time series of the wrong shape: one error, nothing sent', async () => {
    for (const body of [
      { time: ['2026-01-01T00:00:00Z'], data: [] },
      { time: ['2026-01-01T00:00:00Z'], data: ['1'] },
      { data: [1] },
      'null',
    ]) {
      hostile.answer = json(body);
      const deployed = await loadFlow(flow(series({ device: 'dvc_a', output: 'points' }), cfg(hostile.url)));
      const caught = await deployed.fails({});
      assert.equal(caught.error.code, 'EMS_BAD_RESPONSE', JSON.stringify(body));
      assert.equal(deployed.out.msgs.length, 0);
    }
    assert.deepEqual(crashes.events, []);
  });
});
