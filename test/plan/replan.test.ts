/**
 * Forecasts and re-planning, the pure parts: forecasts from a site's own history (same weekday and time over
 * the last weeks, or the last days) and any source's points resampled onto price slots
 * (src/plan/forecast.ts); the re-planning helpers (src/plan/replan.ts): the slots that changed,
 * the SOC a plan expects at an instant, the delivery reports' correction of it.
 */
import assert from 'node:assert/strict';
import { HOUR_MS, QUARTER_HOUR_MS } from '../../src/protocol/time';
import {
  changeTolerance,
  changedSlots,
  deliveryShiftKWh,
  scheduleSlots,
  socAt,
  type ScheduleSlot,
} from '../../src/plan/replan';
import { planSite, planFromPrices } from '../../src';

const T0 = Date.UTC(2026, 5, 1); // a Monday

describe('plan: re-planning helpers', () => {
  const slot = (k: number, kw: number, start = T0 + k * QUARTER_HOUR_MS): ScheduleSlot => ({
    start,
    end: T0 + (k + 1) * QUARTER_HOUR_MS,
    energyStorage: { value: kw, unit: 'kW' },
    price: 0,
    energyKWh: 0,
    socStart: 0,
    socEnd: 0,
  });

  it('changedSlots: matched by end; changed when new, moved, or its power differs by more than the tolerance', () => {
    const prev = [slot(0, 5), slot(1, 5), slot(2, -3), slot(3, 0)];
    assert.deepEqual(changedSlots(undefined, prev, 0.1), [0, 1, 2, 3]);
    // the slot in progress starts later (now): unchanged; a power within the tolerance: unchanged
    assert.deepEqual(changedSlots(prev, [slot(0, 5, T0 + 60_000), slot(1, 5.05), slot(2, -3), slot(3, 0)], 0.1), []);
    assert.deepEqual(
      changedSlots(prev, [slot(1, 5), slot(2, -2), slot(3, 0), slot(4, 1)], 0.1),
      [1, 3],
      'a changed power and a new slot',
    );
    assert.deepEqual(changedSlots(prev, [slot(1, 5, T0)], 0.1), [0], 'starts earlier than the slot it was');
    assert.equal(changeTolerance(10), 0.1);
    assert.equal(changeTolerance(0.5), 0.01, 'at least 10 W');
  });

  it('socAt: linear within a slot, the first value before, undefined after the end', () => {
    const curve = [
      { time: 0, soc: 50 },
      { time: 100, soc: 60 },
      { time: 200, soc: 40 },
    ];
    assert.equal(socAt(curve, -5), 50);
    assert.equal(socAt(curve, 50), 55);
    assert.equal(socAt(curve, 150), 50);
    assert.equal(socAt(curve, 200), 40);
    assert.equal(socAt(curve, 201), undefined);
    assert.equal(socAt([], 0), undefined);
  });

  it("deliveryShiftKWh: measured − asked over the window since the plan, through the asked direction's efficiency", () => {
    const hour = HOUR_MS;
    // asked to discharge 4 kW for an hour, measured 1 kW: 3 kWh not taken out, 3/0.95 kWh more in the store
    assert.ok(
      Math.abs(
        deliveryShiftKWh(
          [{ asked: { value: 4, unit: 'kW' }, measured: { value: 1000, unit: 'W' }, from: 0, until: hour }],
          0,
          hour,
          0.9,
          0.95,
        ) -
          3 / 0.95,
      ) < 1e-12,
    );
    // asked to charge 4 kW, measured 1 kW charging: 3 kW less charged, 3·0.9 kWh less stored; only the half hour after the plan counts
    assert.ok(
      Math.abs(
        deliveryShiftKWh(
          [{ asked: { value: -4, unit: 'kW' }, measured: { value: -1, unit: 'kW' }, from: 0, until: hour }],
          hour / 2,
          hour,
          0.9,
          0.95,
        ) +
          1.5 * 0.9,
      ) < 1e-12,
    );
    assert.equal(
      deliveryShiftKWh(
        [{ asked: { value: -4, unit: 'kW' }, measured: null, from: 0, until: hour, followed: 'unknown' }],
        0,
        hour,
        0.9,
        0.95,
      ),
      0,
    );
  });

  it("scheduleSlots: a price plan's own slots; a site plan's without the fields ems-schedule refuses", () => {
    const prices = [0.3, 0.1, 0.4].map((price, k) => ({ start: T0 + k * HOUR_MS, end: T0 + (k + 1) * HOUR_MS, price }));
    const battery = { capacityKWh: 10, maxChargeKW: 5, soc: 50 };
    const pp = planFromPrices({ prices, battery });
    assert.equal(scheduleSlots(pp), pp.slots);
    const sp = planSite({ prices, battery, loadForecast: [500, 500, 500] });
    const out = scheduleSlots(sp);
    assert.deepEqual(Object.keys(out[0]).sort(), [
      'end',
      'energyKWh',
      'energyStorage',
      'price',
      'socEnd',
      'socStart',
      'start',
    ]);
    assert.deepEqual(
      out.map((s) => s.energyStorage),
      sp.slots.map((s) => s.energyStorage),
    );
  });
});
