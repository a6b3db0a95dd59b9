/**
 * Fleet steering of ems-site-steer on a simulator with 20 sites: every mode applied
 * to each site in one message, one output with a result per site, partial failure (output
 * plus one Catch-able error listing the failed site), portfolio split by rating and by SOC,
 * limits, shortfall, refusals before anything is sent.
 */
import assert from 'node:assert/strict';
import { cfg, flow, loadFlow, logged, siteSteer, useRuntime, useSimulator } from '../../helpers/red';
import { REFS, SITES, UNKNOWN } from './fleet-sites';

const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);

describe('fleet steer: ems-site-steer with msg.sites / sites (20 simulator sites)', () => {
  const sim = useSimulator({ sites: SITES, frozen: false });
  useRuntime();
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  before(() => process.on('unhandledRejection', onUnhandled));
  after(() => process.off('unhandledRejection', onUnhandled));
  beforeEach(() => sim.s.sim.reset());
  afterEach(() => assert.deepEqual(unhandled, [], 'no unhandled rejections'));
  const steers = () => logged(sim.s, /^(POST|DELETE) \/sites\/:ref\/steering/);
  const ess = (ref: string) => sim.s.sim.steeringState(ref).components.energyStorageSetting;

  it('portfolio by rating (GET /sites): parts in proportion to the batteries, summing to the total; summary asked / allocated', async () => {
    const loaded = await loadFlow(flow(siteSteer('', { mode: 'portfolio', sites: REFS.join('\n') }), cfg(sim.s.url)));
    const reply = await loaded.ask({ payload: 125 }); // kW; the fleet's ratings sum to 250 kW: each site half its rating
    const parts = reply.payload.results.map(
      (r: { request: { body: { setting: { value: number; unit: string } } } }) => r.request.body.setting,
    );
    assert.ok(parts.every((p: { unit: string }) => p.unit === 'W'));
    assert.deepEqual(
      parts.map((p: { value: number }) => p.value),
      SITES.map((s) => s.battery.maxPowerW / 2),
    );
    assert.deepEqual(reply.payload.summary, {
      ok: 20,
      failed: 0,
      total: 20,
      unit: 'kW',
      asked: 125,
      allocated: 125,
      accepted: 125,
      shortfall: 0,
    });
    assert.equal(reply.payload.results[0].part, 2.5);
    assert.equal(ess(REFS[3])!.value, 10_000);
    assert.equal(logged(sim.s, 'GET /sites').length, 1, 'the site list is read once');
    assert.equal(steers().length, 20);
    // Within 1 W for an uneven total.
    const odd = await loaded.ask({ payload: -33.3333 });
    assert.ok(
      Math.abs(
        sum(
          odd.payload.results.map(
            (r: { request: { body: { setting: { value: number } } } }) => r.request.body.setting.value,
          ),
        ) + 33_333.3,
      ) <= 1,
    );
  });

  it("portfolio: the node's maxEssPower caps each part and the rest goes to the others; beyond the fleet: shortfall", async () => {
    const loaded = await loadFlow(flow(siteSteer('', { mode: 'portfolio', maxEssPower: 8000 }), cfg(sim.s.url)));
    const four = REFS.slice(0, 4); // 5, 10, 15, 20 kW, capped at 8 kW
    // By rating 5:10:15:20 the 20 kW site would take 8.8 kW; it takes 8 kW and the others share the rest 5:10:15.
    const reply = await loaded.ask({ payload: 22, sites: four });
    const parts = reply.payload.results.map(
      (r: { request: { body: { setting: { value: number } } } }) => r.request.body.setting.value,
    );
    assert.deepEqual(parts, [2333, 4667, 7000, 8000]);
    const short = await loaded.ask({ payload: 40, sites: four });
    assert.deepEqual(
      short.payload.results.map(
        (r: { request: { body: { setting: { value: number } } } }) => r.request.body.setting.value,
      ),
      [5000, 8000, 8000, 8000],
    );
    assert.deepEqual(short.payload.summary, {
      ok: 4,
      failed: 0,
      total: 4,
      unit: 'kW',
      asked: 40,
      allocated: 29,
      accepted: 29,
      shortfall: 11,
    });
    assert.match(loaded.status.all.at(-1).text, /^sent to 4 of 4 sites, short by 11 kW$/);
  });

  it("portfolio by SOC: discharge by SOC, charge by headroom; msg.sites values first, else the battery's soc read", async () => {
    const loaded = await loadFlow(flow(siteSteer('', { mode: 'portfolio', portfolioSplit: 'soc' }), cfg(sim.s.url)));
    const sites = [
      { site: REFS[0], soc: 20 },
      { site: REFS[1], soc: 60 },
    ];
    const discharge = await loaded.ask({ payload: 4, sites });
    assert.deepEqual(
      discharge.payload.results.map(
        (r: { request: { body: { setting: { value: number } } } }) => r.request.body.setting.value,
      ),
      [1000, 3000],
    );
    const charge = await loaded.ask({ payload: -4, sites });
    assert.deepEqual(
      charge.payload.results.map(
        (r: { request: { body: { setting: { value: number } } } }) => r.request.body.setting.value,
      ),
      [-2667, -1333],
      'headroom 80 % : 40 %',
    );
    // Without soc in the message: read from each battery device (SITES[4]: 26 %, SITES[8]: 42 %, both 5 kW).
    const reads = logged(sim.s, 'GET /devices/:ref/measurement').length;
    const reply = await loaded.ask({ payload: 2, sites: [REFS[4], REFS[8]] });
    const [a, b] = reply.payload.results.map(
      (x: { request: { body: { setting: { value: number } } } }) => x.request.body.setting.value,
    );
    assert.equal(a + b, 2000);
    assert.ok(b > a, 'the fuller battery discharges more');
    assert.equal(logged(sim.s, 'GET /devices/:ref/measurement').length - reads, 2, 'one soc read per site');
  });

  it('portfolio: a site without a rating is left out and reported; the others share the total', async () => {
    const loaded = await loadFlow(flow(siteSteer('', { mode: 'portfolio' }), cfg(sim.s.url)));
    loaded.send({ payload: 10, sites: [REFS[0], UNKNOWN, REFS[1]] });
    const [out] = await loaded.out.count(1);
    const [caught] = await loaded.caught.count(1);
    assert.deepEqual(
      out.payload.results.map((r: { ok: boolean }) => r.ok),
      [true, false, true],
    );
    assert.match(out.payload.results[1].error.message, /has no battery rating/);
    assert.equal(out.payload.results[1].request, undefined, 'nothing sent to it');
    assert.equal(
      out.payload.results[0].request.body.setting.value + out.payload.results[2].request.body.setting.value,
      10_000,
    );
    assert.match(caught.error.message, new RegExp(`1 of 3 sites failed: ${UNKNOWN}`));
    assert.equal(steers().length, 2);
  });

  it("portfolio without a list steers the node's one site (or msg.site) as a fleet of one, within its rating", async () => {
    const loaded = await loadFlow(flow(siteSteer(REFS[1], { mode: 'portfolio' }), cfg(sim.s.url)));
    const reply = await loaded.ask({ payload: 50 });
    assert.equal(reply.payload.results.length, 1);
    assert.deepEqual(reply.payload.results[0].request.body.setting, { value: 10_000, unit: 'W' });
    assert.deepEqual(reply.payload.summary, {
      ok: 1,
      failed: 0,
      total: 1,
      unit: 'kW',
      asked: 50,
      allocated: 10,
      accepted: 10,
      shortfall: 40,
    });
  });
});
