/**
 * Grid limits in the simulator (vendor notes): the request shape over HTTP, limits
 * clamped to the site's contractual limits, enforcement by the battery first and then PV,
 * un-curtailment when there is room, the site within its limits while its assets can, partly
 * followed when they cannot, lapse at validUntil; contractual limits and site figures in
 * GET /sites. Simulated time is frozen and moved by clock.advance (no sleeping).
 */
import assert from 'node:assert/strict';
import { HOUR_MS, MINUTE_MS } from '../../src/protocol/time';
import { DEFAULT_SITES, Simulator, type SiteDefinition } from '../../src/simulator/index';
import { useSimulator } from '../helpers/sim';
import { BATTERY_DEFAULTS } from '../../src/simulator/sites';
import { call } from '../helpers/sim-http';

const T0 = Date.UTC(2026, 5, 21, 12, 5, 0); // summer, sun high (UTC)
const COM = DEFAULT_SITES[0];
const HOME = DEFAULT_SITES[1];

/** A copy of a default site with references of its own and some fields replaced. */
function custom(
  name: string,
  base: SiteDefinition,
  over: { battery?: Partial<SiteDefinition['battery']>; grid?: SiteDefinition['grid'] },
): SiteDefinition {
  return {
    ...base,
    siteReference: `ste_${name}`,
    name,
    battery: { ...base.battery, deviceReference: `dvc_${name}_b`, ...over.battery },
    pv: { ...base.pv, deviceReference: `dvc_${name}_pv` },
    meter: { ...base.meter, deviceReference: `dvc_${name}_m` },
    grid: over.grid ?? base.grid,
  };
}

/** The vendor's example: the commercial site with contractual limits of -200 kW ... +200 kW. */
const VENDOR = custom('vendor', COM, { grid: { maxImportW: 200_000, maxExportW: 200_000 } });
/** The home with a full battery, and generous contractual limits (PV never capped by them). */
const HOME_FULL = custom('homefull', HOME, {
  battery: { initialSoc: BATTERY_DEFAULTS.maxSoc },
  grid: { maxImportW: 50_000, maxExportW: 50_000 },
});
/** The home with an empty battery. */
const HOME_EMPTY = custom('homeempty', HOME, {
  battery: { initialSoc: BATTERY_DEFAULTS.minSoc },
  grid: { maxImportW: 50_000, maxExportW: 50_000 },
});

const kW = (value: number) => ({ value, unit: 'kW' });

describe('simulator: grid limits', () => {
  const simulator = useSimulator(
    { startTime: T0, frozen: true, sites: [...DEFAULT_SITES, VENDOR, HOME_FULL, HOME_EMPTY] as SiteDefinition[] },
    { each: true },
  );

  const path = (site: SiteDefinition) => `/sites/${site.siteReference}/steering/grid-limits`;
  const limits = (site: SiteDefinition, body: Record<string, unknown>) => call(simulator.url, 'POST', path(site), body);
  const flows = async (site: SiteDefinition) =>
    (await call(simulator.url, 'GET', `/sites/${site.siteReference}/state`)).body;
  const components = async (site: SiteDefinition) =>
    (await call(simulator.url, 'GET', `/sites/${site.siteReference}/steering`)).body.components;
  const until = (ms = HOUR_MS) => simulator.sim.clock.now() + ms;

  describe('the request', () => {
    it('accepts either limit or both, echoes the accepted body with a requestId, and normalises units', async () => {
      const response = await limits(COM, { upperLimit: { value: '-100', unit: 'kw' }, validUntil: until() });
      assert.equal(response.status, 200);
      assert.match(response.body.requestId, /^req_[0-9a-f]{16}$/);
      assert.deepEqual(
        { ...response.body, requestId: undefined },
        { upperLimit: kW(-100), validUntil: until(), requestId: undefined },
      );
      const both = await limits(COM, {
        upperLimit: kW(300),
        lowerLimit: { value: -0.2, unit: 'MW' },
        validFrom: T0,
        validUntil: until(),
      });
      assert.equal(both.status, 200);
      assert.deepEqual(both.body.lowerLimit, { value: -0.2, unit: 'MW' });
      assert.equal((await limits(COM, { lowerLimit: kW(0), validUntil: until() })).status, 200);
    });

    it('refuses bodies that are malformed (400) or not allowed (422), and changes nothing', async () => {
      const cases: Array<[unknown, number, RegExp]> = [
        [{ validUntil: until() }, 400, /must set upperLimit or lowerLimit/],
        [{ upperLimit: null, lowerLimit: null, validUntil: until() }, 400, /must set upperLimit or lowerLimit/],
        [{ upperLimit: kW(5) }, 400, /validUntil is required/],
        [{ upperLimit: { value: 5, unit: '%' }, validUntil: until() }, 400, /upperLimit\.unit/],
        [{ upperLimit: { value: 'x', unit: 'kW' }, validUntil: until() }, 400, /upperLimit\.value/],
        [
          { upperLimit: kW(5), setpoint: kW(1), validUntil: until() },
          400,
          /setpoint is not a field of a grid-limits request/,
        ],
        [[1, 2], 400, /body must be a JSON object/],
        [
          { upperLimit: kW(5), lowerLimit: kW(10), validUntil: until() },
          422,
          /lowerLimit must not be above upperLimit/,
        ],
        [{ upperLimit: kW(5), validUntil: T0 - 1 }, 422, /validUntil must be in the future/],
        [{ upperLimit: kW(5), validFrom: until(), validUntil: until() - 1 }, 422, /validUntil must be after validFrom/],
      ];
      for (const [body, status, re] of cases) {
        const response = await limits(COM, body as Record<string, unknown>);
        assert.equal(response.status, status, JSON.stringify(body));
        assert.match(response.body.message, re);
      }
      const bad = await call(simulator.url, 'POST', path(COM), '{"upperLimit":');
      assert.equal(bad.status, 400);
      const unknown = await call(simulator.url, 'POST', '/sites/ste_unknown00000/steering/grid-limits', {
        upperLimit: kW(5),
        validUntil: until(),
      });
      assert.equal(unknown.status, 404);
      assert.equal((await components(COM)).gridLimits, null, 'nothing stored');
      const wrongMethod = await call(simulator.url, 'DELETE', path(COM));
      assert.equal(wrongMethod.status, 405, 'no cancel endpoint: the limits lapse at validUntil');
    });

    it('GET steering shows what was requested and what is in force, clamped to the contractual limits', async () => {
      await limits(COM, {
        upperLimit: { value: 5, unit: 'MW' },
        lowerLimit: { value: -5, unit: 'MW' },
        validUntil: until(),
      });
      assert.deepEqual((await components(COM)).gridLimits, {
        upperW: COM.grid!.maxImportW,
        lowerW: -COM.grid!.maxExportW,
        validFrom: T0,
        validUntil: until(),
        requested: { upperLimit: { value: 5, unit: 'MW' }, lowerLimit: { value: -5, unit: 'MW' } },
      });
      // An upper limit below the contractual export: export at the contractual most, not beyond.
      await limits(COM, { upperLimit: kW(-900), validUntil: until() });
      const gridLimits = (await components(COM)).gridLimits;
      assert.deepEqual([gridLimits.upperW, gridLimits.lowerW], [-COM.grid!.maxExportW, -COM.grid!.maxExportW]);
      assert.deepEqual(
        gridLimits.requested,
        { upperLimit: kW(-900) },
        'the last request replaced the first: only its limit is requested',
      );
    });
  });

  describe('enforcement: battery first, then PV', () => {
    it('the vendor example: contractual -200 ... +200 kW, upperLimit -100 kW: the site exports 100 to 200 kW over two hours', async () => {
      const before = await flows(VENDOR);
      assert.ok(before.gridW > -100_000, `precondition: unsteered the site exports less than 100 kW (${before.gridW})`);
      await limits(VENDOR, { upperLimit: kW(-100), validUntil: until(3 * HOUR_MS) });
      assert.deepEqual(
        [(await components(VENDOR)).gridLimits.upperW, (await components(VENDOR)).gridLimits.lowerW],
        [-100_000, -200_000],
      );
      for (let step = 0; step < 12; step++) {
        const flowsNow = await flows(VENDOR);
        const minSoc = BATTERY_DEFAULTS.minSoc;
        const exhausted = flowsNow.batteryW >= VENDOR.battery.maxPowerW - 1 || flowsNow.soc <= minSoc + 0.01;
        assert.ok(
          flowsNow.gridW <= -100_000 + 1 || exhausted,
          `step ${step}: grid ${flowsNow.gridW} W with the battery at ${flowsNow.batteryW} W, SOC ${flowsNow.soc}`,
        );
        assert.ok(
          flowsNow.gridW >= -200_000 - 1,
          `step ${step}: grid ${flowsNow.gridW} W within the contractual export`,
        );
        assert.ok(Math.abs(flowsNow.loadW - flowsNow.pvW - flowsNow.batteryW - flowsNow.gridW) <= 2, 'power balance');
        simulator.sim.clock.advance(10 * MINUTE_MS);
      }
    });

    it('too much import: the battery alone suffices (it charges less), PV untouched', async () => {
      const before = await flows(COM);
      assert.ok(
        before.batteryW < -60_000 && before.pvW > 0,
        `precondition: the battery charges from PV at noon (${before.batteryW} W)`,
      );
      const upper = Math.round(before.gridW - 50_000);
      await limits(COM, { upperLimit: { value: upper, unit: 'W' }, validUntil: until() });
      const flowsNow = await flows(COM);
      assert.equal(flowsNow.gridW, upper);
      assert.equal(flowsNow.pvW, before.pvW, 'PV untouched');
      assert.ok(
        Math.abs(flowsNow.batteryW - (before.batteryW + 50_000)) <= 1,
        `battery ${before.batteryW} -> ${flowsNow.batteryW}`,
      );
    });

    it('limits win over an ESS setting as far as needed: a discharge that would export too much is reduced, PV untouched', async () => {
      await call(simulator.url, 'POST', `/sites/${COM.siteReference}/steering/ess`, {
        setting: kW(300),
        validUntil: until(),
      });
      const before = await flows(COM);
      assert.equal(before.batteryW, 300_000);
      assert.ok(before.gridW < -100_000, `precondition: exporting ${before.gridW}`);
      await limits(COM, { lowerLimit: kW(-100), validUntil: until() });
      const flowsNow = await flows(COM);
      assert.equal(flowsNow.gridW, -100_000);
      assert.equal(flowsNow.pvW, before.pvW, 'PV untouched: the battery sufficed');
      assert.ok(flowsNow.batteryW < 300_000);
      assert.equal(
        (await components(COM)).energyStorageSetting.value,
        300,
        'the ESS setting stays stored: limits coexist with asset steering',
      );
    });

    it('too much export with a full battery: PV is curtailed; un-curtailed when the limit leaves room, and when it lapses', async () => {
      const before = await flows(HOME_FULL);
      assert.equal(before.batteryW, 0, 'a full battery cannot charge');
      assert.ok(before.pvW > before.loadW + 1000, `precondition: PV ${before.pvW} W above load ${before.loadW} W`);
      await limits(HOME_FULL, { lowerLimit: kW(0), validUntil: until(15 * MINUTE_MS) });
      let flowsNow = await flows(HOME_FULL);
      assert.equal(flowsNow.batteryW, 0);
      assert.ok(Math.abs(flowsNow.gridW) <= 1, `no export: grid ${flowsNow.gridW}`);
      assert.ok(
        Math.abs(flowsNow.pvW - flowsNow.loadW) <= 1,
        `PV curtailed to the load: ${flowsNow.pvW} / ${flowsNow.loadW}`,
      );

      // Room within a new limit: PV un-curtailed as far as the limit allows (never more curtailed than needed).
      const room = Math.min(1000, Math.floor((before.pvW - before.loadW) / 2));
      await limits(HOME_FULL, { lowerLimit: { value: -room, unit: 'W' }, validUntil: until(15 * MINUTE_MS) });
      flowsNow = await flows(HOME_FULL);
      assert.ok(Math.abs(flowsNow.gridW + room) <= 1, `grid ${flowsNow.gridW} at the limit -${room}`);
      assert.ok(Math.abs(flowsNow.pvW - (flowsNow.loadW + room)) <= 1);

      // Over a few minutes the load changes; PV follows it, never curtailed below what the limit needs.
      for (let i = 0; i < 5; i++) {
        simulator.sim.clock.advance(2 * MINUTE_MS);
        flowsNow = await flows(HOME_FULL);
        assert.ok(
          flowsNow.gridW >= -room - 1 && flowsNow.gridW <= -room + 1,
          `minute ${2 * i + 2}: grid ${flowsNow.gridW}`,
        );
      }

      // The limits lapse at validUntil: PV back to its potential (what the site without limits produces).
      simulator.sim.clock.advance(6 * MINUTE_MS);
      assert.equal((await components(HOME_FULL)).gridLimits, null);
      const ref = new Simulator({ startTime: simulator.sim.clock.now(), frozen: true, sites: [HOME_FULL] });
      flowsNow = await flows(HOME_FULL);
      assert.equal(flowsNow.pvW, ref.siteState(HOME_FULL.siteReference).pvW, 'uncurtailed');
      assert.ok(flowsNow.gridW < -room - 1, `exporting again: ${flowsNow.gridW}`);
    });

    it('too much import with an empty battery and PV curtailed by asset steering: PV is un-curtailed to meet the limit', async () => {
      await call(simulator.url, 'POST', `/sites/${HOME_EMPTY.siteReference}/steering/curtailment`, {
        setting: kW(0),
        validUntil: until(),
      });
      const before = await flows(HOME_EMPTY);
      assert.deepEqual([before.pvW, before.batteryW], [0, 0], 'curtailed to 0; an empty battery cannot discharge');
      assert.equal(before.gridW, before.loadW);
      await limits(HOME_EMPTY, { upperLimit: kW(0), validUntil: until() });
      const flowsNow = await flows(HOME_EMPTY);
      assert.equal(flowsNow.batteryW, 0);
      assert.ok(Math.abs(flowsNow.gridW) <= 1, `grid ${flowsNow.gridW}`);
      assert.ok(Math.abs(flowsNow.pvW - flowsNow.loadW) <= 1, 'PV un-curtailed as far as the limit needs, no further');
    });

    it('partly followed when the assets cannot: the battery at its power rating, then empty; the measurements show it', async () => {
      await limits(COM, { upperLimit: kW(-800), validUntil: until(6 * HOUR_MS) });
      let flowsNow = await flows(COM);
      assert.equal(flowsNow.batteryW, COM.battery.maxPowerW, 'discharging at its rating');
      assert.ok(flowsNow.gridW > -800_000 + 1, `export ${-flowsNow.gridW} W short of 800 kW`);
      const meter = (
        await call(simulator.url, 'GET', `/devices/${COM.meter.deviceReference}/measurement?property=power`)
      ).body;
      assert.equal(meter.value, flowsNow.gridW, 'the grid meter shows it');
      // About 1.2 h at 500 kW empties the battery to its window (65 % -> 5 % of 1 MWh, with losses).
      simulator.sim.clock.advance(2 * HOUR_MS);
      flowsNow = await flows(COM);
      assert.ok(Math.abs(flowsNow.soc - BATTERY_DEFAULTS.minSoc) < 0.01, `SOC ${flowsNow.soc}`);
      assert.equal(flowsNow.batteryW, 0, 'an empty battery cannot discharge');
      assert.ok(Math.abs(flowsNow.gridW - (flowsNow.loadW - flowsNow.pvW)) <= 2, 'the rest is what PV and load make');
    });

    it('the contractual limits hold without any steering too: a full home battery at noon exports at most the contractual 1 kW', async () => {
      const tight = custom('hometight', HOME, {
        battery: { initialSoc: BATTERY_DEFAULTS.maxSoc },
        grid: { maxImportW: 17_000, maxExportW: 1_000 },
      });
      const sim = new Simulator({ startTime: T0, frozen: true, sites: [tight, HOME_FULL] });
      const state = sim.siteState(tight.siteReference);
      assert.ok(state.gridW >= -1_000 - 1, `export ${-state.gridW} W within the contractual 1 kW`);
      assert.ok(Math.abs(state.pvW - (state.loadW + 1_000)) <= 1, 'PV curtailed to load + 1 kW');
      assert.equal(HOME.grid!.maxExportW, 7_000);
    });
  });

  describe('validity', () => {
    it('limits apply from validFrom and lapse at validUntil (one slot, replaced by the next request)', async () => {
      const before = await flows(COM);
      await limits(COM, { upperLimit: kW(-100), validFrom: T0 + 10 * MINUTE_MS, validUntil: T0 + 20 * MINUTE_MS });
      assert.equal((await components(COM)).gridLimits, null, 'not yet');
      assert.equal((await flows(COM)).gridW, before.gridW);
      simulator.sim.clock.advance(10 * MINUTE_MS);
      assert.equal((await components(COM)).gridLimits.upperW, -100_000);
      assert.equal((await flows(COM)).gridW, -100_000);
      simulator.sim.clock.advance(10 * MINUTE_MS);
      assert.equal((await components(COM)).gridLimits, null, 'lapsed at validUntil');
      const flowsNow = await flows(COM);
      assert.ok(
        Math.abs(
          flowsNow.batteryW -
            Math.max(-COM.battery.maxPowerW, Math.min(COM.battery.maxPowerW, flowsNow.loadW - flowsNow.pvW)),
        ) <= 1,
        'self-consumption again',
      );
    });

    it('POST /sim/reset clears the limits', async () => {
      await limits(COM, { upperLimit: kW(-100), validUntil: until() });
      await call(simulator.url, 'POST', '/sim/reset');
      assert.equal((await components(COM)).gridLimits, null);
    });
  });

  describe('GET /sites and the site definitions', () => {
    it('lists PV peak power, battery power and capacity, and the contractual grid limits of each site', async () => {
      const response = await call(simulator.url, 'GET', '/sites');
      assert.equal(response.status, 200);
      const com = response.body.sites.find((x: { siteReference: string }) => x.siteReference === COM.siteReference);
      assert.deepEqual(
        {
          pvPeakPower: com.pvPeakPower,
          batteryMaxPower: com.batteryMaxPower,
          batteryCapacity: com.batteryCapacity,
          gridLimits: com.gridLimits,
        },
        {
          pvPeakPower: 1_000_000,
          batteryMaxPower: 500_000,
          batteryCapacity: 1_000_000,
          gridLimits: { upper: 1_000_000, lower: -800_000 },
        },
      );
      const home = response.body.sites.find((x: { siteReference: string }) => x.siteReference === HOME.siteReference);
      assert.deepEqual(home.gridLimits, { upper: 17_000, lower: -7_000 });
      assert.equal(home.pvPeakPower, 10_000);
      assert.deepEqual(Object.keys(com), [
        'siteReference',
        'name',
        'devices',
        'pvPeakPower',
        'batteryMaxPower',
        'batteryCapacity',
        'gridLimits',
      ]);
    });

    it('a site without contractual limits gets ones that never bind; bad limits and SOC windows are refused', () => {
      const { grid: _grid, ...bare } = custom('bare', HOME, {});
      const sim = new Simulator({ sites: [bare as SiteDefinition] });
      assert.deepEqual(JSON.parse(sim.sitesJson).sites[0].gridLimits, {
        upper: HOME.load.maxW + HOME.battery.maxPowerW,
        lower: -(HOME.pv.peakW + HOME.battery.maxPowerW),
      });
      assert.throws(
        () => new Simulator({ sites: [custom('neg', HOME, { grid: { maxImportW: -1, maxExportW: 0 } })] }),
        /grid\.maxImportW must be a non-negative number/,
      );
      assert.throws(
        () => new Simulator({ sites: [custom('win', HOME, { battery: { minSoc: 90, maxSoc: 10 } })] }),
        /minSoc must be below maxSoc/,
      );
      assert.throws(
        () => new Simulator({ sites: [custom('eff', HOME, { battery: { efficiency: 1.5 } })] }),
        /efficiency must be a number in \(0, 1\]/,
      );
    });
  });
});
