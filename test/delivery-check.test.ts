/**
 * The delivery check: the pure formulas and verdicts (src/protocol/delivery.ts),
 * and the runtime's check (src/runtime/delivery-check.ts) against the simulator with a frozen
 * clock, driven by a @sinonjs/fake-timers clock advanced in step with the simulator's.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import FakeTimers from '@sinonjs/fake-timers';
import { EmsClient } from '../src/client';
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
  type DeliveryReport,
} from '../src/protocol/delivery';
import { MINUTE_MS } from '../src/protocol/time';
import { ReadCoalescer } from '../src/runtime/coalescer';
import { DeliveryCheck, check, componentsOf, readingOf, type CheckClock } from '../src/runtime/delivery-check';
import { startSimulator, type SiteDefinition, type StartedSimulator } from '../src/simulator';
import { DELIVERY_SITES } from './helpers/delivery-sites';

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

  it('componentsOf: one asked item per component of a command; a cancel ends the grid target', () => {
    const components = componentsOf({
      site: 's',
      kind: 'combined',
      energyStorageSetting: kW(5),
      productionCurtailment: kW(300),
      maximizeGridImport: false,
      validUntil: 1,
    });
    assert.deepEqual(
      components.asked.map((a) => [a.component, a.asked.kind]),
      [
        ['energyStorage', 'setpoint'],
        ['curtailment', 'max'],
        ['maximizeGridImport', 'flag'],
      ],
    );
    const gridComponents = componentsOf({
      site: 's',
      kind: 'grid-target',
      gridTarget: { setpoint: kW(3), deadband: kW(1) },
      validUntil: 1,
    });
    assert.deepEqual(gridComponents.asked[0].asked, { kind: 'setpoint', value: kW(3), deadbandW: 1000 });
    assert.deepEqual(componentsOf({ site: 's', kind: 'cancel-grid-target' }), { asked: [], ends: ['gridTarget'] });
  });

  it("readingOf: counters in Wh (kWh, MWh converted), power in W, the instant from the counters' timestamps", () => {
    const reading = readingOf(
      {
        reference: 'd',
        measurements: [
          { timestamp: 5, property: 'totalEnergyProduced', value: 2, unit: 'kWh' },
          { timestamp: 7, property: 'totalEnergyConsumed', value: 300, unit: 'Wh' },
          { timestamp: 9, property: 'power', value: 1.5, unit: 'kW' },
        ],
      },
      100,
    );
    assert.deepEqual(reading, { at: 7, produced: 2000, consumed: 300, power: 1500 });
    assert.deepEqual(
      readingOf({ reference: 'd', measurements: [{ timestamp: 3, property: 'power', value: 1, unit: 'W' }] }, 100),
      { at: 3, power: 1 },
    );
    assert.deepEqual(
      readingOf(
        { reference: 'd', measurements: [{ timestamp: 3, property: 'totalEnergyProduced', value: 1, unit: 'J' }] },
        100,
      ),
      { at: 100 },
      'an unknown unit is not used',
    );
  });
});

describe('delivery check against the simulator (frozen clock, fake timers)', () => {
  const SITES = DELIVERY_SITES;
  let simulator: StartedSimulator;
  let client: EmsClient;
  let reads: ReadCoalescer;
  let clock: FakeTimers.Clock;
  let cc: CheckClock;

  beforeEach(async () => {
    const t0 = Date.now();
    simulator = await startSimulator({ port: 0, frozen: true, startTime: t0, sites: Object.values(SITES) });
    client = new EmsClient({ baseUrl: simulator.url, retries: 0 });
    reads = new ReadCoalescer(client, 2);
    clock = FakeTimers.createClock(t0);
    cc = {
      now: () => clock.now,
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
      clearTimeout: (t) => clock.clearTimeout(t as FakeTimers.TimerId),
    };
  });
  afterEach(async () => {
    reads.close();
    client.close();
    await simulator.close();
  });

  /** Moves both clocks by `ms` and runs the timers due (the readings they start are awaited by the caller). */
  async function advance(ms: number): Promise<void> {
    simulator.sim.clock.advance(ms);
    await clock.tickAsync(ms);
  }

  /** A check on the test clock, once its first reading was taken. */
  async function started(
    req: ConstructorParameters<typeof DeliveryCheck>[0],
    opts: ConstructorParameters<typeof DeliveryCheck>[2] = {},
  ): Promise<DeliveryCheck> {
    const deliveryCheck = new DeliveryCheck(req, { reads }, { clock: cc, ...opts });
    await deliveryCheck.started;
    return deliveryCheck;
  }

  /** Steers ESS on a test site (through the simulator's API) and checks it over `minutes`. */
  async function essCheck(site: SiteDefinition, kw: number, minutes = 15, opts: { everyMs?: number } = {}) {
    const until = clock.now + minutes * MINUTE_MS;
    await client.steerEss(site.siteReference, { setting: kW(kw), validUntil: until });
    const reports: DeliveryReport[] = [];
    const deliveryCheck = new DeliveryCheck(
      {
        site: site.siteReference,
        component: 'energyStorage',
        asked: setpoint(kw),
        from: clock.now,
        until,
        devices: { battery: site.battery.deviceReference },
      },
      { reads },
      { clock: cc, onReport: (r) => reports.push(r), ...opts },
    );
    await deliveryCheck.started;
    return { c: deliveryCheck, reports, until };
  }

  it("yes: ESS charge −5 kW within the battery's means; the report covers the window by the readings' timestamps", async () => {
    const t0 = clock.now;
    const { c, reports } = await essCheck(SITES.ok, -5);
    await advance(15 * MINUTE_MS);
    const report = await c.done;
    assert.deepEqual(reports, [report]);
    assert.equal(report.followed, 'yes');
    assert.equal(report.source, 'energy counters');
    assert.deepEqual(report.asked, { value: -5, unit: 'kW' });
    assert.ok(Math.abs((report.measured!.value as number) + 5) < 0.01, `measured ${report.measured!.value}`);
    assert.deepEqual([report.from, report.until], [t0, t0 + 15 * MINUTE_MS]);
    assert.equal(report.device, SITES.ok.battery.deviceReference);
    // At validUntil the signal has ended: the battery is back to self-consumption (1 kW load, no PV).
    assert.deepEqual(report.crossCheck, { start: -5, end: 1, unit: 'kW', agrees: true });
  });

  it('partly: a 10 kW discharge as the battery reaches its minimum SOC mid-window', async () => {
    const { c } = await essCheck(SITES.low, 10);
    await advance(15 * MINUTE_MS);
    const report = await c.done;
    assert.equal(report.followed, 'partly');
    // 1 kWh above the minimum, √0.9 of it delivered: about 3.8 kW over 15 minutes.
    assert.ok(report.measured!.value > 3.5 && report.measured!.value < 4.1, `measured ${report.measured!.value}`);
    assert.equal(report.crossCheck!.end, 0, 'empty at the end');
  });

  it('no: charging a full battery', async () => {
    const { c } = await essCheck(SITES.full, -5);
    await advance(15 * MINUTE_MS);
    const report = await c.done;
    assert.equal(report.followed, 'no');
    assert.equal(report.measured!.value, 0);
    assert.deepEqual(report.deviation, { value: 5, unit: 'kW', percent: 100 });
  });

  it('grid limits and grid target on the meter; curtailment on the PV; maximize grid import is reported as not measurable', async () => {
    const site = SITES.ok;
    const until = clock.now + 15 * MINUTE_MS;
    const devices = {
      battery: site.battery.deviceReference,
      pv: site.pv.deviceReference,
      meter: site.meter.deviceReference,
    };
    await client.steerGridLimits(site.siteReference, { upperLimit: kW(-2), validUntil: until });
    const limits = await started({
      site: site.siteReference,
      component: 'gridLimits',
      asked: { kind: 'range', upper: kW(-2) },
      from: clock.now,
      until,
      devices,
    });
    const curt = await started({
      site: site.siteReference,
      component: 'curtailment',
      asked: { kind: 'max', value: kW(0) },
      from: clock.now,
      until,
      devices,
    });
    const mgi = await started({
      site: site.siteReference,
      component: 'maximizeGridImport',
      asked: { kind: 'flag', value: true },
      from: clock.now,
      until,
      devices,
    });
    await advance(15 * MINUTE_MS);
    const [l, c, m] = await Promise.all([limits.done, curt.done, mgi.done]);
    assert.equal(l.followed, 'yes');
    assert.ok(
      Math.abs(l.measured!.value + 2) < 0.01,
      `grid ${l.measured!.value} kW: exports 2 kW (1 kW load, battery 3 kW)`,
    );
    assert.deepEqual(l.deviation, { value: 0, unit: 'kW', percent: 0 });
    assert.equal(c.followed, 'yes', 'no PV: 0 ≤ 0');
    assert.equal(m.followed, 'unknown');
    assert.match(m.reason!, /not measurable/);
    assert.ok(m.measured, 'the grid power is given all the same');

    const startedAt = clock.now;
    await client.steerGridTarget(site.siteReference, { setpoint: kW(3), validUntil: startedAt + 15 * MINUTE_MS });
    const gridCheck = await started({
      site: site.siteReference,
      component: 'gridTarget',
      asked: setpoint(3),
      from: startedAt,
      until: startedAt + 15 * MINUTE_MS,
      devices,
    });
    await advance(15 * MINUTE_MS);
    const gr = await gridCheck.done;
    assert.equal(gr.followed, 'yes');
    assert.ok(Math.abs(gr.measured!.value - 3) < 0.01, `grid ${gr.measured!.value} kW`);
  });

  it('unknown: a failed end reading (the service answers 500) says so, never yes', async () => {
    const { c } = await essCheck(SITES.ok, -5);
    simulator.sim.setFaults({ rate500: 1 });
    await advance(15 * MINUTE_MS);
    const report = await c.done;
    assert.equal(report.followed, 'unknown');
    assert.match(report.reason!, /^end reading failed: .*500/);
    assert.equal(report.measured, null);
  });

  it('unknown: a stopped service, a missing device, an unknown device, a window under a minute', async () => {
    const { c } = await essCheck(SITES.ok, -5);
    await simulator.close();
    await advance(15 * MINUTE_MS);
    const report = await c.done;
    assert.equal(report.followed, 'unknown');
    assert.match(report.reason!, /^end reading failed: /);
    simulator = await startSimulator({ port: 0, frozen: true, startTime: clock.now, sites: Object.values(SITES) });
    client.close();
    reads.close();
    client = new EmsClient({ baseUrl: simulator.url, retries: 0 });
    reads = new ReadCoalescer(client, 2);
    const base = {
      site: SITES.ok.siteReference,
      component: 'energyStorage' as const,
      asked: setpoint(1),
      from: clock.now,
      until: clock.now + 5 * MINUTE_MS,
    };
    const none = check({ ...base, devices: {} }, { reads }, { clock: cc });
    const unknown = await started({ ...base, devices: { battery: 'dvc_doesnotexist' } });
    const short = await started({ ...base, devices: { battery: SITES.ok.battery.deviceReference } });
    await advance(30_000);
    short.end();
    assert.match((await short.done).reason!, /window too short to measure: 30 s/);
    await advance(5 * MINUTE_MS);
    assert.equal((await none).reason, 'no battery device given (batteryDevice)');
    assert.match((await unknown.done).reason!, /^start reading failed: .*404/);
  });

  it('everyMs: a report per part while the window lasts, parts back to back, the last at its end', async () => {
    const t0 = clock.now;
    const { c, reports } = await essCheck(SITES.ok, -5, 15, { everyMs: 5 * MINUTE_MS });
    for (let i = 1; i <= 3; i++) {
      await advance(5 * MINUTE_MS);
      while (reports.length < i) await clock.tickAsync(0);
    }
    await c.done;
    assert.deepEqual(
      reports.map((r) => [r.from - t0, r.until - t0]),
      [
        [0, 5 * MINUTE_MS],
        [5 * MINUTE_MS, 10 * MINUTE_MS],
        [10 * MINUTE_MS, 15 * MINUTE_MS],
      ],
    );
    assert.deepEqual(
      reports.map((r) => r.followed),
      ['yes', 'yes', 'yes'],
    );
    assert.equal(clock.countTimers(), 0, 'no timer left');
  });

  it('end() cuts the window at once with a report up to now; cancel() (or the signal) ends it without one, and no timer stays', async () => {
    const t0 = clock.now;
    const { c, reports } = await essCheck(SITES.ok, -5);
    await advance(5 * MINUTE_MS);
    c.end();
    const report = await c.done;
    assert.deepEqual([report.from - t0, report.until - t0, report.followed], [0, 5 * MINUTE_MS, 'yes']);
    assert.equal(reports.length, 1);
    const ac = new AbortController();
    const seen: DeliveryReport[] = [];
    const secondCheck = new DeliveryCheck(
      {
        site: SITES.ok.siteReference,
        component: 'energyStorage',
        asked: setpoint(-5),
        from: clock.now,
        until: clock.now + 15 * MINUTE_MS,
        devices: { battery: SITES.ok.battery.deviceReference },
      },
      { reads },
      { clock: cc, signal: ac.signal, onReport: (x) => seen.push(x) },
    );
    ac.abort();
    const kr = await secondCheck.done;
    assert.equal(kr.followed, 'unknown');
    assert.match(kr.reason!, /cancelled/);
    await advance(20 * MINUTE_MS);
    assert.deepEqual(seen, [], 'no report after a cancel');
    assert.equal(clock.countTimers(), 0);
  });

  it("a finished check stops listening on the signal it was given (a node's signal outlives many checks)", async () => {
    const ac = new AbortController();
    for (let i = 0; i < 12; i++) {
      const deliveryCheck = new DeliveryCheck(
        {
          site: SITES.ok.siteReference,
          component: 'energyStorage',
          asked: setpoint(0),
          from: clock.now,
          until: clock.now + MINUTE_MS,
          devices: { battery: SITES.ok.battery.deviceReference },
        },
        { reads },
        { clock: cc, signal: ac.signal },
      );
      await deliveryCheck.started;
      deliveryCheck.end();
      await deliveryCheck.done;
    }
    await Promise.resolve();
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
  });

  it('a window that starts later is read when it starts', async () => {
    const from = clock.now + 10 * MINUTE_MS;
    const deliveryCheck = new DeliveryCheck(
      {
        site: SITES.ok.siteReference,
        component: 'energyStorage',
        asked: setpoint(0),
        from,
        until: from + 15 * MINUTE_MS,
        devices: { battery: SITES.ok.battery.deviceReference },
      },
      { reads },
      { clock: cc },
    );
    await advance(10 * MINUTE_MS);
    await deliveryCheck.started;
    await advance(15 * MINUTE_MS);
    const report = await deliveryCheck.done;
    assert.deepEqual([report.from, report.until], [from, from + 15 * MINUTE_MS]);
    assert.notEqual(report.followed, 'unknown');
  });
});

describe('delivery check: a device without energy counters', () => {
  it('falls back to its power property (source "power"), remembering what the device offers', async () => {
    const asked: string[] = [];
    let now = 1_700_000_000_000;
    const server = http.createServer((req, res) => {
      const props = new URL(req.url!, 'http://x').searchParams.get('properties') ?? '';
      asked.push(props);
      if (props.includes('totalEnergy')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"unknown property"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          reference: 'dvc_x',
          measurements: [{ timestamp: now, property: 'power', value: now % 2 ? 4000 : 6000, unit: 'W' }],
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new EmsClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, retries: 0 });
    const reads = new ReadCoalescer(client, 0);
    const clock = FakeTimers.createClock(now);
    const cc: CheckClock = {
      now: () => clock.now,
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
      clearTimeout: (t) => clock.clearTimeout(t as FakeTimers.TimerId),
    };
    try {
      const deliveryCheck = new DeliveryCheck(
        {
          site: 'ste_x',
          component: 'energyStorage',
          asked: setpoint(5),
          from: clock.now,
          until: clock.now + 15 * MINUTE_MS,
          devices: { battery: 'dvc_x' },
        },
        { reads },
        { clock: cc },
      );
      await deliveryCheck.started;
      now += 15 * MINUTE_MS + 1;
      await clock.tickAsync(15 * MINUTE_MS);
      const report = await deliveryCheck.done;
      assert.equal(report.source, 'power');
      assert.equal(report.followed, 'yes');
      assert.equal(report.measured!.value, 5, 'the mean of 6 kW and 4 kW');
      assert.match(report.reason!, /from the device's power at the window's ends/);
      assert.deepEqual(
        asked,
        ['totalEnergyProduced,totalEnergyConsumed,power', 'totalEnergyProduced,totalEnergyConsumed', 'power', 'power'],
        'the end reading asks for power alone',
      );
    } finally {
      client.close();
      await new Promise((r) => server.close(r));
    }
  });
});
