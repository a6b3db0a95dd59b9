/**
 * Steering limits are on by default: a site steer or schedule node as a user drops it (no
 * property changed) never sends a value beyond what the site can take. Its power limits are
 * empty, which is the site's rating as GET /sites lists it (the simulator's site list names
 * them); where the service names none, the node refuses to steer until a limit is set, with a
 * Catch-able error naming the property and the forms it accepts. The same for every site of a
 * fleet or portfolio message. A flow saved by an earlier version keeps its limits off ("none",
 * migrated) and warns once at deploy (test/acceptance/flows/0.1.0.test.ts, test/nodes/shared/migrations.test.ts).
 */
import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../../../src/simulator';
import { cfg, flow, loadFlow, logged, siteSteer, useRuntime, useSimulator } from '../../helpers/red';
import { limitWarnings } from '../../helpers/limit-warnings';

const COM = DEFAULT_SITES[0].siteReference; // battery 500 kW, PV 1 MWp, grid +1 MW / -800 kW
const HOME = DEFAULT_SITES[1].siteReference; // battery 10 kW
const UNLISTED = 'ste_NotOnTheService';
const steers = (s: Parameters<typeof logged>[0]) => logged(s, /^POST \/sites\/:ref\/steering/);

describe('steering limits on by default', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();
  beforeEach(() => sim.s.sim.reset());

  describe('site steer', () => {
    it('a new node, no property changed: 100000 kW to the 500 kW Commercial site is refused naming maxEssPower and the rating; nothing is sent; 400 kW goes out; no warning', async () => {
      const loaded = await loadFlow(flow(siteSteer(COM), cfg(sim.s.url)));
      const failure = await loaded.fails({ payload: 100_000 });
      assert.equal(
        failure.error.message,
        "ValidationError: energyStorage must be within the site's battery rating 500000 W, either sign (GET /sites batteryMaxPower) (maxEssPower is not set, so the site's rating applies; set maxEssPower in W to change it); got 100000 kW; nothing was sent",
      );
      assert.equal(steers(sim.s).length, 0, 'nothing sent');
      await loaded.fails({ payload: -501 });
      assert.equal((await loaded.ask({ payload: -400 })).request.body.setting.value, -400);
      assert.equal(steers(sim.s).length, 1);
      assert.deepEqual(limitWarnings('n'), []);
    });

    it('curtailment, grid target and grid limits of a new node are bounded by the PV power and the grid connection', async () => {
      const curt = await loadFlow(flow(siteSteer(COM, { mode: 'curtailment', essValue: '' }), cfg(sim.s.url)));
      assert.match(
        (await curt.fails({ payload: 1200 })).error.message,
        /^ValidationError: curtailment must be within the site's PV power 1000000 W \(GET \/sites pvPeakPower\) \(maxCurtailment is not set/,
      );
      assert.equal((await curt.ask({ payload: 900 })).request.body.setting.value, 900);
      const grid = await loadFlow(flow(siteSteer(COM, { mode: 'grid-target' }), cfg(sim.s.url)));
      assert.match(
        (await grid.fails({ payload: -900 })).error.message,
        /^ValidationError: gridTarget must be within the site's grid connection, -800000 W \(export\) to 1000000 W \(import\)/,
      );
      assert.equal((await grid.ask({ payload: 900 })).request.body.setpoint.value, 900);
      const limits = await loadFlow(
        flow(siteSteer(COM, { mode: 'grid-limits', upperLimitValue: '', lowerLimitValue: '' }), cfg(sim.s.url)),
      );
      assert.match(
        (await limits.fails({ payload: { upperLimit: 2000 } })).error.message,
        /^ValidationError: upperLimit must be within the site's grid connection.*\(maxGridLimit is not set/,
      );
      assert.equal(
        (await limits.ask({ payload: { upperLimit: 500, lowerLimit: -500 } })).request.body.upperLimit.value,
        500,
      );
    });

    it('a service that names no ratings (GET /sites not there, as on the real service): refused until a limit is set, naming the property and its forms; then it steers', async () => {
      const config = cfg(sim.s.url, { pathSites: '/not-published/sites' });
      const loaded = await loadFlow(flow(siteSteer(COM), config));
      const failure = await loaded.fails({ payload: 5 });
      assert.match(
        failure.error.message,
        /^ValidationError: maxEssPower is not set, so it is the site's rating, and there is none for ste_\w+ \(GET \/sites lists no site: the service publishes no site list, or an empty one\): set maxEssPower to the most the site may be asked for, a positive number of W, or "none" for no limit; nothing was sent$/,
      );
      assert.equal(steers(sim.s).length, 0);
      const bounded = await loadFlow(flow(siteSteer(COM, { maxEssPower: 20_000 }), config));
      assert.equal((await bounded.ask({ payload: 5 })).request.body.setting.value, 5);
      assert.match((await bounded.fails({ payload: 21 })).error.message, /maxEssPower = 20000 W/);
    });

    it('a site the service does not list is refused before sending, naming maxEssPower', async () => {
      const loaded = await loadFlow(flow(siteSteer(UNLISTED), cfg(sim.s.url)));
      assert.match(
        (await loaded.fails({ payload: 1 })).error.message,
        /^ValidationError: maxEssPower is not set, so it is the site's rating, and there is none for ste_NotOnTheService \(GET \/sites does not list the site\)/,
      );
      assert.equal(steers(sim.s).length, 0);
    });

    it('a number set is the node\'s own limit; "none" turns a limit off and warns once at deploy', async () => {
      const loaded = await loadFlow(flow(siteSteer(COM, { maxEssPower: '600000' }), cfg(sim.s.url)));
      assert.equal((await loaded.ask({ payload: 550 })).request.body.setting.value, 550);
      const unbounded = await loadFlow(flow(siteSteer(COM, { maxEssPower: 'none' }), cfg(sim.s.url)));
      assert.equal(limitWarnings('n').length, 1);
      assert.equal((await unbounded.ask({ payload: 100_000 })).request.body.setting.value, 100_000);
      assert.equal(limitWarnings('n').length, 1, 'once, at deploy');
    });

    it('a fleet: each site within its own rating; the site beyond it fails alone (nothing sent to it), named in the one Catch error', async () => {
      const loaded = await loadFlow(flow(siteSteer('', { siteType: 'str' }), cfg(sim.s.url)));
      loaded.send({ payload: 50, sites: [COM, HOME] });
      const [out] = await loaded.out.count(1);
      const [caught] = await loaded.caught.count(1);
      assert.deepEqual(
        out.payload.results.map((r: { ok: boolean }) => r.ok),
        [true, false],
      );
      assert.match(
        out.payload.results[1].error.message,
        /^energyStorage must be within the site's battery rating 10000 W/,
      );
      assert.match(
        caught.error.message,
        new RegExp(
          `^FleetError: msg\\.sites: 1 of 2 sites failed: ${HOME} \\(energyStorage must be within the site's battery rating 10000 W`,
        ),
      );
      assert.deepEqual(
        steers(sim.s).map((e) => e.path),
        [`/sites/${COM}/steering/ess`],
      );
      // A rating the message states (maxPowerW) bounds its site.
      loaded.send({ payload: 50, sites: [{ site: COM, maxPowerW: 40_000 }] });
      const [, second] = await loaded.out.count(2);
      assert.match(
        second.payload.results[0].error.message,
        /battery rating 40000 W, either sign \(maxPowerW in the site list\)/,
      );
      // A rating the message states never raises the service's: 100000 kW with maxPowerW 1e9 to the 500 kW site is refused.
      loaded.send({ payload: 100_000, sites: [{ site: COM, maxPowerW: 1e9 }] });
      const [, , third] = await loaded.out.count(3);
      assert.match(
        third.payload.results[0].error.message,
        /^energyStorage must be within the site's battery rating 500000 W, either sign \(GET \/sites batteryMaxPower, below maxPowerW in the site list 1000000000 W\)/,
      );
      assert.deepEqual(
        steers(sim.s).map((e) => e.path),
        [`/sites/${COM}/steering/ess`],
        'nothing more was sent',
      );
    });

    it("portfolio: a rating the message states lowers the service's, never raises it", async () => {
      const loaded = await loadFlow(
        flow(siteSteer('', { siteType: 'str', mode: 'portfolio', portfolioSplit: 'rating' }), cfg(sim.s.url)),
      );
      loaded.send({
        payload: 100_000,
        sites: [
          { site: COM, maxPowerW: 1e9 },
          { site: HOME, maxPowerW: 5_000 },
        ],
      });
      const [out] = await loaded.out.count(1);
      const [com, home] = out.payload.results;
      assert.deepEqual([com.ok, home.ok], [true, true]);
      assert.deepEqual([com.part, home.part], [500, 5], 'each part at its smaller rating, kW');
      assert.deepEqual(
        steers(sim.s)
          .map((e) => (e.body as { setting: { value: number } }).setting.value)
          .sort((a: number, b: number) => a - b),
        [5_000, 500_000],
        'sent in W',
      );
    });

    it('portfolio: a site without a battery rating gets no part (refused naming maxEssPower); the others stay within theirs', async () => {
      const loaded = await loadFlow(
        flow(siteSteer('', { siteType: 'str', mode: 'portfolio', portfolioSplit: 'soc' }), cfg(sim.s.url)),
      );
      loaded.send({
        payload: 1000,
        sites: [
          { site: COM, soc: 50 },
          { site: HOME, soc: 50 },
          { site: UNLISTED, soc: 50 },
        ],
      });
      const [out] = await loaded.out.count(1);
      await loaded.caught.count(1);
      const [com, home, unlisted] = out.payload.results;
      assert.deepEqual([com.ok, home.ok, unlisted.ok], [true, true, false]);
      assert.equal(unlisted.error.field, 'maxEssPower');
      assert.match(
        unlisted.error.message,
        /^maxEssPower is not set, so each site's battery rating bounds its part, and ste_NotOnTheService has none/,
      );
      assert.ok(com.part <= 500 && home.part <= 10, JSON.stringify([com.part, home.part]));
      assert.equal(steers(sim.s).length, 2, 'nothing sent to the site without a rating');
    });
  });
});
