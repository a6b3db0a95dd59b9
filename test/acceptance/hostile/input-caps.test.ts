/**
 * Every array a node reads from a message (or from the state it stored) has a cap in
 * src/protocol/limits.ts, and a longer one is refused by its length alone: a 1,000,000-element
 * input is refused naming the field, the limit and the length found, and NONE of its elements
 * is read. Each huge array here is a Proxy that counts reads of its elements (index gets, `in`,
 * descriptors, key lists), so the proof is the count, not a time.
 */
import assert from 'node:assert/strict';
import { INPUTS, SERVICE } from '../../../src/protocol/limits';
import { ValidationError } from '../../../src/protocol/errors';
import {
  parseFleetSites,
  parseSiteList,
  parseSlots,
  validateProperties,
  type ScheduleSettings,
} from '../../../src/protocol';
import {
  loadForecastFromHistory,
  planBattery,
  planFromPrices,
  planSite,
  readPriceFeed,
  readSeries,
  resampleForecast,
} from '../../../src/plan';
import { located } from '../../../src/nodes/plan/located';
import { gather } from '../../../src/nodes/plan/message';
import { restoreState } from '../../../src/nodes/schedule/stored';
import { fleetList } from '../../../src/nodes/device-read/fleet';
import { countedReads } from '../../helpers/counted';

const HUGE_COUNT = 1_000_000;
const HOUR_MS = 3_600_000;
const T0 = Date.UTC(2026, 5, 1);
const slot = { start: T0, end: T0 + HOUR_MS, price: 0.1 };
const prices = (n: number) =>
  Array.from({ length: n }, (_, k) => ({ start: T0 + k * HOUR_MS, end: T0 + (k + 1) * HOUR_MS, price: 0.1 }));
const battery = { capacityKWh: 10, maxChargeKW: 5, soc: 50 };
const SETTINGS: ScheduleSettings = {
  essUnit: 'kW',
  curtailmentUnit: 'kW',
  gridUnit: 'kW',
  maxEssPower: 0,
  maxCurtailment: 0,
  maxGridPower: 0,
  maxGridLimit: 0,
  allowMaximizeGridImport: true,
};

/** A 1,000,000-element array (each element `item`) that counts every read of an element. */
const counted = (item: unknown) => countedReads(HUGE_COUNT, item);

/** `run(list)` must throw a ValidationError for `field` naming the limit (`at most <max>`, or as `limit` says) and the length, having read no element. */
function refusedUnread(item: unknown, run: (list: any[]) => unknown, field: string, max: number | RegExp): void {
  const { list, reads } = counted(item);
  let err: unknown;
  try {
    run(list);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ValidationError, `a ValidationError for ${field}; got ${err}`);
  assert.equal(err.field, field);
  assert.match(err.message, typeof max === 'number' ? new RegExp(`at most ${max}\\b`) : max, err.message);
  assert.match(err.message, new RegExp(`\\b${HUGE_COUNT}\\b`), err.message);
  assert.equal(reads(), 0, `${field}: no element read before the refusal (${err.message})`);
}

describe('input caps: a 1,000,000-element array is refused by its length, before any element is read', () => {
  it('the caps are in the one table of limits', () => {
    assert.equal(INPUTS.priceSlots, 960);
    assert.equal(INPUTS.seriesPoints, 50_400);
    assert.equal(INPUTS.scheduleSlots, SERVICE.maxScheduleSlots);
    assert.equal(INPUTS.fleetSites, SERVICE.maxFleetSites);
    assert.equal(INPUTS.fleetDevices, SERVICE.maxFleetDevices);
  });

  describe('price plan', () => {
    const priceCap = INPUTS.priceSlots;
    it('prices: planBattery, the price-only planner and the site planner', () => {
      refusedUnread(slot, (l) => planBattery({ prices: l, battery } as any), 'prices', priceCap);
      refusedUnread(slot, (l) => planBattery({ prices: l, battery, solver: 'lp' } as any), 'prices', priceCap);
      refusedUnread(slot, (l) => planFromPrices({ prices: l, battery } as any), 'prices', priceCap);
      refusedUnread(slot, (l) => planSite({ prices: l, battery } as any), 'prices', priceCap);
    });

    it("price feeds: an array, power saver's {priceData}, Tibber's {today, tomorrow} and its query answer", () => {
      refusedUnread(slot, (l) => readPriceFeed(l), 'prices', priceCap);
      refusedUnread(slot, (l) => readPriceFeed({ priceData: l }), 'prices.priceData', priceCap);
      refusedUnread(slot, (l) => readPriceFeed({ today: l, tomorrow: [] }), 'prices', priceCap);
      refusedUnread(slot, (l) => readPriceFeed({ today: [], tomorrow: l }), 'prices', priceCap);
      const tibber = (l: unknown[]) => ({ viewer: { homes: [{ currentSubscription: { priceInfo: { today: l } } }] } });
      refusedUnread(
        slot,
        (l) => readPriceFeed(tibber(l)),
        'prices.viewer.homes[0].currentSubscription.priceInfo',
        priceCap,
      );
      refusedUnread(slot, (l) => planSite({ prices: { priceData: l }, battery } as any), 'prices.priceData', priceCap);
    });

    it("the node's message: prices, pvForecast, loadForecast and loadHistory (points or the time-series node's arrays)", () => {
      const config = { capacityKWh: '10', maxChargeKW: '5' };
      const node = (msg: Record<string, unknown>) => {
        // as the node plans (index.ts planFrom): the planner's refusal renamed to where the value came from
        const gathered = gather({ soc: 50, ...msg }, config, T0);
        try {
          return planBattery({ ...gathered.input, now: T0 } as any);
        } catch (e) {
          throw located(e, gathered.from);
        }
      };
      refusedUnread(slot, (l) => node({ payload: l }), 'msg.payload', priceCap);
      refusedUnread(slot, (l) => node({ payload: { prices: l } }), 'msg.payload.prices', priceCap);
      refusedUnread(slot, (l) => node({ payload: { priceData: l } }), 'msg.payload.priceData', priceCap);
      const seriesCap = INPUTS.seriesPoints;
      refusedUnread(500, (l) => node({ payload: prices(4), pvForecast: l }), 'msg.pvForecast', seriesCap);
      refusedUnread(
        { start: T0, value: 1 },
        (l) => node({ payload: prices(4), loadForecast: l }),
        'msg.loadForecast',
        seriesCap,
      );
      refusedUnread(
        { start: T0, value: 1 },
        (l) => node({ payload: { prices: prices(4), pvForecast: l } }),
        'msg.payload.pvForecast',
        seriesCap,
      );
      refusedUnread(
        { start: T0, value: 1 },
        (l) => node({ payload: prices(4), loadHistory: l }),
        'msg.loadHistory',
        seriesCap,
      );
      refusedUnread(
        T0,
        (l) => node({ payload: prices(4), loadHistory: { time: l, data: l } }),
        'msg.loadHistory.time',
        seriesCap,
      );
    });

    it('grid limits and forecasts per slot, SOC targets: the site planner', () => {
      const site = (o: Record<string, unknown>) => planSite({ prices: prices(4), battery, ...o } as any);
      for (const k of ['gridImportMax', 'gridExportMax', 'pvForecast', 'loadForecast']) {
        refusedUnread(1000, (l) => site({ [k]: l }), k, /must have one value per price slot: 4; got/);
      }
      refusedUnread(
        { soc: 60, time: T0 + HOUR_MS },
        (l) => site({ battery: { ...battery, socTarget: l } }),
        'battery.socTarget',
        INPUTS.socTargets,
      );
    });

    it('forecasts and series: points, slots to forecast', () => {
      const seriesCap = INPUTS.seriesPoints;
      refusedUnread({ x: T0, y: 1 }, (l) => readSeries(l, 'history'), 'history', seriesCap);
      refusedUnread({ start: T0, value: 1 }, (l) => resampleForecast(l, prices(4), 'pv'), 'pv', seriesCap);
      refusedUnread(
        { period_end: T0, period: 'PT30M', pv_estimate: 1 },
        (l) => resampleForecast({ forecasts: l }, prices(4), 'pv'),
        'pv.forecasts',
        seriesCap,
      );
      refusedUnread(
        { start: T0, value: 1 },
        (l) => loadForecastFromHistory(l, { slots: prices(4) }),
        'history',
        seriesCap,
      );
      // Forecast.Solar's map: its keys are listed (an object cannot be counted otherwise) but no value is read.
      let valueReads = 0;
      const watts = new Proxy(
        Object.fromEntries(Array.from({ length: seriesCap + 1 }, (_, k) => [`2026-06-01 ${k}`, 1])),
        {
          get: (t, k, r) => {
            valueReads++;
            return Reflect.get(t, k, r);
          },
        },
      );
      assert.throws(
        () => resampleForecast({ result: { watts } }, prices(4), 'pv'),
        (e: unknown) =>
          e instanceof ValidationError &&
          e.field === 'pv.result.watts' &&
          new RegExp(`at most ${seriesCap}\\b.*got ${seriesCap + 1}`).test(e.message),
      );
      assert.equal(valueReads, 0, 'no value of the map read');
      refusedUnread(
        { start: T0, end: T0 + HOUR_MS },
        (l) =>
          resampleForecast(
            prices(4).map((p) => ({ start: p.start, value: 1 })),
            l,
          ),
        'slots',
        INPUTS.forecastSlots,
      );
      refusedUnread(
        { start: T0, end: T0 + HOUR_MS },
        (l) => loadForecastFromHistory([{ start: T0 - 7 * 24 * HOUR_MS, end: T0, value: 1 }], { slots: l }),
        'slots',
        INPUTS.forecastSlots,
      );
    });

    it('a split by slotMinutes that would make more than 960 slots is refused by its count, before any slot is made', () => {
      const weeks = Array.from({ length: INPUTS.priceSlots }, (_, k) => ({
        start: T0 + k * 168 * HOUR_MS,
        duration: 10_080,
        price: 0.1,
      }));
      assert.throws(
        () => planSite({ prices: weeks, battery, slotMinutes: 1 } as any),
        (e: any) =>
          e instanceof ValidationError &&
          e.field === 'prices' &&
          e.message === 'prices must have at most 960 slots once split into slots of 1 min (slotMinutes); got 9676800',
      );
      // 960 hours in quarter hours: 3840 slots, also refused; 240 hours in quarter hours: exactly 960, planned.
      assert.throws(() => readPriceFeed(prices(960), 'prices', 15), /at most 960 slots once split .*; got 3840$/);
      assert.equal(readPriceFeed(prices(240), 'prices', 15).slots.length, 960);
    });
  });

  describe('schedule', () => {
    it('slots of a message: an array, or {slots}', () => {
      const one = { start: T0, end: T0 + HOUR_MS, energyStorage: 1 };
      refusedUnread(one, (l) => parseSlots(l, SETTINGS, T0), 'msg.payload', INPUTS.scheduleSlots);
      refusedUnread(one, (l) => parseSlots({ slots: l }, SETTINGS, T0), 'msg.payload.slots', INPUTS.scheduleSlots);
    });

    it('the stored schedule: its runs, and the slots of one run', () => {
      const run = {
        site: 'ste_a',
        start: T0,
        end: T0 + HOUR_MS,
        first: 0,
        last: 0,
        total: 1,
        slots: [{ index: 0, start: T0, end: T0 + HOUR_MS }],
        setting: { energyStorageSetting: { value: 1, unit: 'kW' } },
      };
      refusedUnread(
        run,
        (l) => restoreState({ v: 1, runs: l }, SETTINGS, 24 * HOUR_MS),
        'stored schedule.runs',
        INPUTS.scheduleSlots,
      );
      refusedUnread(
        run.slots[0],
        (l) => restoreState({ v: 1, runs: [{ ...run, slots: l }] }, SETTINGS, 24 * HOUR_MS),
        'stored schedule.runs[0].slots',
        INPUTS.scheduleSlots,
      );
    });
  });

  describe('fleets and reads', () => {
    it("site lists of site steer and portfolio: msg.sites, the node's sites", () => {
      refusedUnread('ste_a', (l) => parseFleetSites(l, 'msg.sites'), 'msg.sites', INPUTS.fleetSites);
      refusedUnread({ site: 'ste_a', maxPowerW: 1000 }, (l) => parseSiteList(l, 'sites'), 'sites', INPUTS.fleetSites);
    });

    it('device lists of a fleet read and property lists of a read', () => {
      refusedUnread('dvc_a', (l) => fleetList(l, 'msg.deviceReference'), 'msg.deviceReference', INPUTS.fleetDevices);
      const { list, reads } = counted('soc');
      assert.throws(
        () => validateProperties(list, 'msg.properties'),
        /msg\.properties must name at most 100 properties per request; got 1000000/,
      );
      assert.equal(reads(), 0);
    });
  });
});
