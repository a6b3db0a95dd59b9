import assert from 'node:assert/strict';
import { DAY_MS, HOUR_MS } from '../../../src/protocol/time';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { cfg, flow, loadFlow, logged, useRuntime, useSimulator } from '../../helpers/red';

const COM = DEFAULT_SITES[0];
const HOME = DEFAULT_SITES[1];
const BAT = COM.battery.deviceReference;
const TS = 'POST /devices/:ref/measurements/time-series';
const iso = (t: number) => new Date(t).toISOString();

const series = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-time-series',
  device: BAT,
  deviceType: 'str',
  property: 'soc',
  propertyType: 'str',
  range: 'last',
  last: 6,
  lastUnit: 'hours',
  resolution: 1,
  output: 'points',
  ...extra,
});

/** Checks the fields every output carries. */
function common(m: any, device: string, property: string, unit: string, start: number, end: number): void {
  assert.equal(m.deviceReference, device);
  assert.equal(m.property, property);
  assert.equal(m.unit, unit);
  assert.deepEqual(m.range, { start: iso(start), end: iso(end) });
}

/** Points of [start, end) at the resolution, as the node should return them. */
const grid = (start: number, end: number, stepH = 1) => {
  const out: number[] = [];
  for (let t = start; t < end; t += stepH * HOUR_MS) out.push(t);
  return out;
};

describe('nodes: ems-time-series', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();
  // A past window of whole hours, so every point exists.
  const end = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 2 * HOUR_MS;
  const start = end - 4 * HOUR_MS;

  it('output arrays: {time, data} as the API returns them, with unit, property, deviceReference, range', async () => {
    const deployed = await loadFlow(flow(series({ output: 'arrays' }), cfg(sim.s.url)));
    const reply = await deployed.ask({ start: iso(start), end: iso(end), foo: 1 });
    common(reply, BAT, 'soc', '%', start, end);
    assert.deepEqual(
      reply.payload.time,
      grid(start, end).map((t) => iso(t).replace('.000Z', 'Z')),
    );
    assert.equal(reply.payload.data.length, 4);
    for (const v of reply.payload.data) assert.ok(typeof v === 'number' && v >= 0 && v <= 100);
    assert.equal(reply.foo, 1);
    assert.match(deployed.status.all.at(-1).text, /^soc: 4 points · \d\d:\d\d$/);
  });

  it('output points: [{x: epoch ms, y: value}]', async () => {
    const deployed = await loadFlow(flow(series({ output: 'points' }), cfg(sim.s.url)));
    const reply = await deployed.ask({ start: iso(start), end: iso(end), foo: 2 });
    common(reply, BAT, 'soc', '%', start, end);
    assert.deepEqual(
      reply.payload.map((p: { x: number }) => p.x),
      grid(start, end),
    );
    for (const p of reply.payload) {
      assert.deepEqual(Object.keys(p), ['x', 'y']);
      assert.equal(typeof p.y, 'number');
    }
    assert.equal(reply.foo, 2);
  });

  it('output split: one message per point (payload value, timestamp), each with the common fields', async () => {
    const deployed = await loadFlow(flow(series({ output: 'split' }), cfg(sim.s.url)));
    deployed.send({ start: iso(start), end: iso(end), foo: 3 });
    const msgs = await deployed.out.count(4);
    assert.deepEqual(
      msgs.map((m) => m.timestamp),
      grid(start, end),
    );
    for (const m of msgs) {
      common(m, BAT, 'soc', '%', start, end);
      assert.equal(typeof m.payload, 'number');
      assert.equal(m.topic, `${BAT}/soc`);
      assert.equal(m.foo, 3);
    }
    const after = await deployed.ask({ start: iso(start), end: iso(start + HOUR_MS) });
    assert.equal(after.timestamp, start);
    assert.equal(deployed.out.msgs.length, 5);
    assert.equal(deployed.caught.msgs.length, 0);
  });

  it('overrides: msg.deviceReference, msg.property, msg.resolution', async () => {
    const deployed = await loadFlow(flow(series(), cfg(sim.s.url)));
    const dev = HOME.pv.deviceReference;
    const s0 = start - 4 * HOUR_MS;
    const reply = await deployed.ask({
      deviceReference: dev,
      property: 'totalEnergyProduced',
      resolution: 2,
      start: s0,
      end,
    });
    common(reply, dev, 'totalEnergyProduced', 'Wh', s0, end);
    assert.deepEqual(
      reply.payload.map((p: { x: number }) => p.x),
      grid(s0, end, 2),
    );
    const body = logged(sim.s, TS).at(-1)!;
    assert.equal(body.path, `/devices/${dev}/measurements/time-series`);
    assert.deepEqual((body.body as { resolution: unknown }).resolution, { value: 2, unit: 'h' });
    assert.equal((body.body as { property: string }).property, 'totalEnergyProduced');
    const stringResolution = await deployed.ask({ resolution: '3', start: s0, end });
    assert.deepEqual(
      stringResolution.payload.map((p: { x: number }) => p.x),
      grid(s0, end, 3),
    );
  });

  for (const [form, toInput] of [
    ['ISO 8601', (t: number) => iso(t)],
    ['epoch ms', (t: number) => t],
    ['Date', (t: number) => new Date(t)],
  ] as Array<[string, (t: number) => unknown]>) {
    it(`overrides: msg.start and msg.end as ${form}`, async () => {
      const deployed = await loadFlow(flow(series({ output: 'arrays' }), cfg(sim.s.url)));
      const reply = await deployed.ask({ start: toInput(start), end: toInput(end) });
      common(reply, BAT, 'soc', '%', start, end);
      assert.equal(reply.payload.time.length, 4);
      assert.deepEqual((logged(sim.s, TS).at(-1)!.body as { range: unknown }).range, {
        type: 'absolute',
        start: iso(start).replace('.000Z', 'Z'),
        end: iso(end).replace('.000Z', 'Z'),
      });
    });
  }

  it('msg.start alone reads up to now', async () => {
    const deployed = await loadFlow(flow(series(), cfg(sim.s.url)));
    const before = Date.now();
    const reply = await deployed.ask({ start: iso(start) });
    assert.equal(reply.range.start, iso(start));
    const rangeEnd = Date.parse(reply.range.end);
    assert.ok(
      rangeEnd >= before && rangeEnd <= Date.now() + 1000 && rangeEnd % 1000 === 0,
      'now, rounded up to the second',
    );
    assert.deepEqual(
      reply.payload.map((p: { x: number }) => p.x),
      grid(start, rangeEnd),
    );
  });

  it('a start with milliseconds keeps its first point (the API takes whole seconds)', async () => {
    const deployed = await loadFlow(flow(series({ output: 'arrays' }), cfg(sim.s.url)));
    const reply = await deployed.ask({ start: start - 1500, end: end - 1500 });
    assert.deepEqual(reply.range, { start: iso(start - 1000), end: iso(end - 1000) });
    assert.deepEqual(
      reply.payload.time,
      grid(start - 1000, end - 1000).map((t) => iso(t).replace('.000Z', 'Z')),
    );
  });

  it('range last N hours: from the whole hour N hours ago up to now', async () => {
    const deployed = await loadFlow(flow(series({ range: 'last', last: 6, lastUnit: 'hours' }), cfg(sim.s.url)));
    const before = Date.now();
    const reply = await deployed.ask();
    const [s, e] = [Date.parse(reply.range.start), Date.parse(reply.range.end)];
    assert.equal(s, Math.floor((e - 6 * HOUR_MS) / HOUR_MS) * HOUR_MS);
    assert.ok(e >= before && e <= Date.now() + 1000);
    assert.deepEqual(
      reply.payload.map((p: { x: number }) => p.x),
      grid(s, e),
    );
  });

  it('range last N days', async () => {
    const deployed = await loadFlow(
      flow(series({ range: 'last', last: 2, lastUnit: 'days', resolution: 6 }), cfg(sim.s.url)),
    );
    const reply = await deployed.ask();
    const [s, e] = [Date.parse(reply.range.start), Date.parse(reply.range.end)];
    assert.equal(s, Math.floor((e - 2 * DAY_MS) / HOUR_MS) * HOUR_MS);
    assert.deepEqual(
      reply.payload.map((p: { x: number }) => p.x),
      grid(s, e, 6),
    );
  });

  it('range today: from local midnight up to now', async () => {
    const deployed = await loadFlow(flow(series({ range: 'today' }), cfg(sim.s.url)));
    const reply = await deployed.ask();
    const midnight = new Date(Date.parse(reply.range.end));
    midnight.setHours(0, 0, 0, 0);
    assert.equal(reply.range.start, midnight.toISOString());
    assert.deepEqual(
      reply.payload.map((p: { x: number }) => p.x),
      grid(midnight.getTime(), Date.parse(reply.range.end)),
    );
  });

  it('range yesterday: the whole local day before today', async () => {
    const deployed = await loadFlow(flow(series({ range: 'yesterday' }), cfg(sim.s.url)));
    const midnight = () => new Date().setHours(0, 0, 0, 0);
    const before = midnight();
    const reply = await deployed.ask();
    // The node's "today" is the local day when it ran: the one before or after the ask (they differ only across midnight).
    const today = new Date(reply.range.end === new Date(before).toISOString() ? before : midnight());
    const yesterday = new Date(today);
    yesterday.setDate(yesterday.getDate() - 1);
    assert.deepEqual(reply.range, { start: yesterday.toISOString(), end: today.toISOString() });
    assert.deepEqual(
      reply.payload.map((p: { x: number }) => p.x),
      grid(yesterday.getTime(), today.getTime()),
    );
    assert.equal(reply.payload.length, (today.getTime() - yesterday.getTime()) / HOUR_MS);
  });

  it("range absolute: the node's start and end (str, or msg TypedInput)", async () => {
    const deployed = await loadFlow(
      flow(
        series({ range: 'absolute', start: iso(start), startType: 'str', end: String(end), endType: 'str' }),
        cfg(sim.s.url),
      ),
    );
    const reply = await deployed.ask();
    common(reply, BAT, 'soc', '%', start, end);
    assert.equal(reply.payload.length, 4);
    const msgFlow = await loadFlow(
      flow(series({ range: 'absolute', start: 'from', startType: 'msg', end: '', endType: 'str' }), cfg(sim.s.url)),
    );
    const fromMsg = await msgFlow.ask({ from: start });
    assert.equal(fromMsg.range.start, iso(start));
    assert.ok(Date.parse(fromMsg.range.end) > end, 'no end: up to now');
  });
});

describe('nodes: ems-time-series over 95 days', () => {
  const T0 = Date.UTC(2026, 6, 1);
  const sim = useSimulator({ frozen: true, startTime: T0 });
  useRuntime();

  it('splits 95 days into 4 requests and merges exactly one point per hour, none repeated', async () => {
    const start = Date.UTC(2026, 2, 1);
    const end = start + 95 * DAY_MS;
    assert.ok(end < T0, "the range lies in the simulator's past");
    const deployed = await loadFlow(flow(series({ output: 'points' }), cfg(sim.s.url)));
    sim.s.sim.clearLog();
    const reply = await deployed.ask({ start: iso(start), end: iso(end) });
    const posts = logged(sim.s, TS);
    assert.equal(posts.length, 4);
    const ranges = posts
      .map((p) => (p.body as { range: { start: string; end: string } }).range)
      .map((r) => [Date.parse(r.start), Date.parse(r.end)])
      .sort((a, b) => a[0] - b[0]);
    assert.equal(ranges[0][0], start);
    assert.equal(ranges[3][1], end);
    for (let i = 0; i < 4; i++) {
      assert.ok(ranges[i][1] - ranges[i][0] <= 30 * DAY_MS);
      if (i > 0) assert.equal(ranges[i][0], ranges[i - 1][1], 'no gap, no overlap');
    }
    const xs: number[] = reply.payload.map((p: { x: number }) => p.x);
    assert.equal(xs.length, 95 * 24);
    assert.equal(new Set(xs).size, xs.length);
    xs.forEach((x, i) => assert.equal(x, start + i * HOUR_MS));
    assert.ok(reply.payload.every((p: { y: unknown }) => typeof p.y === 'number'));
    common(reply, BAT, 'soc', '%', start, end);
  });
});
