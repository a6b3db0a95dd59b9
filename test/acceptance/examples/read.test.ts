/**
 * Examples 1 and 2, loaded as shipped (config node on the test simulator): the four read
 * shapes, the 30-day chart payload and the 90 days of points for InfluxDB (example 02 needs
 * node-red-contrib-influxdb's nodes, so it loads through loadInfluxExample).
 */
import assert from 'node:assert/strict';
import { HOUR_MS } from '../../../src/protocol/time';
import { BUILT_IN_SITES, DEFAULT_SITES } from '../../../src/simulator/index';
import { nodeRedVersion } from '../../helpers/node-red-path';
import { BUILT_IN, loadExample } from '../../helpers/examples';
import { loadInfluxExample } from '../../helpers/influx';
import { logged, useRuntime, useSimulator } from '../../helpers/red';

const HOME = DEFAULT_SITES[1];
const BAT = HOME.battery.deviceReference;
const METER = HOME.meter.deviceReference;
const DAY_MS = 24 * HOUR_MS;

describe(`examples: reading (01, 02) on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(30_000);
  // Frozen: the values the flow reads are the values the test compares with.
  const sim = useSimulator({ frozen: true });
  useRuntime();
  const now = (ref: string, prop: string) => sim.s.sim.measure(ref, prop);

  it('01 reads SOC and counters in the single, map, list and devices shapes', async () => {
    const ex = await loadExample('01 Read SOC and energy counters.json', sim.s.url);
    const [single, map, list, devices] = ['SOC (%)', 'battery map', 'meter list', 'device list'].map((n) =>
      ex.inbox(n),
    );
    ex.fire('every minute');
    const [s] = await single.count(1);
    assert.equal(s.payload, now(BAT, 'soc').value);
    assert.equal(s.unit, '%');
    assert.equal(s.topic, `${BAT}/soc`);

    const [m] = await map.count(1);
    assert.deepEqual(m.payload, {
      soc: now(BAT, 'soc').value,
      totalEnergyConsumed: now(BAT, 'totalEnergyConsumed').value,
      totalEnergyProduced: now(BAT, 'totalEnergyProduced').value,
    });
    assert.deepEqual(m.units, { soc: '%', totalEnergyConsumed: 'Wh', totalEnergyProduced: 'Wh' });

    const [l] = await list.count(1);
    assert.deepEqual(
      l.payload.map((i: any) => [i.property, i.value, i.unit]),
      [
        ['totalEnergyConsumed', now(METER, 'totalEnergyConsumed').value, 'Wh'],
        ['totalEnergyProduced', now(METER, 'totalEnergyProduced').value, 'Wh'],
      ],
    );

    const [d] = await devices.count(1);
    assert.equal(d.payload.length, 6);
    const battery = d.payload.find((x: any) => x.deviceReference === BAT);
    assert.deepEqual(
      battery.properties.map((p: any) => `${p.name}:${p.unit}`),
      ['soc:%', 'power:W', 'totalEnergyConsumed:Wh', 'totalEnergyProduced:Wh'],
    );
  });

  it('01 works as shipped, on the simulator built into the package', async () => {
    const ex = await loadExample('01 Read SOC and energy counters.json', BUILT_IN);
    assert.equal(ex.nodes.find((n) => n.type === 'ems-partner-config').simulator, true);
    const [single, map, devices] = ['SOC (%)', 'battery map', 'device list'].map((n) => ex.inbox(n));
    ex.fire('every minute');
    const [s] = await single.count(1);
    assert.ok(s.payload >= 0 && s.payload <= 100, `soc ${s.payload}`);
    const [m] = await map.count(1);
    assert.ok(m.payload.totalEnergyConsumed > 0 && m.payload.totalEnergyProduced > 0);
    // The built-in simulator: the default two sites and the steering examples' own, three devices each.
    assert.equal((await devices.count(1))[0].payload.length, 3 * BUILT_IN_SITES.length);
  });

  it('02 sends 30 days of SOC as chart points [{x, y}] with the series name', async () => {
    const ex = await loadInfluxExample('02 Time series to a chart and a database.json', sim.s.url);
    const chart = ex.inbox('to chart');
    ex.fire('on start, then hourly');
    const [msg] = await chart.count(1);
    assert.equal(msg.topic, 'Home battery SOC (%)');
    assert.equal(msg.unit, '%');
    assert.equal(msg.property, 'soc');
    const pts = msg.payload as Array<{ x: number; y: number }>;
    assert.ok(Array.isArray(pts));
    const span = Date.parse(msg.range.end) - Date.parse(msg.range.start);
    assert.ok(span >= 30 * DAY_MS && span < 30 * DAY_MS + HOUR_MS, `range ${JSON.stringify(msg.range)}`);
    assert.equal(pts.length, Math.floor((sim.s.sim.clock.now() - Date.parse(msg.range.start)) / HOUR_MS) + 1);
    assert.equal(pts[0].x, Date.parse(msg.range.start));
    for (let i = 0; i < pts.length; i++) {
      assert.deepEqual(Object.keys(pts[i]), ['x', 'y']);
      assert.ok(pts[i].y >= 0 && pts[i].y <= 100, `soc ${pts[i].y}`);
      if (i > 0) assert.equal(pts[i].x - pts[i - 1].x, HOUR_MS);
    }
  });

  it('02 reads 90 days of the import counter in 3 or 4 requests and shapes one InfluxDB point per hour, in order, no gap, no duplicate', async () => {
    // The InfluxDB config node points where nothing listens: this test checks what goes into the
    // InfluxDB node; test/acceptance/examples/influx.test.ts writes it to a real InfluxDB and reads it back.
    const ex = await loadInfluxExample('02 Time series to a chart and a database.json', sim.s.url);
    const db = ex.inbox('InfluxDB ems');
    const out = ex.nodes.find((n) => n.name === 'InfluxDB ems');
    assert.equal(out.type, 'influxdb out');
    assert.equal(out.measurement, 'ems');
    assert.equal(out.precision, 'ms');
    assert.equal(out.precisionV18FluxV20, 'ms');
    const before = logged(sim.s, 'POST /devices/:ref/measurements/time-series').length;
    ex.fire('90 days (press)');
    const [msg] = await db.count(1, 20_000);
    const start = Date.parse(msg.range.start);
    const expected = Math.floor((sim.s.sim.clock.now() - start) / HOUR_MS) + 1;
    assert.ok(expected > 90 * 24 && expected <= 90 * 24 + 2, `expected ${expected}`);
    const points = msg.payload as Array<
      [{ value: number; unit: string; time: Date }, { device: string; property: string }]
    >;
    assert.equal(points.length, expected, 'one message: fewer than 5,000 points');
    for (let i = 0; i < points.length; i++) {
      const [fields, tags] = points[i];
      assert.deepEqual(Object.keys(fields), ['value', 'unit', 'time']);
      assert.deepEqual({ ...tags }, { device: METER, property: 'totalEnergyConsumed' }); // made in the function node's context
      assert.equal(fields.unit, 'Wh');
      assert.ok(fields.time instanceof Date, 'a Date of the runtime (what the InfluxDB 2.x client takes as a Date)');
      assert.equal(fields.time.getTime(), start + i * HOUR_MS);
      assert.equal(typeof fields.value, 'number');
      if (i > 0) assert.ok(fields.value >= points[i - 1][0].value, 'a counter never falls');
    }
    const requests = logged(sim.s, 'POST /devices/:ref/measurements/time-series').slice(before);
    assert.ok(requests.length >= 3 && requests.length <= 4, `${requests.length} requests`);
    // the last point is the last whole hour: at most the counter now
    assert.ok(points.at(-1)![0].value <= now(METER, 'totalEnergyConsumed').value);
  });
});
