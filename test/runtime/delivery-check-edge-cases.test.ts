/**
 * The runtime room's edges (src/runtime), part 2: delivery checks given hostile answers, bad
 * devices, aborted signals, very long waits and listeners that throw; building a runtime from
 * config-node settings that are wrong; the built-in simulator failing to start. Reads are a
 * fake coalescer that records what it was asked; time is a fake clock.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { apiError } from '../../src/client';
import type { MeasurementList, ReadRequest } from '../../src/protocol/types';
import {
  DeliveryCheck,
  componentsOf,
  readingOf,
  type CheckClock,
  type CheckRequest,
  type DeliveryReport,
} from '../../src/runtime/delivery-check';
import { useCrashWatch } from '../helpers/faults';

const T0 = Date.UTC(2026, 5, 1, 12);
const MIN = 60_000;

async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** A fake clock as a CheckClock. */
function checkClock(c: ReturnType<typeof FakeTimers.createClock>): CheckClock & { sets: number[] } {
  const sets: number[] = [];
  return {
    sets,
    now: () => c.now,
    setTimeout: (fn, ms) => {
      sets.push(ms);
      return c.setTimeout(fn, ms);
    },
    clearTimeout: (t) => c.clearTimeout(t as never),
  };
}

/** Reads answered by `answer` (per device and properties), each recorded with the clock's time. */
function fakeReads(clock: { now: number }, answer: (r: ReadRequest) => Promise<MeasurementList>) {
  const asked: Array<{ at: number; device: string; properties: string[] }> = [];
  return {
    asked,
    rt: {
      reads: {
        read: (r: ReadRequest) => {
          asked.push({ at: clock.now, device: r.device, properties: [...r.properties] });
          return answer(r);
        },
      },
    } as never,
  };
}

const counters = (at: number, produced: number, consumed: number): MeasurementList => ({
  reference: 'dvc_b',
  measurements: [
    { timestamp: at, property: 'totalEnergyProduced', value: produced, unit: 'kWh' },
    { timestamp: at, property: 'totalEnergyConsumed', value: consumed, unit: 'kWh' },
  ],
});

const essReq = (over: Partial<CheckRequest> = {}): CheckRequest => ({
  site: 'ste_a',
  component: 'energyStorage',
  asked: { kind: 'setpoint', value: { value: 4, unit: 'kW' } },
  from: T0,
  until: T0 + 15 * MIN,
  devices: { battery: 'dvc_b' },
  ...over,
});

describe('runtime coverage: delivery checks at their edges', () => {
  const crashes = useCrashWatch();
  let clock: ReturnType<typeof FakeTimers.createClock>;
  beforeEach(() => {
    clock = FakeTimers.createClock(T0);
  });
  afterEach(() => assert.deepEqual(crashes.events, []));

  it("readingOf a hostile answer: skips junk entries and unknown units, takes the power's time without counters, else the local time", () => {
    const junk = {
      reference: 'd',
      measurements: [
        null,
        { property: 'totalEnergyProduced', value: 'NaN', unit: 'kWh' },
        { property: 'totalEnergyConsumed', value: Number.POSITIVE_INFINITY, unit: 'kWh' },
        { property: 'totalEnergyProduced', value: 3, unit: 'GWh', timestamp: 5 },
        { property: 'power', value: 2, unit: 'kW', timestamp: 'x' },
        { property: 'power', value: 1, unit: 'kW', timestamp: 7 },
      ],
    } as unknown as MeasurementList;
    assert.deepEqual(readingOf(junk, 99), { at: 7, power: 1000 });
    assert.deepEqual(
      readingOf(
        { reference: 'd', measurements: [{ property: 'power', value: 5, timestamp: Number.NaN }] } as never,
        42,
      ),
      { at: 42, power: 5 },
      'no unit: W; no time: the local one',
    );
    assert.deepEqual(readingOf(null as never, 11), { at: 11 });
    assert.deepEqual(
      readingOf(
        {
          reference: 'd',
          measurements: [{ property: 'totalEnergyConsumed', value: 2, unit: 'MWh', timestamp: 3 }],
        } as never,
        0,
      ),
      { at: 3, consumed: 2e6 },
    );
  });

  it('componentsOf: a grid target without deadband, grid limits with one bound each way', () => {
    const kW = (value: number) => ({ value, unit: 'kW' as const });
    assert.deepEqual(componentsOf({ site: 's', kind: 'grid-target', gridTarget: { setpoint: kW(3) } } as never).asked, [
      { component: 'gridTarget', asked: { kind: 'setpoint', value: kW(3) } },
    ]);
    assert.deepEqual(
      componentsOf({ site: 's', kind: 'grid-limits', gridLimits: { upperLimit: kW(9) } } as never).asked,
      [{ component: 'gridLimits', asked: { kind: 'range', upper: kW(9) } }],
    );
    assert.deepEqual(
      componentsOf({ site: 's', kind: 'grid-limits', gridLimits: { lowerLimit: kW(-9) } } as never).asked,
      [{ component: 'gridLimits', asked: { kind: 'range', lower: kW(-9) } }],
    );
  });

  it('a check given an aborted signal ends at once: no read, no report, no timer', async () => {
    const { asked, rt } = fakeReads(clock, async () => counters(T0, 0, 0));
    const reports: DeliveryReport[] = [];
    const check = new DeliveryCheck(essReq(), rt, {
      clock: checkClock(clock),
      signal: AbortSignal.abort(),
      onReport: (r) => reports.push(r),
    });
    const report = await check.done;
    assert.equal(report.followed, 'unknown');
    assert.equal(report.reason, 'cancelled before the window ended');
    await check.started;
    assert.deepEqual([asked.length, reports.length, clock.countTimers(), check.active], [0, 0, 0, false]);
  });

  it('a device reference that is not one: "unknown" naming the device field and why, no read', async () => {
    const { asked, rt } = fakeReads(clock, async () => counters(T0, 0, 0));
    const reports: DeliveryReport[] = [];
    const check = new DeliveryCheck(essReq({ devices: { battery: 'not a reference!' } }), rt, {
      clock: checkClock(clock),
      onReport: (r) => reports.push(r),
    });
    await clock.tickAsync(15 * MIN);
    const report = await check.done;
    assert.equal(report.followed, 'unknown');
    assert.match(report.reason!, /batteryDevice/);
    assert.equal(asked.length, 0);
    assert.deepEqual(reports, [report]);
  });

  it('ended before its window began: "replaced before its start", no read; end() and cancel() after that change nothing', async () => {
    const { asked, rt } = fakeReads(clock, async () => counters(T0, 0, 0));
    const reports: DeliveryReport[] = [];
    const check = new DeliveryCheck(essReq({ from: T0 + 5 * MIN, until: T0 + 20 * MIN }), rt, {
      clock: checkClock(clock),
      onReport: (r) => reports.push(r),
    });
    assert.equal(clock.countTimers(), 1);
    check.end();
    const report = await check.done;
    assert.equal(report.reason, 'replaced before its start');
    check.end();
    check.cancel();
    assert.equal(await check.done, report);
    await clock.tickAsync(30 * MIN);
    assert.deepEqual(
      [asked.length, reports.length, clock.countTimers()],
      [0, 0, 0],
      'no report: the one that replaced it reports',
    );
  });

  it("a window that begins in 30 days: the wait is chained past setTimeout's limit and the first reading comes at its start", async () => {
    const from = T0 + 30 * 24 * 60 * MIN;
    const { asked, rt } = fakeReads(clock, async (r) => counters(clock.now, r.properties.length, 0));
    const cc = checkClock(clock);
    const check = new DeliveryCheck(essReq({ from, until: from + 15 * MIN }), rt, { clock: cc });
    assert.deepEqual(cc.sets, [2_000_000_000]);
    await clock.tickAsync(2_000_000_000);
    assert.equal(asked.length, 0);
    assert.deepEqual(cc.sets, [2_000_000_000, from - T0 - 2_000_000_000], 'armed again for the rest');
    await clock.tickAsync(from - clock.now);
    await turns();
    assert.deepEqual(
      asked.map((a) => a.at),
      [from],
    );
    check.cancel();
    assert.equal((await check.done).reason, 'cancelled before the window ended');
  });

  it('a listener that throws does not end the check: every part is still reported, the last resolves done', async () => {
    let count = 0;
    const { rt } = fakeReads(clock, async () => counters(clock.now, 0, count++ * 0.25));
    let calls = 0;
    const check = new DeliveryCheck(essReq({ until: T0 + 30 * MIN }), rt, {
      clock: checkClock(clock),
      everyMs: 15 * MIN,
      onReport: () => {
        calls++;
        throw new Error('listener bug');
      },
    });
    await check.started;
    await clock.tickAsync(15 * MIN);
    await turns();
    await clock.tickAsync(15 * MIN);
    const report = await check.done;
    assert.equal(calls, 2);
    assert.equal(report.from, T0 + 15 * MIN);
    assert.equal(report.measured?.value, -1, 'charging 1 kW in each quarter hour');
  });

  it("cancelled while a part's end reading is under way: that part is not reported, done says cancelled", async () => {
    let hold: ((m: MeasurementList) => void) | undefined;
    const { asked, rt } = fakeReads(clock, (r) =>
      asked.length > 1
        ? new Promise((res) => {
            hold = res;
          })
        : Promise.resolve(counters(clock.now, r.properties.length, 0)),
    );
    const reports: DeliveryReport[] = [];
    const check = new DeliveryCheck(essReq({ until: T0 + 30 * MIN }), rt, {
      clock: checkClock(clock),
      everyMs: 15 * MIN,
      onReport: (r) => reports.push(r),
    });
    await check.started;
    await clock.tickAsync(15 * MIN);
    assert.equal(asked.length, 2, 'the end reading of the first part was asked');
    check.cancel('node closed');
    hold!(counters(clock.now, 3, 0));
    await turns();
    const report = await check.done;
    assert.equal(report.reason, 'node closed');
    assert.deepEqual(reports, []);
    assert.equal(clock.countTimers(), 0);
  });

  it('a read that fails with a non-Error: the report says which reading failed and what it was', async () => {
    const { rt } = fakeReads(clock, () => Promise.reject('socket gone'));
    const check = new DeliveryCheck(essReq(), rt, { clock: checkClock(clock) });
    await clock.tickAsync(15 * MIN);
    const report = await check.done;
    assert.equal(report.reason, 'start reading failed: socket gone');
  });

  it('counters without a unit it knows and no power: "unknown" with the reason, never a verdict without data', async () => {
    const { rt } = fakeReads(
      clock,
      async () =>
        ({
          reference: 'dvc_b',
          measurements: [{ timestamp: clock.now, property: 'totalEnergyProduced', value: 1, unit: 'BTU' }],
        }) as MeasurementList,
    );
    const check = new DeliveryCheck(essReq(), rt, { clock: checkClock(clock) });
    await clock.tickAsync(15 * MIN);
    const report = await check.done;
    assert.equal(report.followed, 'unknown');
    assert.match(report.reason!, /totalEnergyProduced and totalEnergyConsumed/);
  });

  it('the properties each device answers are remembered for at most 1000 devices; past that, they are learnt again', async () => {
    // Every device refuses counters with power (404); counters alone work.
    const refusal = apiError({
      code: 'HTTP_404',
      status: 404,
      message: 'unknown property',
      request: { method: 'GET', path: '-' },
    });
    const { asked, rt } = fakeReads(clock, async (r) => {
      if (r.properties.includes('power')) throw refusal;
      return counters(clock.now, 0, 0);
    });
    const checkOne = async (device: string) => {
      const check = new DeliveryCheck(essReq({ devices: { battery: device } }), rt, { clock: checkClock(clock) });
      await check.started;
      check.cancel();
    };
    await checkOne('dvc_first');
    assert.equal(asked.length, 2, 'refused with power, then counters alone');
    await checkOne('dvc_first');
    assert.equal(asked.length, 3, 'remembered: counters alone at once');
    for (let i = 1; i < 1000; i++) await checkOne(`dvc_${i}`);
    const before = asked.length;
    await checkOne('dvc_one_more'); // the 1001st device: the memo starts afresh
    await checkOne('dvc_first');
    assert.deepEqual(
      asked.slice(before + 2).map((a) => a.properties.length),
      [3, 2],
      'dvc_first learnt again',
    );
  });
});
