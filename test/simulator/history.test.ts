import assert from 'node:assert/strict';
import { DAY_MS, HOUR_MS, MINUTE_MS, QUARTER_HOUR_MS, toIsoSeconds } from '../../src/protocol/time';
import { F_BATT_IN, F_BATT_OUT, F_GRID_IN, F_GRID_OUT, F_PV_OUT, F_SOC } from '../../src/simulator/model-quantities';
import { H_LOAD, type History } from '../../src/simulator/history';
import { HISTORY_DAYS, computePast } from '../../src/simulator/history-warmup';
import { DEFAULT_SITES, Simulator, startSimulator, type SiteDefinition } from '../../src/simulator/index';
import { SiteModel } from '../../src/simulator/model';
import { loadW, pvPotentialW } from '../../src/simulator/profiles';
import { BATTERY_DEFAULTS } from '../../src/simulator/sites';

const T0 = Date.UTC(2026, 2, 10, 6, 0, 0); // a March morning, UTC (a Tuesday)
const COM = DEFAULT_SITES[0];
const HOME = DEFAULT_SITES[1];
const SQRT_EFF = Math.sqrt(BATTERY_DEFAULTS.efficiency);

function sim(seed: number, startTime = T0, sites?: SiteDefinition[]): Simulator {
  return new Simulator({ seed, startTime, frozen: true, sites });
}

/** The site's history with its past (the warm-up is computed on this first call). */
function historyOf(s: Simulator, site: SiteDefinition): History {
  return s.site(site.siteReference).past();
}

function series(
  s: Simulator,
  ref: string,
  property: string,
  start: number,
  end: number,
  hours = 1,
): { time: string[]; data: number[] } {
  return s.timeSeries(ref, {
    property,
    range: { type: 'absolute', start: toIsoSeconds(start), end: toIsoSeconds(end) },
    resolution: { value: hours, unit: 'h' },
  });
}

/** Pearson correlation. */
function corr(a: number[], b: number[]): number {
  const count = a.length;
  const ma = a.reduce((x, y) => x + y, 0) / count;
  const mb = b.reduce((x, y) => x + y, 0) / count;
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < count; i++) {
    ab += (a[i] - ma) * (b[i] - mb);
    aa += (a[i] - ma) ** 2;
    bb += (b[i] - mb) ** 2;
  }
  return ab / Math.sqrt(aa * bb);
}

/** Quarter-hour SOC samples of the 7 days before `end` (672 values). */
function socWeek(h: History, end: number): number[] {
  const out: number[] = [];
  for (let k = 7 * 96; k > 0; k--) out.push(h.at(F_SOC, end - k * QUARTER_HOUR_MS, end, NaN));
  return out;
}

/** Steering after the start, so the live part is not only self-consumption. */
function drive(s: Simulator): void {
  s.steer(COM.siteReference, 'ess', { setting: { value: -150, unit: 'kW' }, validUntil: T0 + 5 * HOUR_MS });
  s.clock.advance(7 * HOUR_MS);
  s.steer(HOME.siteReference, 'ess', { setting: { value: 4, unit: 'kW' }, validUntil: T0 + 20 * HOUR_MS });
  s.clock.advance(DAY_MS + 17 * MINUTE_MS);
}

describe('simulator: a realistic sandbox (history from the physics)', () => {
  it('conserves energy in every quarter hour of the warm-up and the live part: load = PV + grid + battery', () => {
    const simulator = sim(4);
    drive(simulator);
    for (const site of DEFAULT_SITES) {
      const history = historyOf(simulator, site);
      assert.ok(
        history.firstTime <= T0 - HISTORY_DAYS * DAY_MS && history.lastTime > T0 + DAY_MS,
        'warm-up and live samples',
      );
      const delta = (col: number, i: number) => history.value(col, i + 1) - history.value(col, i);
      for (let i = 0; i + 1 < history.length; i++) {
        const load = delta(H_LOAD, i);
        const supply =
          delta(F_PV_OUT, i) + delta(F_GRID_IN, i) - delta(F_GRID_OUT, i) + delta(F_BATT_OUT, i) - delta(F_BATT_IN, i);
        assert.ok(
          Math.abs(load - supply) <= 1e-6 * Math.max(1, load) + 1e-3,
          `${site.name} at ${toIsoSeconds(history.time(i))}: load ${load} Wh, supply ${supply} Wh`,
        );
      }
      const st = simulator.siteState(site.siteReference);
      assert.ok(Math.abs(st.loadW - st.pvW - st.batteryW - st.gridW) <= 2, 'instant balance');
    }
  });

  it('balances the battery with its efficiency: stored change = charged * sqrt(eff) - discharged / sqrt(eff)', () => {
    const simulator = sim(4);
    drive(simulator);
    for (const site of DEFAULT_SITES) {
      const history = historyOf(simulator, site);
      const cap = site.battery.capacityWh;
      let charged = 0;
      let discharged = 0;
      for (let i = 0; i + 1 < history.length; i++) {
        const inWh = history.value(F_BATT_IN, i + 1) - history.value(F_BATT_IN, i);
        const outWh = history.value(F_BATT_OUT, i + 1) - history.value(F_BATT_OUT, i);
        const stored = ((history.value(F_SOC, i + 1) - history.value(F_SOC, i)) / 100) * cap;
        assert.ok(
          Math.abs(stored - (inWh * SQRT_EFF - outWh / SQRT_EFF)) <= 1e-6 * cap,
          `${site.name} at ${toIsoSeconds(history.time(i))}`,
        );
        charged += inWh;
        discharged += outWh;
        const soc = history.value(F_SOC, i + 1);
        assert.ok(
          soc >= BATTERY_DEFAULTS.minSoc - 1e-6 && soc <= BATTERY_DEFAULTS.maxSoc + 1e-6,
          `SOC ${soc} within the window`,
        );
      }
      assert.ok(
        charged > 10 * cap && discharged > 10 * cap,
        `${site.name} cycles (${charged} Wh in, ${discharged} Wh out)`,
      );
      assert.ok(discharged < charged, 'losses: less comes out than went in');
    }
  });

  it("counters' differences equal the hourly power series' energy within 1 %, over ranges before, across and after the start", () => {
    const simulator = sim(6);
    drive(simulator);
    const now = simulator.clock.now();
    const ranges: Array<[number, number]> = [
      [T0 - 300 * DAY_MS, T0 - 299 * DAY_MS],
      [T0 - 30 * DAY_MS, T0],
      [T0 - 3 * DAY_MS - 5 * HOUR_MS, T0 - 2 * DAY_MS],
      [T0 - 7 * HOUR_MS, T0 + 9 * HOUR_MS],
      [T0 - HOUR_MS, T0 + HOUR_MS],
      [T0 + 2 * HOUR_MS, T0 + 3 * HOUR_MS],
      [T0 + 4 * HOUR_MS, Math.floor(now / HOUR_MS) * HOUR_MS],
    ];
    const devices: Array<[string, Array<[string, number]>]> = [];
    for (const site of DEFAULT_SITES) {
      devices.push([
        site.battery.deviceReference,
        [
          ['totalEnergyProduced', 1],
          ['totalEnergyConsumed', -1],
        ],
      ]);
      devices.push([site.pv.deviceReference, [['totalEnergyProduced', 1]]]);
      devices.push([
        site.meter.deviceReference,
        [
          ['totalEnergyConsumed', 1],
          ['totalEnergyProduced', -1],
        ],
      ]);
    }
    let worst = 0;
    let checked = 0;
    for (const [ref, counters] of devices) {
      for (const [a, b] of ranges) {
        const power = series(simulator, ref, 'power', a, b).data;
        assert.equal(power.length, (b - a) / HOUR_MS);
        const fromPower = power.reduce((x, y) => x + y, 0); // W over 1 h each: Wh
        let fromCounters = 0;
        for (const [p, sign] of counters) {
          const counter = series(simulator, ref, p, a, b + HOUR_MS, (b - a) / HOUR_MS).data; // the values at a and b
          fromCounters += sign * (counter[1] - counter[0]);
        }
        const err = Math.abs(fromPower - fromCounters);
        const scale = Math.max(Math.abs(fromCounters), counters.length * 1000); // at least 1 kWh per counter
        assert.ok(
          err <= 0.01 * scale,
          `${ref} ${toIsoSeconds(a)}..${toIsoSeconds(b)}: counters ${fromCounters} Wh, power ${fromPower} Wh`,
        );
        worst = Math.max(worst, err / scale);
        checked++;
      }
    }
    assert.equal(checked, 6 * ranges.length);
    console.log(`      worst error of ${checked} range checks: ${(worst * 100).toFixed(4)} %`);
  });

  it('a power point is the average over its interval; the point at now is the live reading', () => {
    const simulator = sim(6);
    drive(simulator);
    const now = simulator.clock.now();
    const ref = COM.pv.deviceReference;
    const three = series(simulator, ref, 'power', T0 - DAY_MS, T0 + 2 * HOUR_MS, 3).data;
    const ones = series(simulator, ref, 'power', T0 - DAY_MS, T0 + 2 * HOUR_MS, 1).data;
    for (let k = 0; k < three.length - 1; k++) {
      const mean = (ones[3 * k] + ones[3 * k + 1] + ones[3 * k + 2]) / 3;
      assert.ok(Math.abs(three[k] - mean) <= 1, `3 h point ${k}: ${three[k]} vs ${mean}`);
    }
    const last = series(simulator, ref, 'power', now - HOUR_MS, now + HOUR_MS, 1);
    assert.equal(last.time[last.time.length - 1], toIsoSeconds(now));
    assert.equal(last.data[last.data.length - 1], simulator.measure(ref, 'power').value);
  });

  it('is continuous into the live state at the start: the warm-up ends at the initial SOC and counters', () => {
    for (const start of [T0, T0 + 7 * MINUTE_MS + 13_000]) {
      const simulator = sim(8, start);
      for (const site of DEFAULT_SITES) {
        const model = simulator.site(site.siteReference);
        const live = model.snapshot();
        const past = computePast(
          site,
          8,
          model.key,
          start,
          HISTORY_DAYS,
          (def, seed, t0, startSoc, target) => new SiteModel(def, seed, t0, { warmUp: { startSoc, target } }),
        );
        assert.ok(
          Math.abs(past.end[F_SOC] - site.battery.initialSoc) < 1e-9,
          `${site.name}: warm-up ends at ${past.end[F_SOC]} %`,
        );
        for (const col of [F_BATT_IN, F_BATT_OUT, F_PV_OUT, F_GRID_IN, F_GRID_OUT])
          assert.ok(Math.abs(past.end[col] - live[col]) < 1e-3, `${site.name} counter ${col}`);
        const history = model.past();
        const lastWarmUp = history.indexAtOrBefore(start - 1);
        assert.ok(
          start - history.time(lastWarmUp) <= QUARTER_HOUR_MS && history.time(lastWarmUp + 1) === start,
          'the live start follows the last warm-up sample',
        );
        assert.ok(
          Math.abs(history.value(F_SOC, lastWarmUp) - live[F_SOC]) <= 1.01,
          `SOC ${history.value(F_SOC, lastWarmUp)} -> ${live[F_SOC]}`,
        );
        const maxWh = (Math.max(site.pv.peakW, site.load.maxW) + site.battery.maxPowerW) * 0.25;
        for (const col of [F_BATT_IN, F_BATT_OUT, F_PV_OUT, F_GRID_IN, F_GRID_OUT]) {
          const step = live[col] - history.value(col, lastWarmUp);
          assert.ok(step >= 0 && step <= maxWh, `${site.name} counter ${col} steps ${step} Wh into the start`);
        }
      }
    }
  });

  it('has a 7-day SOC history that is not periodic: day-to-day correlation below 0.98', () => {
    const seen: string[] = [];
    for (const seed of [1, 2, 3]) {
      const simulator = sim(seed);
      for (const site of DEFAULT_SITES) {
        const soc = socWeek(historyOf(simulator, site), T0);
        const correlation = corr(soc.slice(0, 6 * 96), soc.slice(96)); // each day against the next
        assert.ok(correlation < 0.98, `${site.name}, seed ${seed}: ${correlation}`);
        assert.ok(Math.max(...soc) - Math.min(...soc) > 20, `${site.name}, seed ${seed}: the battery is used`);
        seen.push(`${site.name} seed ${seed}: ${correlation.toFixed(3)}`);
      }
    }
    console.log(`      day-to-day correlation: ${seen.join('; ')}`);
  });

  it('is deterministic for a seed and differs for another seed', () => {
    const [a, b, c] = [sim(11), sim(11), sim(12)];
    for (const x of [a, b, c]) drive(x);
    const now = a.clock.now();
    for (const [ref, p] of [
      [COM.battery.deviceReference, 'soc'],
      [HOME.pv.deviceReference, 'power'],
      [HOME.meter.deviceReference, 'totalEnergyProduced'],
    ]) {
      for (const [from, to] of [
        [T0 - 390 * DAY_MS, T0 - 370 * DAY_MS],
        [T0 - 7 * DAY_MS, now],
      ]) {
        const sa = series(a, ref, p, from, to);
        assert.deepEqual(series(b, ref, p, from, to), sa);
        assert.notDeepEqual(series(c, ref, p, from, to).data, sa.data, `${ref} ${p}`);
      }
    }
  });

  it('PV follows the sun by day and season and the weather; load follows weekdays and weekends', () => {
    const key = 12345;
    const noon = (y: number, m: number, d: number) => Date.UTC(y, m, d, 12);
    const maxOver = (days: number, t0: number) => {
      let best = 0;
      for (let d = 0; d < days; d++) best = Math.max(best, pvPotentialW(1, key, 10_000, t0 + d * DAY_MS));
      return best;
    };
    const june = maxOver(30, noon(2026, 5, 1));
    const december = maxOver(30, noon(2026, 11, 1));
    assert.ok(
      june > 7000 && december > 2000 && december < 0.5 * june,
      `clear noons: June ${june} W, December ${december} W`,
    );
    assert.ok(pvPotentialW(1, key, 10_000, Date.UTC(2026, 5, 21, 5)) > 0, 'a June morning at 05:00 UTC has sun');
    assert.equal(
      pvPotentialW(1, key, 10_000, Date.UTC(2026, 11, 21, 7)),
      0,
      'a December morning at 07:00 UTC has none',
    );
    // Seeded weather: noon output varies from day to day (clear, mixed and cloudy days).
    const noons = Array.from({ length: 60 }, (_, d) => pvPotentialW(1, key, 10_000, noon(2026, 4, 1) + d * DAY_MS));
    assert.ok(Math.min(...noons) < 0.45 * Math.max(...noons), 'cloudy days among clear ones');
    const meanLoad = (profile: 'commercial' | 'residential', day: number) => {
      let sum = 0;
      for (let q = 0; q < 96; q++) sum += loadW(1, key, profile, 0, 1000, Date.UTC(2026, 2, day) + q * QUARTER_HOUR_MS);
      return sum / 96;
    };
    // 9 March 2026 is a Monday, 15 March a Sunday.
    assert.ok(meanLoad('commercial', 15) < 0.6 * meanLoad('commercial', 9), 'a business is closed on Sundays');
    assert.notEqual(meanLoad('residential', 15), meanLoad('residential', 9));
  });

  it('before the history the site is at rest: counters flat, power 0, SOC kept; the answer has the usual shape', () => {
    const simulator = sim(2);
    const first = historyOf(simulator, COM).firstTime;
    const far = T0 - 3 * 365 * DAY_MS;
    const counters = series(simulator, COM.pv.deviceReference, 'totalEnergyProduced', far, far + 30 * DAY_MS);
    assert.equal(counters.time.length, 30 * 24);
    assert.equal(counters.time[0], toIsoSeconds(far));
    assert.ok(counters.data.every((v) => v === counters.data[0] && v > 0));
    assert.ok(series(simulator, COM.pv.deviceReference, 'power', far, far + DAY_MS).data.every((v) => v === 0));
    const soc = series(simulator, COM.battery.deviceReference, 'soc', far, far + DAY_MS).data;
    assert.ok(soc.every((v) => v === soc[0] && v >= BATTERY_DEFAULTS.minSoc && v <= BATTERY_DEFAULTS.maxSoc));
    const across = series(
      simulator,
      COM.pv.deviceReference,
      'totalEnergyProduced',
      first - DAY_MS,
      first + DAY_MS,
    ).data;
    assert.equal(across[0], across[24], 'flat up to the first sample');
    assert.ok(across[47] > across[24], 'then it grows');
  });

  it('starts the history later when the initial counters are too small for the warm-up (never below 0)', async () => {
    const small: SiteDefinition = {
      ...HOME,
      siteReference: 'ste_Sma11Count01',
      battery: {
        ...HOME.battery,
        deviceReference: 'dvc_Sma11Batt001',
        initialConsumedWh: 500_000,
        initialProducedWh: 400_000,
      },
      pv: { ...HOME.pv, deviceReference: 'dvc_Sma11Pv00001', initialProducedWh: 2_000_000 },
      meter: { ...HOME.meter, deviceReference: 'dvc_Sma11Meter01' },
    };
    const started = await startSimulator({ seed: 3, startTime: T0, frozen: true, sites: [small] });
    try {
      const history = started.sim.site(small.siteReference).past();
      assert.ok(history.firstTime > T0 - HISTORY_DAYS * DAY_MS && history.firstTime < T0, 'a shorter history');
      for (const col of [F_BATT_IN, F_BATT_OUT, F_PV_OUT, F_GRID_IN, F_GRID_OUT]) assert.ok(history.value(col, 0) >= 0);
      const res = await fetch(`${started.url}/devices/${small.battery.deviceReference}/measurements/time-series`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          property: 'totalEnergyProduced',
          range: { type: 'absolute', start: toIsoSeconds(T0 - 30 * DAY_MS), end: toIsoSeconds(T0) },
          resolution: { value: 24, unit: 'h' },
        }),
      });
      const body = (await res.json()) as { time: string[]; data: number[] };
      assert.equal(res.status, 200);
      assert.equal(body.data.length, 30);
      assert.ok(body.data.every((v, i) => v >= 0 && (i === 0 || v >= body.data[i - 1])));
      assert.equal(
        (
          (await (
            await fetch(
              `${started.url}/devices/${small.battery.deviceReference}/measurement?property=totalEnergyProduced`,
            )
          ).json()) as { value: number }
        ).value,
        400_000,
      );
    } finally {
      await started.close();
    }
  });

  it('computes the past lazily: constructing a simulator runs no warm-up', () => {
    const simulator = sim(5);
    const history = simulator.site(COM.siteReference).history;
    assert.equal(history.length, 1, 'only the sample at the start');
    series(simulator, COM.pv.deviceReference, 'power', T0, T0 + HOUR_MS);
    assert.equal(history.length, 1, 'a range after the start needs no past');
    series(simulator, COM.pv.deviceReference, 'power', T0 - HOUR_MS, T0 + HOUR_MS);
    assert.equal(history.length, HISTORY_DAYS * 96 + 1);
  });
});
