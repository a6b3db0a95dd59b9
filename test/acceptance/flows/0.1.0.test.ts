/**
 * A flow saved by release 0.1.0 (test/fixtures/flows-0.1.0.json: every property as the 0.1.0
 * editor saved it, none of those added since) loads and behaves as it did: same requests,
 * same outputs. Properties added later must default to 0.1.0's behaviour.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { HOUR_MS, MINUTE_MS, QUARTER_HOUR_MS } from '../../../src/protocol/time';
import { planFromPrices } from '../../../src/plan';
import { callsOf, helper, Inbox, loadFlow, logged, useRuntime, useSimulator } from '../../helpers/red';

const SAVED: Array<Record<string, any>> = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'flows-0.1.0.json'), 'utf8'),
);
const SITE = 'ste_lepVqjIyPshx';

describe('flows saved by 0.1.0', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();
  beforeEach(() => sim.s.sim.reset());

  /** The saved flow on this test's simulator, each flow node wired to its own helper, plus a Catch node (and `more` nodes). */
  async function load(more: Array<Record<string, any>> = []) {
    const nodes = [...SAVED, ...more].map((n) => ({ ...n }));
    const extra: object[] = [];
    for (const n of nodes) {
      if (n.type === 'ems-partner-config') n.baseUrl = sim.s.url;
      if (n.wires) {
        n.wires = [[`${n.id}-out`]];
        extra.push({ id: `${n.id}-out`, type: 'helper', z: n.z, x: 500, y: n.y, wires: [] });
      }
    }
    // loadFlow's own helpers: n and out (unused here), a Catch node wired to caught.
    const at = { z: 'f010tab0000000001', x: 100, y: 600 };
    extra.push({ id: 'n', type: 'helper', ...at, wires: [] }, { id: 'out', type: 'helper', ...at, wires: [] });
    extra.push(
      { id: 'c', type: 'catch', ...at, scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', type: 'helper', ...at, wires: [] },
    );
    const { caught } = await loadFlow([...nodes, ...extra]);
    return {
      caught,
      async ask(id: string, msg: Record<string, unknown>, n = 1) {
        const out = new Inbox(helper.getNode(`${id}-out`));
        helper.getNode(id).receive(msg);
        return out.count(n);
      },
    };
  }

  it('every node runs with its properties upgraded to the current version: the properties added since get their defaults', async () => {
    const ADDED: Record<string, Record<string, unknown>> = {
      'ems-partner-config': {
        maxBodyMB: 10,
        maxValidity: 1440,
        pathDevices: '',
        pathSites: '',
        pathCurtailment: '',
        pathGridLimits: '',
        percentCurtailment: 'send',
        maxPerMinute: 0,
        maxPerDay: 0,
        budgetMode: 'refuse',
        maxWaiting: 10_000,
        redisUrl: '',
      },
      'ems-device-read': { maxSplit: 1000 },
      'ems-time-series': { maxSplit: 1000 },
      'ems-site-steer': {
        maxGridPower: '',
        allowMaximizeGridImport: true,
        stopAction: 'expire',
        pvPeakPower: '',
        upperLimitValue: '',
        upperLimitValueType: 'num',
        upperLimitUnit: 'kW',
        lowerLimitValue: '',
        lowerLimitValueType: 'num',
        lowerLimitUnit: 'kW',
        maxGridLimit: '',
        verify: false,
        batteryDevice: '',
        batteryDeviceType: 'str',
        pvDevice: '',
        pvDeviceType: 'str',
        meterDevice: '',
        meterDeviceType: 'str',
        verifyEvery: 0,
        tolerance: 10,
        toleranceMin: 1000,
        sites: '',
        portfolioSplit: 'rating',
      },
    };
    const VERSION: Record<string, number> = {
      'ems-partner-config': 6,
      'ems-device-read': 2,
      'ems-time-series': 2,
      'ems-site-steer': 6,
    };
    // Power limits are on by default now (an empty one is the site's rating): a limit a saved flow had off stays off, as "none".
    const off = (v: unknown) => v === undefined || v === '' || v === 0;
    const limits = (n: Record<string, any>) =>
      n.type !== 'ems-site-steer'
        ? {}
        : Object.fromEntries(
            ['maxEssPower', 'maxCurtailment', 'maxGridPower', 'maxGridLimit'].map((k) => [
              k,
              off(n[k]) ? 'none' : n[k],
            ]),
          );
    await load();
    const ours = SAVED.filter((n) => ADDED[n.type]);
    assert.equal(ours.length, 8);
    for (const n of ours) {
      assert.equal(n.version, 1, `${n.id} is saved as version 1`);
      for (const k of Object.keys(ADDED[n.type])) assert.equal(k in n, false, `${n.id} was saved without ${k}`);
      const props = helper.getNode(n.id).props;
      const expected: Record<string, unknown> = { ...n, ...ADDED[n.type], ...limits(n), version: VERSION[n.type] };
      delete expected.baseUrl; // load() points these at the test's simulator and helpers
      delete expected.wires;
      assert.deepEqual(Object.fromEntries(Object.keys(expected).map((k) => [k, props[k]])), expected, n.id);
    }
  });

  it('device read (map, list + split) and time series (points, split) answer as in 0.1.0', async () => {
    const deployed = await load();
    const [map] = await deployed.ask('f010read000000001', {});
    assert.deepEqual(Object.keys(map.payload), ['soc', 'totalEnergyConsumed']);
    assert.equal(typeof map.payload.soc, 'number');
    assert.deepEqual(map.units, { soc: '%', totalEnergyConsumed: 'Wh' });
    const split = await deployed.ask('f010read000000002', {}, 3);
    assert.deepEqual(
      split.map((m) => m.topic),
      ['soc', 'totalEnergyConsumed', 'totalEnergyProduced'].map((p) => `dvc_aIcgt4KDesKb/${p}`),
    );
    const [points] = await deployed.ask('f010series0000001', {});
    // `last` starts on a whole hour and ends now: 24 h give 25 hourly points (the hour in progress too).
    assert.equal(points.payload.length, 25);
    assert.ok(points.payload.every((p: any) => typeof p.x === 'number' && typeof p.y === 'number'));
    const hours = await deployed.ask('f010series0000002', {}, 49);
    assert.equal(hours[0].timestamp, points.payload[0].x - 24 * 3_600_000);
    assert.ok(hours.every((m, i) => i === 0 || m.timestamp - hours[i - 1].timestamp === 3_600_000));
    assert.equal(deployed.caught.msgs.length, 0);
  });

  it('site steer (ess, combined with limits, grid target dry run) sends what 0.1.0 sent', async () => {
    const deployed = await load();
    const before = Date.now();
    const [ess] = await deployed.ask('f010steer00000001', { payload: -50 });
    assert.equal(ess.request.path, `/sites/${SITE}/steering/ess`);
    assert.deepEqual(ess.request.body.setting, { value: -50, unit: 'kW' });
    assert.equal(ess.request.body.validUntil % QUARTER_HOUR_MS, 0);

    const [comb] = await deployed.ask('f010steer00000002', { payload: 20 });
    assert.equal(comb.request.path, `/sites/${SITE}/steering`);
    const { validUntil, ...rest } = comb.request.body;
    assert.deepEqual(rest, {
      energyStorageSetting: { value: 20, unit: 'kW' },
      productionCurtailment: { value: 200, unit: 'kW' },
      maximizeGridImport: true,
    });
    assert.ok(validUntil - before >= 30 * MINUTE_MS && validUntil - Date.now() <= 30 * MINUTE_MS);
    assert.deepEqual(
      logged(sim.s, /^POST \/sites\/:ref\/steering/).map((e) => e.body),
      [ess.request.body, comb.request.body],
    );

    const [dry] = await deployed.ask('f010steer00000003', { payload: 10 });
    assert.equal(dry.dryRun, true);
    assert.equal(dry.request.path, `/sites/${SITE}/steering/grid-target`);
    assert.deepEqual(dry.request.body.setpoint, { value: 10, unit: 'kW' });
    assert.deepEqual(dry.request.body.deadband, { value: 1, unit: 'kW' });
    assert.equal(logged(sim.s, /grid-target/).length, 0);

    // Over the combined node's maxEssPower (100 kW) is refused, as in 0.1.0.
    const errs = deployed.caught.msgs.length;
    helper.getNode('f010steer00000002').receive({ payload: 150 });
    await deployed.caught.count(errs + 1);
    assert.match(deployed.caught.msgs[errs].error.message, /maxEssPower/);
  });

  it('each site steer that steers without a limit (one the mode uses was 0 or not set) warns once at deploy, naming it; the one with its limits set does not', async () => {
    const deployed = await load();
    const warned = (id: string) =>
      callsOf('warn', id)
        .map((a) => String(a[0]))
        .filter((w) => /steers without a limit/.test(w));
    assert.deepEqual(warned('f010steer00000001'), [
      'steers without a limit: maxEssPower is "none" (a flow saved by an earlier version, where an empty or 0 limit meant no limit); set each to the most the site may be asked for in W, or leave it empty for the site\'s rating (GET /sites)',
    ]);
    assert.match(
      warned('f010steer00000002')[0],
      /^steers without a limit: maxCurtailment is "none"/,
      'combined: its curtailment limit was 0, its ESS limit 100 kW',
    );
    assert.match(warned('f010steer00000003')[0], /^steers without a limit: maxGridPower is "none"/);
    for (const id of ['f010steer00000001', 'f010steer00000002', 'f010steer00000003'])
      assert.equal(warned(id).length, 1, id);
    // Once at deploy, not per message: steering goes on as in 0.1.0.
    await deployed.ask('f010steer00000001', { payload: -50 });
    await deployed.ask('f010steer00000001', { payload: 2000 });
    assert.equal(warned('f010steer00000001').length, 1);
  });

  it('site steer stop with the defaults added since (stopAction expire) stops without sending, as in 0.1.0', async () => {
    const deployed = await load();
    await deployed.ask('f010steer00000002', { payload: 20 });
    const sent = logged(sim.s, /^POST \/sites\/:ref\/steering/).length;
    const [stop] = await deployed.ask('f010steer00000002', { payload: 'stop' });
    assert.deepEqual(stop.payload, { stopped: true, renewing: false });
    assert.equal(logged(sim.s, /^POST \/sites\/:ref\/steering/).length, sent, 'nothing sent on stop');
    assert.equal(deployed.caught.msgs.length, 0);
  });

  it('next to it, a price plan node saved before version 2 (as example 09 shipped it) gets the new settings empty, re-planning off, every slot steered (idle: steer, version 3), and plans exactly as before', async () => {
    // ems-plan came after 0.1.0 (version 1); version 2 adds the site model's settings and re-planning, version 3 the idle choice (steer, as before), version 4 grid charge and discharge (on, as before).
    const v1 = {
      id: 'f010plan000000001',
      type: 'ems-plan',
      z: 'f010tab0000000001',
      name: 'Home battery plan',
      capacityKWh: 20,
      maxChargeKW: 10,
      maxDischargeKW: 10,
      socMin: 10,
      socMax: 90,
      efficiency: 0.9,
      socEnd: '',
      priceUnit: 'EUR/MWh',
      steps: '',
      x: 300,
      y: 500,
      wires: [[]],
    };
    const deployed = await load([v1]);
    const props = helper.getNode(v1.id).props;
    const added = {
      chargeEfficiency: '',
      dischargeEfficiency: '',
      cycleCost: '',
      endValue: '',
      socTarget: '',
      socTargetTime: '',
      importMultiplier: '',
      importFee: '',
      importVat: '',
      exportMultiplier: '',
      exportFee: '',
      exportVat: '',
      importLimitKW: '',
      exportLimitKW: '',
      peakCost: '',
      replan: false,
      idle: 'steer',
      gridCharge: true,
      gridDischarge: true,
      sellSocMin: '',
      version: 4,
    };
    for (const [k, v] of Object.entries(added)) assert.deepEqual(props[k], v, k);
    const t0 = Math.ceil((Date.now() + HOUR_MS) / HOUR_MS) * HOUR_MS;
    const prices = [93.26, 12.5, -17.44, 140.73, 150].map((price, k) => ({
      start: t0 + k * HOUR_MS,
      end: t0 + (k + 1) * HOUR_MS,
      price,
    }));
    const [m] = await deployed.ask(v1.id, { payload: prices, soc: 50 });
    const battery = {
      capacityKWh: 20,
      maxChargeKW: 10,
      maxDischargeKW: 10,
      socMin: 10,
      socMax: 90,
      efficiency: 0.9,
      soc: 50,
    };
    const before = planFromPrices({ prices, battery, priceUnit: 'EUR/MWh', now: m.plan.soc[0].time });
    assert.equal(JSON.stringify(m.plan), JSON.stringify(before), 'the price-only planner, byte for byte');
    assert.equal(m.payload.length, 5);
    assert.equal(m.replan, undefined, 'no re-planning');
    assert.deepEqual(Object.keys(m.chart).sort(), ['power', 'price', 'soc']);
    assert.equal(deployed.caught.msgs.length, 0);
  });
});
