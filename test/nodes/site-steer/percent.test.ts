/**
 * The vendor's published curtailment type has W, kW and MW only. With the config
 * node's percentCurtailment "convert" (the default of a new config node) a `%` limit is sent
 * in W, integer, of the site's installed PV power: the node's pvPeakPower when set, else
 * msg.pvPeakPower, else the site's pvPeakPower in GET /sites (read once per runtime). Without
 * any, the message is refused with an error that says what to set, and nothing is sent.
 * "send" keeps `unit: "%"`, as does a config node saved before (migration 3).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_SITES } from '../../../src/simulator';
import { cfg, flow, helper, loadFlow, logged, siteSteer, useRuntime, useSimulator } from '../../helpers/red';

const COM = DEFAULT_SITES[0];
const HOME = DEFAULT_SITES[1];
const SITE = COM.siteReference;
/** A config node as the editor saves a new one (version 3), percentCurtailment as given. */
const config = (url: string, percentCurtailment?: string) =>
  cfg(url, { version: 3, ...(percentCurtailment ? { percentCurtailment } : {}) });
const curtail = (extra: Record<string, unknown> = {}) =>
  siteSteer(SITE, { mode: 'curtailment', curtailmentUnit: '%', pvPeakPower: '', version: 3, ...extra });

describe('site steer: a curtailment in % is sent in W (percentCurtailment "convert")', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();
  beforeEach(() => sim.s.sim.reset());
  const sitesReads = () => logged(sim.s, /^GET \/sites$/).length;
  /** msg.request deep-equals what the simulator received for msg.payload.requestId. */
  const same = (m: { request: unknown; payload: { requestId: string } }) => {
    const entry = sim.s.sim.requestLog.find((x) => x.requestId === m.payload.requestId)!;
    assert.deepStrictEqual(m.request, { method: entry.method, path: entry.path, body: entry.body });
  };

  it("with the node's pvPeakPower: 60 % of 1 MW is sent as 600000 W; msg.request shows the W; status too", async () => {
    const loaded = await loadFlow(flow(curtail({ pvPeakPower: 1_000_000 }), config(sim.s.url, 'convert')));
    const reply = await loaded.ask({ payload: 60 });
    same(reply);
    assert.deepStrictEqual(reply.request.body.setting, { value: 600_000, unit: 'W' });
    assert.match(loaded.status.all.at(-1).text, /^sent curtailment 600000 W until \d\d:\d\d$/);
    const curtailment = sim.s.sim.steeringState(SITE).components.productionCurtailment!;
    assert.deepStrictEqual([curtailment.value, curtailment.unit], [600_000, 'W']);
    assert.equal(sitesReads(), 0, 'no GET /sites needed');
  });

  it('is the default of a config node saved without percentCurtailment at version 3; rounds to whole watts', async () => {
    const loaded = await loadFlow(flow(curtail({ pvPeakPower: 9_999 }), config(sim.s.url)));
    const reply = await loaded.ask({ payload: 33.3 });
    assert.deepStrictEqual(reply.request.body.setting, { value: 3330, unit: 'W' });
    const zero = await loaded.ask({ payload: { curtailment: { value: 0, unit: '%' } } });
    assert.deepStrictEqual(zero.request.body.setting, { value: 0, unit: 'W' });
  });

  it("with msg.pvPeakPower when the node leaves pvPeakPower empty; the node's setting wins when set", async () => {
    const loaded = await loadFlow(flow(curtail(), config(sim.s.url)));
    const reply = await loaded.ask({ payload: 40, pvPeakPower: 10_000 });
    same(reply);
    assert.deepStrictEqual(reply.request.body.setting, { value: 4000, unit: 'W' });
    assert.deepStrictEqual((await loaded.ask({ payload: 50, pvPeakPower: '8000' })).request.body.setting, {
      value: 4000,
      unit: 'W',
    });
    const nodeWins = await loadFlow(flow(curtail({ pvPeakPower: 20_000 }), config(sim.s.url)));
    assert.deepStrictEqual((await nodeWins.ask({ payload: 50, pvPeakPower: 10_000 })).request.body.setting, {
      value: 10_000,
      unit: 'W',
    });
    assert.equal(sitesReads(), 0);
  });

  it("with the site's pvPeakPower from GET /sites, read once and shared by the nodes of the config node", async () => {
    const loaded = await loadFlow(
      flow(
        curtail(),
        config(sim.s.url),
        siteSteer(HOME.siteReference, {
          id: 'home',
          server: 'cfg',
          mode: 'combined',
          curtailmentUnit: '%',
          wires: [['out']],
        }),
      ),
    );
    const reply = await loaded.ask({ payload: 25 });
    same(reply);
    assert.deepStrictEqual(reply.request.body.setting, { value: Math.round(0.25 * COM.pv.peakW), unit: 'W' });
    const second = await loaded.ask({ payload: 30 });
    assert.deepStrictEqual(second.request.body.setting, { value: Math.round(0.3 * COM.pv.peakW), unit: 'W' });
    const home = loaded.out.next();
    helper.getNode('home').receive({ payload: { curtailment: 50 } });
    const homeReply = await home;
    assert.deepStrictEqual(homeReply.request.body, {
      productionCurtailment: { value: Math.round(0.5 * HOME.pv.peakW), unit: 'W' },
      validUntil: homeReply.request.body.validUntil,
    });
    assert.equal(sitesReads(), 1, 'one GET /sites for three messages on two nodes');
  });

  it('a % message that waits for GET /sites is not overtaken by a later message (arrival order is kept)', async () => {
    sim.s.sim.setFaults({ latencyMs: [60, 60] });
    try {
      const loaded = await loadFlow(flow(curtail({ validity: 'msg' }), config(sim.s.url)));
      const validUntil = Date.now() + 10 * 60_000;
      loaded.send({ payload: 40, validUntil });
      loaded.send({ payload: { curtailment: { value: 123, unit: 'kW' } }, validUntil });
      const [a, b] = await loaded.out.count(2);
      assert.deepStrictEqual(a.request.body.setting, { value: 0.4 * COM.pv.peakW, unit: 'W' });
      assert.deepStrictEqual(b.request.body.setting, { value: 123, unit: 'kW' });
      const curtailment = sim.s.sim.steeringState(SITE).components.productionCurtailment!;
      assert.deepStrictEqual([curtailment.value, curtailment.unit], [123, 'kW'], 'the later message wins');
    } finally {
      sim.s.sim.setFaults({ latencyMs: [0, 0] });
    }
  });

  it('in mode combined too; maxCurtailment applies to the converted W', async () => {
    const loaded = await loadFlow(
      flow(
        siteSteer(SITE, {
          mode: 'combined',
          curtailmentUnit: '%',
          pvPeakPower: 100_000,
          maxCurtailment: 50_000,
          version: 3,
        }),
        config(sim.s.url),
      ),
    );
    const ok = await loaded.ask({ payload: { energyStorage: 5, curtailment: 50 } });
    same(ok);
    assert.deepStrictEqual(ok.request.body.productionCurtailment, { value: 50_000, unit: 'W' });
    const requestsBefore = sim.s.sim.requestsReceived;
    const bad = await loaded.fails({ payload: { curtailment: 51 } });
    assert.match(
      bad.error.message,
      /^ValidationError: curtailment must be within the node's limit maxCurtailment = 50000 W; got 51 % = 51000 W of the site's PV power 100000 W \(pvPeakPower\); nothing was sent$/,
    );
    assert.equal(sim.s.sim.requestsReceived, requestsBefore);
  });

  it('a dry run shows the converted request and sends no steering', async () => {
    const loaded = await loadFlow(flow(curtail({ pvPeakPower: 1_000_000, dryRun: true }), config(sim.s.url)));
    const requestsBefore = sim.s.sim.requestsReceived;
    const reply = await loaded.ask({ payload: 10 });
    assert.equal(reply.dryRun, true);
    assert.deepStrictEqual(reply.request.body.setting, { value: 100_000, unit: 'W' });
    assert.equal(sim.s.sim.requestsReceived, requestsBefore);
    assert.match(loaded.status.all.at(-1).text, /^dry run: curtailment 100000 W$/);
  });

  it('without any PV power: refused, naming what to set; nothing is sent', async () => {
    const loaded = await loadFlow(flow(curtail(), config(sim.s.url)));
    const requestsBefore = sim.s.sim.requestsReceived;
    const unlisted = await loaded.fails({ payload: 60, site: 'ste_notListedHere' });
    assert.match(
      unlisted.error.message,
      /^ValidationError: pvPeakPower is needed to send a curtailment of 60 % in W \(the published curtailment type has no %\): set pvPeakPower \(W\) on the node, msg\.pvPeakPower \(W\), or the config node's percentCurtailment to "send" \(sends unit "%", for a service that accepts it\); GET \/sites does not list the site; nothing was sent$/,
    );
    assert.equal(logged(sim.s, /steering/).length, 0, 'no steering request');
    assert.equal(sim.s.sim.requestsReceived - requestsBefore, 1, 'only GET /sites');
    assert.equal(loaded.status.all.at(-1).fill, 'red');
    const negative = await loaded.fails({ payload: 60, pvPeakPower: -5 });
    assert.match(
      negative.error.message,
      /^ValidationError: msg\.pvPeakPower must be the site's installed PV power, a number of W greater than 0; got -5; nothing was sent$/,
    );
    const notANumber = await loaded.fails({ payload: 60, pvPeakPower: 'lots' });
    assert.match(notANumber.error.message, /^ValidationError: msg\.pvPeakPower must be/);
    assert.equal(logged(sim.s, /steering/).length, 0);
  });

  it('percentCurtailment "send": the % is sent as it is (and by a config node saved before, migration 3)', async () => {
    const loaded = await loadFlow(flow(curtail({ pvPeakPower: 1_000_000 }), config(sim.s.url, 'send')));
    const reply = await loaded.ask({ payload: 60 });
    same(reply);
    assert.deepStrictEqual(reply.request.body.setting, { value: 60, unit: '%' });
    const old = await loadFlow(flow(curtail(), cfg(sim.s.url))); // no version: saved by 0.2.0
    assert.deepStrictEqual((await old.ask({ payload: 70 })).request.body.setting, { value: 70, unit: '%' });
    assert.equal(sitesReads(), 0);
  });

  it('a bad percentCurtailment in the config node is refused, naming it', async () => {
    const loaded = await loadFlow(flow(curtail({ pvPeakPower: 1000 }), config(sim.s.url, 'maybe')));
    const failure = await loaded.fails({ payload: 60 });
    assert.match(failure.error.message, /percentCurtailment must be "convert" .* or "send"/);
  });
});

describe('site steer: % curtailment when GET /sites fails', () => {
  let server: http.Server;
  let url = '';
  const seen: string[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"message":"down for maintenance"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  useRuntime();

  it('is refused with the reason and what to set; no steering request is sent; the failure is not asked again at once', async () => {
    const loaded = await loadFlow(flow(curtail(), config(url)));
    const failure = await loaded.fails({ payload: 60 });
    assert.match(
      failure.error.message,
      /^ValidationError: pvPeakPower is needed to send a curtailment of 60 % in W .*set pvPeakPower \(W\) on the node, msg\.pvPeakPower \(W\), or the config node's percentCurtailment to "send".*; GET \/sites failed: .*503.*; nothing was sent$/,
    );
    await loaded.fails({ payload: 50 });
    assert.deepEqual(seen, ['GET /sites'], 'one read of the site list, no steering');
    // msg.pvPeakPower still works without the list.
    await loaded
      .fails({ payload: 50, pvPeakPower: 1000 })
      .then((e) => assert.match(e.error.message, /POST \/sites\/.*\/steering\/curtailment/));
    assert.equal(seen.at(-1), `POST /sites/${SITE}/steering/curtailment`);
  });
});
