/**
 * The delivery check: the pure formulas and verdicts (src/protocol/delivery.ts),
 * and the runtime's check (src/runtime/delivery-check.ts) against the simulator with a frozen
 * clock, driven by a @sinonjs/fake-timers clock advanced in step with the simulator's.
 */
import assert from 'node:assert/strict';
import {
  DEFAULT_TOLERANCE,
  averageFromCounters,
  bandW,
  crossCheck,
  measuredReport,
  powerFromCounters,
  unknownReport,
  verdict,
  type Asked,
} from '../../src/protocol/delivery';
import { MINUTE_MS } from '../../src/protocol/time';

const kW = (value: number) => ({ value, unit: 'kW' as const });
const setpoint = (value: number, deadbandW?: number): Asked => ({
  kind: 'setpoint',
  value: kW(value),
  ...(deadbandW ? { deadbandW } : {}),
});

describe('delivery: formulas and verdicts (pure)', () => {
  it('formulas: ESS (Δproduced − Δconsumed)/Δt, positive = discharge; PV Δproduced/Δt; grid (Δconsumed − Δproduced)/Δt, positive = import', () => {
    assert.equal(powerFromCounters('battery', 2500, 0, 0.25), 10_000, 'discharge 2.5 kWh in 15 min: +10 kW');
    assert.equal(powerFromCounters('battery', 0, 1250, 0.25), -5000, 'charge: negative');
    assert.equal(powerFromCounters('battery', 300, 100, 0.5), 400);
    assert.equal(powerFromCounters('pv', 750, 999, 0.25), 3000, 'PV ignores consumed');
    assert.equal(powerFromCounters('meter', 500, 0, 0.25), -2000, 'export: negative');
    assert.equal(powerFromCounters('meter', 100, 600, 0.25), 2000, 'import: positive');
  });

  it('averageFromCounters: from two readings; missing counters, no time between them or a counter going backwards give a reason', () => {
    const start = { at: 0, produced: 1000, consumed: 500 };
    assert.deepEqual(averageFromCounters('battery', start, { at: 15 * MINUTE_MS, produced: 3500, consumed: 500 }), {
      watts: 10_000,
    });
    assert.deepEqual(averageFromCounters('pv', { at: 0, produced: 10 }, { at: 30 * MINUTE_MS, produced: 1010 }), {
      watts: 2000,
    });
    assert.match(
      (averageFromCounters('battery', { at: 0, produced: 1 }, { at: 60_000, produced: 2 }) as { reason: string })
        .reason,
      /totalEnergyProduced and totalEnergyConsumed/,
    );
    assert.match((averageFromCounters('meter', start, { ...start }) as { reason: string }).reason, /not apart in time/);
    assert.match(
      (averageFromCounters('meter', start, { at: 60_000, produced: 900, consumed: 600 }) as { reason: string }).reason,
      /backwards/,
    );
  });

  it("tolerance: 10 % of the asked power, at least 1 kW by default; a grid target's deadband widens it", () => {
    assert.deepEqual(DEFAULT_TOLERANCE, { percent: 10, minW: 1000 });
    assert.equal(bandW(50_000, DEFAULT_TOLERANCE), 5000);
    assert.equal(bandW(-5000, DEFAULT_TOLERANCE), 1000);
    assert.equal(bandW(5000, DEFAULT_TOLERANCE, 2000), 2000);
    assert.equal(verdict(setpoint(20, 4000), 16_500).followed, 'yes', 'within the 4 kW deadband');
    assert.equal(verdict(setpoint(20), 16_500).followed, 'partly', 'outside 2 kW without it');
  });

  it('setpoints: yes within the band, partly when it moved part of the way, no when it did not move, went the other way or overshot by more than asked', () => {
    const followed = (asked: number, measuredW: number) => verdict(setpoint(asked), measuredW).followed;
    assert.equal(followed(-50, -46_000), 'yes');
    assert.equal(followed(-50, -32_000), 'partly');
    assert.equal(followed(-50, -60_000), 'partly', 'overshoot by less than asked');
    assert.equal(followed(-50, -3000), 'no', 'barely moved: |dev| 47 kW ≥ 50 − 5 kW');
    assert.equal(followed(-50, 10_000), 'no', 'wrong direction');
    assert.equal(followed(-50, -120_000), 'no', 'overshoot by more than asked');
    assert.equal(followed(10, 3800), 'partly', 'battery emptied mid-window');
    assert.equal(followed(-5, 0), 'no', 'a full battery that cannot charge');
    assert.equal(followed(0, 900), 'yes', 'idle within 1 kW');
    assert.equal(followed(0, 1500), 'no', 'an asked 0 cannot be partly');
    assert.equal(followed(1.5, 600), 'yes', 'a small ask: the 1 kW floor');
    const judged = verdict(setpoint(-50), -32_000);
    assert.deepEqual([judged.targetW, judged.deviationW, judged.bandW], [-50_000, 18_000, 5000]);
  });

  it('limits: curtailment PV ≤ limit, grid limits lower ≤ grid ≤ upper; deviation = distance outside; yes or no (no partly)', () => {
    const cap: Asked = { kind: 'max', value: kW(300) };
    assert.deepEqual(verdict(cap, 120_000), { followed: 'yes', targetW: 300_000, deviationW: 0, bandW: 30_000 });
    assert.equal(verdict(cap, 325_000).followed, 'yes', 'within the band over the limit');
    assert.deepEqual(verdict(cap, 400_000), { followed: 'no', targetW: 300_000, deviationW: 100_000, bandW: 30_000 });
    const pct: Asked = { kind: 'max', value: { value: 40, unit: '%' }, percentOfW: 10_000 };
    assert.equal(verdict(pct, 6000).followed, 'no');
    assert.equal(
      verdict({ kind: 'max', value: { value: 40, unit: '%' } }, 5000).followed,
      'unknown',
      '% without the PV power',
    );
    const range: Asked = { kind: 'range', upper: kW(-100), lower: kW(-200) };
    assert.deepEqual(verdict(range, -150_000), { followed: 'yes', targetW: -100_000, deviationW: 0, bandW: 10_000 });
    assert.deepEqual(verdict(range, -50_000), { followed: 'no', targetW: -100_000, deviationW: 50_000, bandW: 10_000 });
    assert.deepEqual(verdict(range, -230_000), {
      followed: 'no',
      targetW: -200_000,
      deviationW: -30_000,
      bandW: 20_000,
    });
    assert.equal(verdict({ kind: 'range', lower: kW(-5) }, -5500).followed, 'yes', 'one bound, within its band');
  });

  it('maximize grid import is not measurable: unknown with the reason', () => {
    const flagVerdict = verdict({ kind: 'flag', value: true }, 20_000);
    assert.equal(flagVerdict.followed, 'unknown');
    assert.match(flagVerdict.reason!, /not measurable/);
  });

  it('reports: powers in the asked unit, deviation with percent, the band, the cross-check; unknown carries no measurement', () => {
    const input = {
      site: 'ste_x',
      component: 'energyStorage' as const,
      asked: setpoint(-50),
      from: 1,
      until: 2,
      source: 'energy counters' as const,
      device: 'dvc_b',
    };
    const report = measuredReport(input, -32_040.4, { startW: -50_000, endW: -10_000 });
    assert.deepEqual(report, {
      site: 'ste_x',
      component: 'energyStorage',
      asked: { value: -50, unit: 'kW' },
      measured: { value: -32.04, unit: 'kW' },
      deviation: { value: 17.96, unit: 'kW', percent: 35.9 },
      followed: 'partly',
      from: 1,
      until: 2,
      source: 'energy counters',
      device: 'dvc_b',
      tolerance: { value: 5, unit: 'kW' },
      crossCheck: { start: -50, end: -10, unit: 'kW', agrees: true },
    });
    const off = measuredReport(input, -32_000, { startW: 0, endW: 0 });
    assert.equal(off.crossCheck!.agrees, false);
    assert.match(off.reason!, /do not bracket/);
    assert.equal(crossCheck(5, 0, 10, 0), true);
    const gridReport = measuredReport(
      {
        ...input,
        component: 'gridLimits',
        asked: { kind: 'range', upper: kW(-100), lower: { value: -0.2, unit: 'MW' } },
      },
      -50_000,
    );
    assert.deepEqual(gridReport.asked, { value: -100, unit: 'kW', lower: -200, upper: -100 });
    assert.deepEqual(gridReport.deviation, { value: 50, unit: 'kW', percent: 50 });
    const notMeasured = unknownReport(input, 'end reading failed: HTTP 500');
    assert.deepEqual(notMeasured, {
      site: 'ste_x',
      component: 'energyStorage',
      asked: { value: -50, unit: 'kW' },
      measured: null,
      deviation: null,
      followed: 'unknown',
      from: 1,
      until: 2,
      source: 'energy counters',
      reason: 'end reading failed: HTTP 500',
      device: 'dvc_b',
    });
    const zero = measuredReport({ ...input, asked: setpoint(0) }, 300);
    assert.equal(zero.deviation!.percent, null, 'no percent of 0');
  });
});
