import assert from 'node:assert/strict';
import { DAY_MS, HOUR_MS, MINUTE_MS, toIsoSeconds } from '../../src/protocol/time';
import { DEFAULT_SITES, startSimulator, type StartedSimulator } from '../../src/simulator/index';
import { COM, COUNTERS, post, read, T0 } from './counters';

async function series(
  base: string,
  ref: string,
  property: string,
  start: number,
  end: number,
  hours = 1,
): Promise<{ time: string[]; data: number[] }> {
  return post(base, `/devices/${ref}/measurements/time-series`, {
    property,
    range: { type: 'absolute', start: toIsoSeconds(start), end: toIsoSeconds(end) },
    resolution: { value: hours, unit: 'h' },
  });
}

function assertNonDecreasing(values: number[], what: string): void {
  for (let i = 1; i < values.length; i++)
    assert.ok(values[i] >= values[i - 1], `${what} decreases at ${i}: ${values[i - 1]} -> ${values[i]}`);
}

describe('simulator: time series', () => {
  const opened: StartedSimulator[] = [];
  const start = async (seed: number) => {
    const started = await startSimulator({ startTime: T0, frozen: true, seed });
    opened.push(started);
    return started;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });

  async function drive(s: StartedSimulator): Promise<void> {
    await post(s.url, `/sites/${COM.siteReference}/steering/ess`, {
      setting: { value: -150, unit: 'kW' },
      validUntil: T0 + 5 * HOUR_MS,
    });
    s.sim.clock.advance(2 * DAY_MS);
  }

  it('is deterministic for a seed (two simulators, same series) and differs for another seed', async () => {
    const [a, b, c] = [await start(11), await start(11), await start(12)];
    for (const s of [a, b, c]) await drive(s);
    for (const [ref, p] of [
      [COM.pv.deviceReference, 'power'],
      [COM.battery.deviceReference, 'soc'],
      [COM.meter.deviceReference, 'totalEnergyConsumed'],
    ]) {
      const from = T0 - 5 * DAY_MS;
      const sa = await series(a.url, ref, p, from, T0 + 2 * DAY_MS);
      const sb = await series(b.url, ref, p, from, T0 + 2 * DAY_MS);
      assert.deepEqual(sa, sb);
      assert.equal(sa.time.length, 7 * 24, 'end exclusive: the point at now is not in [from, now)');
      if (p === 'power') assert.notDeepEqual(sa.data, (await series(c.url, ref, p, from, T0 + 2 * DAY_MS)).data);
    }
  });

  it('ends at the current value when the last point is now, for every property', async () => {
    const started = await start(5);
    await drive(started);
    const now = started.sim.clock.now();
    for (const site of DEFAULT_SITES) {
      for (const kind of ['battery', 'pv', 'meter'] as const) {
        const ref = site[kind].deviceReference;
        for (const p of kind === 'battery'
          ? ['soc', 'power', 'totalEnergyConsumed', 'totalEnergyProduced']
          : kind === 'pv'
            ? ['power', 'totalEnergyProduced']
            : ['power', 'totalEnergyConsumed', 'totalEnergyProduced']) {
          const ts = await series(started.url, ref, p, now - 3 * DAY_MS, now + DAY_MS);
          assert.equal(ts.time[ts.time.length - 1], toIsoSeconds(now));
          assert.equal(ts.data[ts.data.length - 1], await read(started.url, ref, p), `${kind}.${p}`);
        }
      }
    }
  });

  it('the last point before now is close to the current value when now is between points', async () => {
    const started = await start(5);
    await drive(started);
    started.sim.clock.advance(20 * MINUTE_MS);
    const now = started.sim.clock.now();
    const ts = await series(
      started.url,
      COM.meter.deviceReference,
      'totalEnergyConsumed',
      now - DAY_MS - 20 * MINUTE_MS,
      now + HOUR_MS,
    );
    assert.equal(ts.time[ts.time.length - 1], toIsoSeconds(now - 20 * MINUTE_MS));
    const current = await read(started.url, COM.meter.deviceReference, 'totalEnergyConsumed');
    const last = ts.data[ts.data.length - 1];
    assert.ok(last <= current && current - last <= (20 / 60) * 1.5e6, `${last} vs ${current}`);
  });

  it('counters are monotonic across the baseline (before start) and the recorded part; SOC within 0-100', async () => {
    const started = await start(9);
    await drive(started);
    const now = started.sim.clock.now();
    for (const [ref, p] of COUNTERS) {
      const ts = await series(started.url, ref, p, now - 30 * DAY_MS + HOUR_MS, now + HOUR_MS);
      assert.equal(ts.data.length, 30 * 24);
      assertNonDecreasing(ts.data, `${ref}.${p}`);
    }
    const far = await series(
      started.url,
      COM.pv.deviceReference,
      'totalEnergyProduced',
      T0 - 400 * DAY_MS,
      T0 - 370 * DAY_MS,
    );
    assertNonDecreasing(far.data, 'a year before start');
    assert.ok(
      far.data.every((v) => v > 0),
      'initial counters cover years of operation',
    );
    for (const site of DEFAULT_SITES) {
      const soc = await series(started.url, site.battery.deviceReference, 'soc', now - 30 * DAY_MS, now);
      assert.ok(soc.data.every((v) => v >= 0 && v <= 100));
    }
  });

  it('meets the initial state at the start: the point at the start time is the initial value', async () => {
    const started = await start(2);
    started.sim.clock.advance(DAY_MS);
    const ts = await series(started.url, COM.battery.deviceReference, 'soc', T0 - 2 * HOUR_MS, T0 + HOUR_MS);
    assert.deepEqual(ts.time, [toIsoSeconds(T0 - 2 * HOUR_MS), toIsoSeconds(T0 - HOUR_MS), toIsoSeconds(T0)]);
    assert.equal(ts.data[2], COM.battery.initialSoc);
    assert.ok(Math.abs(ts.data[1] - COM.battery.initialSoc) < 5, 'continuous into the past');
  });

  it('returns no points for a range entirely in the future', async () => {
    const started = await start(2);
    const ts = await series(started.url, COM.pv.deviceReference, 'power', T0 + HOUR_MS, T0 + DAY_MS);
    assert.deepEqual(ts, { time: [], data: [] });
  });
});
