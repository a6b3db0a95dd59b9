/**
 * Fleet steering of ems-site-steer on a simulator with 20 sites: every mode applied
 * to each site in one message, one output with a result per site, partial failure (output
 * plus one Catch-able error listing the failed site), portfolio split by rating and by SOC,
 * limits, shortfall, refusals before anything is sent.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { packageTimers } from '../../helpers/clock';
import { SERVICE } from '../../../src/protocol/limits';
import { cfg, flow, loadFlow, logged, siteSteer, useRuntime, useSimulator } from '../../helpers/red';
import { REFS, SITES, UNKNOWN } from './fleet-sites';

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

  it('ess to 20 sites, one unknown: one output with 19 successes and the failure, and one Catch error naming that site', async () => {
    // (A limit set: the service's 404 for the unknown site, not the refusal of a site without a rating.)
    const loaded = await loadFlow(flow(siteSteer('', { siteType: 'str', maxEssPower: 500_000 }), cfg(sim.s.url)));
    const sites = [...REFS.slice(0, 19), UNKNOWN];
    loaded.send({ payload: -3, sites, topic: 'kept' });
    const [out] = await loaded.out.count(1);
    const [caught] = await loaded.caught.count(1);
    assert.equal(out.topic, 'kept');
    assert.deepEqual(out.payload.summary, { ok: 19, failed: 1, total: 20 });
    assert.deepEqual(
      out.payload.results.map((r: { site: string }) => r.site),
      sites,
      'one entry per site, in list order',
    );
    for (const r of out.payload.results.slice(0, 19)) {
      assert.equal(r.ok, true);
      assert.deepEqual(r.request, {
        method: 'POST',
        path: `/sites/${r.site}/steering/ess`,
        body: { setting: { value: -3, unit: 'kW' }, validUntil: r.request.body.validUntil },
      });
      assert.match(r.response.requestId, /^req_/);
      assert.equal(ess(r.site)!.value, -3);
    }
    const bad = out.payload.results[19];
    assert.equal(bad.ok, false);
    assert.equal(bad.error.status, 404);
    assert.equal(bad.request.path, `/sites/${UNKNOWN}/steering/ess`);
    assert.equal(steers().length, 20, 'one request per site');
    // The Catch node: one error that lists the failed site; the caught message is the input.
    assert.match(caught.error.message, new RegExp(`^FleetError: msg\\.sites: 1 of 20 sites failed: ${UNKNOWN} \\(`));
    assert.equal(caught.error.code, 'EMS_FLEET_PARTIAL');
    assert.deepEqual(
      caught.error.cause.failed.map((x: { site: string }) => x.site),
      [UNKNOWN],
    );
    assert.equal(loaded.caught.msgs.length, 1);
    assert.equal(loaded.out.msgs.length, 1);
    assert.match(loaded.status.all.at(-1).text, /^sent to 19 of 20 sites, 1 failed$/);
    assert.equal(loaded.status.all.at(-1).fill, 'yellow');
  });

  it("the node's sites (text) apply every mode to each site: curtailment, combined, grid-target and its stop, grid-limits", async () => {
    const list = REFS.slice(0, 3).join(',\n');
    const cases: Array<[Record<string, unknown>, unknown, string]> = [
      [{ mode: 'curtailment' }, 4, 'curtailment'],
      [{ mode: 'combined', curtailmentValue: '6', maximizeGridImport: 'false' }, 2, ''],
      [{ mode: 'grid-target', deadbandValue: '1' }, 1.5, 'grid-target'],
      [{ mode: 'grid-limits', upperLimitValue: '8', lowerLimitValue: '-4' }, null, 'grid-limits'],
    ];
    for (const [extra, payload, path] of cases) {
      const loaded = await loadFlow(flow(siteSteer('', { sites: list, ...extra }), cfg(sim.s.url)));
      const reply = await loaded.ask({ payload });
      assert.deepEqual(reply.payload.summary, { ok: 3, failed: 0, total: 3 }, String(extra.mode));
      reply.payload.results.forEach((r: { site: string; request: { path: string } }, i: number) => {
        assert.equal(r.site, REFS[i]);
        assert.equal(r.request.path, `/sites/${REFS[i]}/steering${path ? `/${path}` : ''}`);
      });
      assert.match(loaded.status.all.at(-1).text, /^sent to 3 of 3 sites$/);
    }
    const state = sim.s.sim.steeringState(REFS[2]).components;
    assert.equal(state.gridTarget!.value, 1.5);
    // Stop in mode grid-target cancels the grid target of each site.
    const gridTargets = await loadFlow(flow(siteSteer('', { sites: list, mode: 'grid-target' }), cfg(sim.s.url)));
    const stopped = await gridTargets.ask({ payload: 'stop' });
    assert.deepEqual(
      stopped.payload.results.map((r: { request: { method: string } }) => r.request.method),
      ['DELETE', 'DELETE', 'DELETE'],
    );
    assert.equal(sim.s.sim.steeringState(REFS[2]).components.gridTarget, null);
    assert.match(gridTargets.status.all.at(-1).text, /^stopped 3 sites$/);
  });

  it("msg.sites overrides the node's sites; dry run outputs each site's request and sends nothing", async () => {
    const loaded = await loadFlow(
      flow(siteSteer('', { sites: REFS.slice(0, 5).join(','), dryRun: true }), cfg(sim.s.url)),
    );
    const reply = await loaded.ask({ payload: 7, sites: [REFS[7], { site: REFS[8] }] });
    assert.equal(reply.dryRun, true);
    assert.deepEqual(
      reply.payload.results.map((r: { site: string; ok: boolean; request: { body: { setting: unknown } } }) => [
        r.site,
        r.ok,
        r.request.body.setting,
      ]),
      [
        [REFS[7], true, { value: 7, unit: 'kW' }],
        [REFS[8], true, { value: 7, unit: 'kW' }],
      ],
    );
    assert.equal(steers().length, 0);
    assert.equal(loaded.status.all.at(-1).text, 'dry run: 2 sites');
  });

  it('refused before anything is sent: more than maxFleetSites, a site twice, a bad entry (the error names the field)', async () => {
    const loaded = await loadFlow(flow(siteSteer('', {}), cfg(sim.s.url)));
    const many = Array.from({ length: SERVICE.maxFleetSites + 1 }, (_, i) => `ste_${i}`);
    const e1 = await loaded.fails({ payload: 1, sites: many });
    assert.match(
      e1.error.message,
      new RegExp(
        `msg\\.sites lists ${SERVICE.maxFleetSites + 1} sites; one message steers at most ${SERVICE.maxFleetSites}`,
      ),
    );
    const e2 = await loaded.fails({ payload: 1, sites: [REFS[0], REFS[1], REFS[0]] });
    assert.match(e2.error.message, /msg\.sites\[2\] repeats site/);
    const e3 = await loaded.fails({ payload: 1, sites: [REFS[0], 5] });
    assert.match(e3.error.message, /msg\.sites\[1\] must be a site reference/);
    const e4 = await loaded.fails({ payload: 1, sites: 'ste_a' });
    assert.match(e4.error.message, /msg\.sites must be an array/);
    assert.equal(steers().length, 0);
    assert.equal(loaded.out.msgs.length, 0);
    // A bad node list is refused at deploy, naming `sites`.
    const badList = await loadFlow(flow(siteSteer('', { sites: 'ste_a, ste_a' }), cfg(sim.s.url)));
    const e5 = await badList.fails({ payload: 1 });
    assert.match(e5.error.message, /^ValidationError: sites\[1\] repeats site ste_a/);
  });

  it("a value beyond the node's limit is refused for the whole fleet (nothing sent); all sites failing still gives the output and one error", async () => {
    const loaded = await loadFlow(flow(siteSteer('', { maxEssPower: 1000 }), cfg(sim.s.url)));
    const failure = await loaded.fails({ payload: 2, sites: REFS.slice(0, 3) });
    assert.match(failure.error.message, /energyStorage must be within the node's limit maxEssPower = 1000 W/);
    assert.equal(steers().length, 0);
    loaded.send({ payload: 1, sites: ['ste_NoSuchA', 'ste_NoSuchB'] });
    const [out] = await loaded.out.count(1);
    const caught = (await loaded.caught.count(2))[1];
    assert.deepEqual(out.payload.summary, { ok: 0, failed: 2, total: 2 });
    assert.match(caught.error.message, /2 of 2 sites failed: ste_NoSuchA .*; ste_NoSuchB/);
    assert.equal(loaded.status.all.at(-1).text, 'all 2 sites failed');
  });

  it("renew renews each site's part as it was sent (no new split); stop ends every site's renewal", async function () {
    this.timeout(10_000);
    // 1 min validity: each renewal goes out 12 s before expiry, 48 s after its signal. The renewal
    // timers run on a fake clock (setTimeout only; Date and the I/O are real), so the test moves
    // to them at once, and can see after stop that no timer is left that could send a renewal.
    const list = JSON.stringify([
      { site: REFS[0], maxPowerW: 1000 },
      { site: REFS[1], maxPowerW: 3000 },
    ]);
    const loaded = await loadFlow(
      flow(
        siteSteer('', { mode: 'portfolio', sites: list, validity: 'duration', duration: 1, renew: true }),
        cfg(sim.s.url),
      ),
    );
    const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const reply = await loaded.ask({ payload: 2 });
      assert.deepEqual(
        reply.payload.results.map(
          (r: { request: { body: { setting: { value: number } } } }) => r.request.body.setting.value,
        ),
        [500, 1500],
        "ratings from the node's list",
      );
      assert.equal(packageTimers(clock), 2, 'one renewal pending per site');
      const bySite = (ref: string) => steers().filter((e) => e.path.includes(ref));
      const shown = loaded.status.all.length;
      await clock.tickAsync(48_000); // the renewals' time: both go out (real requests)
      // Each renewal shows "(renewed)" once answered, and re-arms in the same step.
      await loaded.status.count((x) => /\(renewed\)$/.test(x.text ?? ''), 2, shown, 5_000);
      assert.equal(bySite(REFS[0]).length, 2, 'one renewal of the first site');
      assert.equal(bySite(REFS[1]).length, 2, 'one renewal of the second site');
      assert.deepEqual(
        bySite(REFS[0])
          .map((e) => (e.body as { setting: { value: number } }).setting.value)
          .slice(0, 2),
        [500, 500],
      );
      assert.deepEqual(
        bySite(REFS[1])
          .map((e) => (e.body as { setting: { value: number } }).setting.value)
          .slice(0, 2),
        [1500, 1500],
      );
      assert.equal(packageTimers(clock), 2, 'the chain goes on: a renewal pending per site again');
      const stopped = await loaded.ask({ payload: 'stop' });
      assert.deepEqual(
        stopped.payload.results.map((r: { response: unknown }) => r.response),
        [
          { stopped: true, renewing: false },
          { stopped: true, renewing: false },
        ],
      );
      assert.deepEqual(stopped.payload.summary, { ok: 2, failed: 0, total: 2 });
      // The barrier: no renewal is in flight (both answered before stop) and no timer is left, so
      // none can ever go out. Ten minutes of renewal time then pass and the log stays as it is.
      assert.equal(packageTimers(clock), 0, 'stop cleared every renewal timer');
      const count = steers().length;
      await clock.tickAsync(10 * 60_000);
      assert.equal(steers().length, count, 'no renewal after stop');
    } finally {
      clock.uninstall();
    }
  });

  it('a single site behaves as before, whatever the message carries (msg.fleet is not taken for a fleet outcome)', async () => {
    const loaded = await loadFlow(flow(siteSteer(REFS[2]), cfg(sim.s.url)));
    const reply = await loaded.ask({ payload: 1, fleet: true });
    assert.equal(reply.site, REFS[2]);
    assert.equal(reply.fleet, true);
    assert.deepEqual(reply.request.body.setting, { value: 1, unit: 'kW' });
    assert.match(reply.payload.requestId, /^req_/);
  });
});
