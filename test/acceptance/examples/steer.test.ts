/**
 * Examples 7 and 8, loaded as shipped: PV curtailment in % (sent as W: the config node's %
 * setting converts, as a new one does) and on an export limit in kW, on two sites of their
 * own so they do not overwrite each other; grid limits (08) that the simulated site's grid
 * power stays within, re-sent every minute. (Example 06, now a schedule, is tested in
 * schedule.test.ts.)
 */
import assert from 'node:assert/strict';
import { MINUTE_MS, quarterHourValidUntil } from '../../../src/protocol/time';
import { BUILT_IN_SITES, DEFAULT_SITES } from '../../../src/simulator/index';
import { nodeRedVersion } from '../../helpers/node-red-path';
import { builtInSite, loadExample } from '../../helpers/examples';
import { logged, turns, useRuntime, useSimulator } from '../../helpers/red';

/** Example 07's sites: its own Commercial site (the % limit) and its own Home (the export limit). */
const COM = builtInSite('Commercial site (example 07)');
const HOME = builtInSite('Home (example 07)');
const SITE = HOME.siteReference;

describe(`examples: steering (07) on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(30_000);
  const sim = useSimulator({ frozen: true, sites: [...BUILT_IN_SITES] });
  beforeEach(() => {
    sim.s.sim.reset();
  });
  useRuntime();
  const steering = () => sim.s.sim.steeringState(SITE).components;
  const commercial = () => sim.s.sim.steeringState(COM.siteReference).components;
  const steerRequests = () => logged(sim.s, /^POST \/sites\/:ref\/steering/).length;

  describe('07 PV curtailment', () => {
    const CURTAIL = '07 PV curtailment on an export limit.json';

    it('% limit (Commercial site): holds the PV at 60 % (sent as W) to the quarter hour, renewed; stop lifts the limit until that signal ends', async () => {
      const ex = await loadExample(CURTAIL, sim.s.url);
      const node = ex.nodes.find((n) => n.name === 'Commercial PV limit in % (renewed)');
      assert.deepEqual(
        [node.site, node.renew, node.stopAction, node.pvPeakPower],
        [COM.siteReference, true, 'lift', COM.pv.peakW],
      );
      assert.equal(
        ex.nodes.find((n) => n.type === 'ems-partner-config').percentCurtailment,
        'convert',
        'as a new config node: % goes out in W',
      );
      const sent = ex.inbox('sent (%)');
      const t0 = Date.now();
      ex.fire('Commercial: limit PV to 60 %');
      const [msg] = await sent.count(1);
      assert.equal(msg.request.path, `/sites/${COM.siteReference}/steering/curtailment`);
      const curtailment = commercial().productionCurtailment!;
      assert.deepEqual(
        [curtailment.value, curtailment.unit],
        [0.6 * COM.pv.peakW, 'W'],
        'the published type has no %: 60 % of the PV peak, in W',
      );
      assert.ok([t0, Date.now()].map((t) => quarterHourValidUntil(t)).includes(curtailment.validUntil));

      ex.fire('Commercial: stop (lift the limit)');
      await sent.count(2);
      const lifted = commercial().productionCurtailment!;
      assert.deepEqual([lifted.value, lifted.unit], [COM.pv.peakW, 'W'], 'the installed PV power: no curtailment');
      assert.equal(lifted.validUntil, curtailment.validUntil, 'until the signal in force would have ended, not longer');
      assert.equal(steering().productionCurtailment, null, 'the Home site is not touched');
    });

    it("the two halves steer different sites, so neither overwrites the other's limit", async () => {
      const ex = await loadExample(CURTAIL, sim.s.url);
      ex.fire('Commercial: limit PV to 60 %');
      ex.fire('Home: every minute, 3 kW export');
      await ex.inbox('sent (%)').count(1);
      await ex.inbox('sent (kW)').count(1);
      assert.deepEqual(
        [commercial().productionCurtailment!.value, commercial().productionCurtailment!.unit],
        [0.6 * COM.pv.peakW, 'W'],
      );
      assert.equal(steering().productionCurtailment!.unit, 'kW');
      const sites = ex.nodes.filter((n) => n.type === 'ems-site-steer' && n.mode === 'curtailment').map((n) => n.site);
      assert.equal(new Set(sites).size, sites.length, `one curtailment sender per site: ${sites}`);
    });

    it('kW export limit (Home): PV limited to PV + grid + 3 kW, valid 5 minutes', async () => {
      const ex = await loadExample(CURTAIL, sim.s.url);
      const sent = ex.inbox('sent (kW)');
      const pvW = sim.s.sim.measure(HOME.pv.deviceReference, 'power').value;
      const gridW = sim.s.sim.measure(HOME.meter.deviceReference, 'power').value;
      const t0 = Date.now();
      ex.fire('Home: every minute, 3 kW export');
      const [msg] = await sent.count(1);
      const expectedKw = Math.round(Math.max(0, (pvW + gridW) / 1000 + 3) * 10) / 10;
      assert.equal(msg.pvW, pvW);
      assert.equal(msg.gridW, gridW);
      const curtailment = steering().productionCurtailment!;
      assert.deepEqual([curtailment.value, curtailment.unit], [expectedKw, 'kW']);
      assert.ok(
        curtailment.validUntil - t0 >= 5 * MINUTE_MS && curtailment.validUntil - Date.now() <= 5 * MINUTE_MS,
        'valid 5 minutes',
      );
      assert.equal(msg.request.path, `/sites/${SITE}/steering/curtailment`);
      assert.equal(commercial().productionCurtailment, null, 'the Commercial site is not touched');
    });

    it('kW export limit: a missing limit is an error, nothing is sent', async () => {
      const ex = await loadExample(CURTAIL, sim.s.url);
      const failed = new Promise<any>((resolve) =>
        ex.node('production limit').once('call:error', (c: any) => resolve(c.args[0])),
      );
      ex.fire('Home grid power', {});
      assert.match(String(await failed), /msg.exportLimitKw must be a number of kW, 0 or more; got undefined/);
      assert.equal(steerRequests(), 0);
    });
  });
});

describe(`examples: grid limits (08) on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(30_000);
  const GRID = '08 Grid limits - hold the grid power within bounds.json';
  // A frozen June morning: the same site state on every run (the simulator is deterministic for a seed and time).
  const sim = useSimulator({ frozen: true, startTime: Date.UTC(2026, 5, 21, 9, 30) });
  beforeEach(() => {
    sim.s.sim.reset();
  });
  useRuntime();
  // The default Commercial site, which no other example steers (npm start's dashboard shows it).
  const COM = DEFAULT_SITES[0];
  const limitsOf = () => sim.s.sim.steeringState(COM.siteReference).components.gridLimits;
  const gridW = () => sim.s.sim.measure(COM.meter.deviceReference, 'power').value;

  it("import ≤ 200 kW, export ≤ 300 kW: sent to the grid-limits endpoint, valid 5 minutes; the site's grid power stays within", async () => {
    const ex = await loadExample(GRID, sim.s.url);
    const node = ex.nodes.find((n) => n.type === 'ems-site-steer');
    assert.deepEqual(
      [node.site, node.mode, node.maxGridLimit, node.renew],
      [COM.siteReference, 'grid-limits', 1_000_000, false],
    );
    const sent = ex.inbox('sent');
    const t0 = Date.now();
    ex.fire('Commercial: import ≤ 200 kW, export ≤ 300 kW');
    const [msg] = await sent.count(1);
    assert.equal(msg.request.path, `/sites/${COM.siteReference}/steering/grid-limits`);
    assert.deepEqual(
      [msg.request.body.upperLimit, msg.request.body.lowerLimit],
      [
        { value: 200, unit: 'kW' },
        { value: -300, unit: 'kW' },
      ],
    );
    assert.ok(
      msg.request.body.validUntil - t0 >= 5 * MINUTE_MS && msg.request.body.validUntil - Date.now() <= 5 * MINUTE_MS,
      'valid 5 minutes',
    );
    assert.deepEqual([limitsOf()?.upperW, limitsOf()?.lowerW], [200_000, -300_000]);

    const checked = ex.inbox('grid vs limits');
    const status = ex.status('within the limits?');
    ex.fire('every 10 s: read the grid power');
    const [c] = await checked.count(1);
    assert.equal(c.payload.gridW, gridW());
    assert.deepEqual([c.payload.lowerW, c.payload.upperW], [-300_000, 200_000]);
    assert.equal(c.payload.within, true, `grid ${c.payload.gridW} W within −300 kW … 200 kW`);
    const shown = status.all.at(-1);
    assert.match(shown.text, /^grid -?\d+ kW within -300 kW … 200 kW$/);
    assert.equal(shown.fill, 'green');
  });

  it("the vendor's example (export at least 100 kW), the minute tick re-sends the choice, off stops sending", async () => {
    const ex = await loadExample(GRID, sim.s.url);
    const sent = ex.inbox('sent');
    ex.fire('Commercial: export at least 100 kW');
    const [a] = await sent.count(1);
    assert.deepEqual(Object.keys(a.request.body), ['upperLimit', 'validUntil']);
    assert.equal(limitsOf()?.upperW, -100_000);
    const checked = ex.inbox('grid vs limits');
    ex.fire('every 10 s: read the grid power');
    const [c] = await checked.count(1);
    assert.ok(c.payload.gridW <= -100_000 + 1, `the site exports at least 100 kW: grid ${c.payload.gridW} W`);
    assert.equal(c.payload.within, true);

    ex.fire('every minute: send the chosen limits again');
    const [, b] = await sent.count(2);
    assert.deepEqual(b.request.body.upperLimit, { value: -100, unit: 'kW' });
    const requests = logged(sim.s, /grid-limits/).length;
    const choice = ex.status('limits to send');
    ex.fire('Commercial: off (limits lapse)');
    const [, , stopped] = await sent.count(3);
    assert.deepEqual(stopped.payload, { stopped: true, renewing: false });
    assert.equal(choice.all.at(-1).text, 'off: the last limits end at their validUntil');
    assert.equal(limitsOf()?.upperW, -100_000, 'no cancel: the last limits hold until their validUntil');
    ex.fire('every minute: send the chosen limits again');
    await turns(20);
    assert.equal(sent.msgs.length, 3, 'the tick sends nothing after off');
    assert.equal(logged(sim.s, /grid-limits/).length, requests, 'nothing sent after off');
  });

  it('limits wider than the grid connection (maxGridLimit 1 MW) are refused: the error reaches the Catch node, nothing is sent', async () => {
    const ex = await loadExample(GRID, sim.s.url);
    const errors = ex.inbox('errors');
    ex.fire('limits to send', { payload: { lowerLimit: -1500 } });
    const [e] = await errors.count(1);
    assert.match(e.error.message, /msg\.payload\.lowerLimit must be within the node's limit maxGridLimit = 1000000 W/);
    assert.equal(logged(sim.s, /grid-limits/).length, 0);
  });
});
