/**
 * Example 02 into a real InfluxDB 1.x (Debian's `influxdb` package, started by the test from
 * a config file in a temp dir, HTTP on 127.0.0.1 and a free port): the example as shipped,
 * its EMS config node on the test's simulator and its InfluxDB config node on the test's
 * InfluxDB, writes 90 days of the import counter; the points are read back over InfluxDB's
 * HTTP API and compared with the series the simulator gives. Without influxd the suite says
 * so and skips (.ci/run installs the package; a local run may not have it).
 */
import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { completions, findInfluxd, loadInfluxExample, startInflux, type StartedInflux } from '../../helpers/influx';
import { nodeRedVersion } from '../../helpers/node-red-path';
import { helper, logged, useRuntime, useSimulator } from '../../helpers/red';
import { closed } from '../../helpers/spawned';

const FILE = '02 Time series to a chart and a database.json';
const METER = DEFAULT_SITES[1].meter.deviceReference;
const PROPERTY = 'totalEnergyConsumed';
const DB = 'ems';
const INFLUXD = findInfluxd();
const SELECT = `SELECT value, unit, device, property FROM ems WHERE device = '${METER}' AND property = '${PROPERTY}' ORDER BY time`;

describe(`examples: 02 into a real InfluxDB 1.x on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(60_000);
  // Frozen: the series the flow reads is the series the test compares with.
  const sim = useSimulator({ frozen: true });
  let influx: StartedInflux | undefined;

  before(async function () {
    if (!INFLUXD) {
      console.log(
        "      SKIPPED: influxd not found (PATH or INFLUXD). Install Debian's influxdb package " +
          '(apt-get install -y influxdb), as .ci/run does, to run example 02 against a real InfluxDB.',
      );
      this.skip();
    }
    influx = await startInflux(INFLUXD!);
  });
  after(async () => {
    await influx?.stop(); // already stopped by the last test, unless it failed first
  });
  beforeEach(async () => {
    if (!influx) return;
    await influx.query(`DROP DATABASE ${DB}`);
    await influx.query(`CREATE DATABASE ${DB}`);
  });
  useRuntime();

  /** The series of the meter's import counter over a range, as the simulator serves it. */
  const reference = (range: { start: string; end: string }) =>
    sim.s.sim.timeSeries(METER, {
      property: PROPERTY,
      range: { type: 'absolute', ...range },
      resolution: { value: 1, unit: 'h' },
    });

  /** Loads the example on the test's simulator and InfluxDB, presses "90 days" and awaits the write. */
  async function run(): Promise<any> {
    const ex = await loadInfluxExample(FILE, sim.s.url, influx!.port);
    const done = completions(ex.node('InfluxDB ems').id);
    try {
      ex.fire('90 days (press)');
      const [c] = await done.count(1);
      return c;
    } finally {
      done.remove();
    }
  }

  it("02 writes one point per hour of 90 days: measurement ems, tags device and property, fields value and unit, the series' times and values", async () => {
    const before = logged(sim.s, 'POST /devices/:ref/measurements/time-series').length;
    const result = await run();
    assert.equal(result.error, undefined, `the write failed: ${result.error}`);
    const want = reference(result.msg.range);
    assert.ok(want.time.length > 90 * 24 && want.time.length <= 90 * 24 + 2, `${want.time.length} points`);
    assert.ok(
      logged(sim.s, 'POST /devices/:ref/measurements/time-series').length - before >= 3,
      'the 90 days were read in 30-day requests',
    );

    const rows = await influx!.rows(SELECT, DB);
    assert.equal(rows.length, want.time.length);
    assert.deepEqual(
      rows.map((r) => r.time),
      want.time.map((t) => Date.parse(t)),
      "the series' own times, to the ms",
    );
    assert.deepEqual(
      rows.map((r) => r.value),
      want.data,
      "the series' values",
    );
    for (const r of rows) assert.deepEqual([r.unit, r.device, r.property], ['Wh', METER, PROPERTY]);
    const [count] = await influx!.rows('SELECT COUNT(value) FROM ems', DB);
    assert.equal(count.count, want.time.length, 'nothing else in the measurement');

    // The schema the README documents: tags device and property; fields value (float) and unit (string).
    const tags = await influx!.rows('SHOW TAG KEYS FROM ems', DB);
    assert.deepEqual(
      tags.map((t) => t.tagKey),
      ['device', 'property'],
    );
    const fields = await influx!.rows('SHOW FIELD KEYS FROM ems', DB);
    assert.deepEqual(
      fields.map((f) => [f.fieldKey, f.fieldType]),
      [
        ['unit', 'string'],
        ['value', 'float'],
      ],
    );
    const measurements = await influx!.rows('SHOW MEASUREMENTS', DB);
    assert.deepEqual(
      measurements.map((m) => m.name),
      ['ems'],
    );
  });

  it('02 run again overwrites the same points: the count stays and a changed value is put back', async () => {
    const first = await run();
    assert.equal(first.error, undefined, `the write failed: ${first.error}`);
    const times1 = first.msg.payload.map((p: any[]) => p[0].time.getTime());
    const rows1 = await influx!.rows(SELECT, DB);
    assert.equal(rows1.length, times1.length);

    // Someone changed one point in between (same measurement, tags and time): it replaces it.
    const mid = rows1[Math.floor(rows1.length / 2)];
    await influx!.write(DB, `ems,device=${METER},property=${PROPERTY} unit="Wh",value=-1 ${mid.time}`);
    const changed = await influx!.rows(`${SELECT.replace(' ORDER BY time', '')} AND time = ${mid.time}ms`, DB);
    assert.deepEqual(
      changed.map((r) => r.value),
      [-1],
    );
    assert.equal(
      (await influx!.rows(SELECT, DB)).length,
      rows1.length,
      'a point with the same key replaces, never adds',
    );

    await helper.unload(); // as a redeploy does
    const second = await run();
    assert.equal(second.error, undefined, `the write failed: ${second.error}`);
    const times2: number[] = second.msg.payload.map((p: any[]) => p[0].time.getTime());
    // Same hour grid (the range starts at a whole hour); the simulator's clock is frozen, so the
    // second run writes the same points (one fewer, at the start, if the real hour turned since).
    assert.ok(
      times2.every((t) => times1.includes(t)),
      'the second run writes points at the same times',
    );
    assert.ok(times1.length - times2.length <= 1);

    const rows2 = await influx!.rows(SELECT, DB);
    assert.equal(rows2.length, rows1.length, 'the count stays: no duplicates');
    assert.deepEqual(rows2, rows1, 'every point as after the first run, the changed one put back');
    assert.equal(rows2.find((r) => r.time === mid.time)!.value, mid.value);
  });

  it("02 reports a database InfluxDB does not have as the write's error (create it first, as the comment says)", async () => {
    await influx!.query(`DROP DATABASE ${DB}`);
    const result = await run();
    assert.ok(result.error, 'the influxdb out node ends the message with an error');
    assert.match(String((result.error as Error).message ?? result.error), /database not found/);
  });

  it('stops InfluxDB: its process gone, nothing listening on its port', async () => {
    const { pid, port } = influx!;
    await influx!.stop();
    influx = undefined;
    assert.throws(
      () => process.kill(pid, 0),
      (err: any) => err.code === 'ESRCH',
      'influxd exited',
    );
    assert.ok(await closed(port), `nothing listens on 127.0.0.1:${port}`);
  });
});
