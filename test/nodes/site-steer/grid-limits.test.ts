/**
 * Grid-limits mode of ems-site-steer, in a Node-RED runtime on the simulator: the
 * request shape (msg.request deep-equals what the simulator received), the refusals (neither
 * limit, lower above upper, beyond maxGridLimit, fields of other modes: each one Catch-able
 * error, nothing sent), dry run (also on a configured path), renew, stop (no cancel: nothing
 * sent), merging and ordering, and the status "sent …" in en-US and de.
 */
import assert from 'node:assert/strict';
import { MINUTE_MS, formatClock } from '../../../src/protocol/time';
import { DEFAULT_SITES } from '../../../src/simulator';
import { cfg, flow, helper, loadFlow, logged, siteSteer, turns, useRuntime, useSimulator } from '../../helpers/red';
import { received } from '../../helpers/sim';

const COM = DEFAULT_SITES[0];
const SITE = COM.siteReference;
const kW = (value: number) => ({ value, unit: 'kW' as const });
/** A site-steer node in mode grid-limits, as the editor saves it (version 3 defaults), on the Commercial site. */
const limits = (extra: Record<string, unknown> = {}) =>
  siteSteer(SITE, {
    mode: 'grid-limits',
    upperLimitValue: '',
    upperLimitValueType: 'num',
    upperLimitUnit: 'kW',
    lowerLimitValue: '',
    lowerLimitValueType: 'num',
    lowerLimitUnit: 'kW',
    maxGridLimit: '',
    version: 3,
    ...extra,
  });

describe('site steer: grid-limits mode', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();
  beforeEach(() => sim.s.sim.reset());
  const same = (m: { request: unknown; payload: { requestId: string } }) =>
    assert.deepStrictEqual(m.request, received(sim.s, m.payload.requestId));
  const gridLimitRequests = () => logged(sim.s, /grid-limits/);

  describe('request shape', () => {
    it('node limits and msg.payload {upperLimit, lowerLimit}: POST …/steering/grid-limits, msg.request is what the simulator received', async () => {
      const loaded = await loadFlow(flow(limits({ upperLimitValue: '-100' }), cfg(sim.s.url)));
      const reply = await loaded.ask({ payload: { lowerLimit: -200 } });
      same(reply);
      assert.deepStrictEqual(reply.request, {
        method: 'POST',
        path: `/sites/${SITE}/steering/grid-limits`,
        body: { upperLimit: kW(-100), lowerLimit: kW(-200), validUntil: reply.request.body.validUntil },
      });
      assert.match(reply.payload.requestId, /^req_/);
      assert.equal(reply.site, SITE);
      const status = loaded.status.all.at(-1);
      assert.equal(status.text, `sent grid −200 kW … −100 kW until ${formatClock(reply.request.body.validUntil)}`);
      assert.equal(status.fill, 'green');
    });

    it("one limit alone, {value, unit} in any unit, the node's units, and a TypedInput from msg", async () => {
      const loaded = await loadFlow(flow(limits({ upperLimitUnit: 'MW', lowerLimitUnit: 'W' }), cfg(sim.s.url)));
      const megawatts = await loaded.ask({ payload: { upperLimit: 0.5 } });
      same(megawatts);
      assert.deepStrictEqual(Object.keys(megawatts.request.body), ['upperLimit', 'validUntil']);
      assert.deepStrictEqual(megawatts.request.body.upperLimit, { value: 0.5, unit: 'MW' });
      assert.match(loaded.status.all.at(-1).text, /^sent grid ≤ 0\.5 MW until \d\d:\d\d$/);
      const kilowatts = await loaded.ask({ payload: { lowerLimit: { value: '-30', unit: 'kw' } } });
      same(kilowatts);
      assert.deepStrictEqual(kilowatts.request.body.lowerLimit, kW(-30));
      assert.match(loaded.status.all.at(-1).text, /^sent grid ≥ −30 kW until \d\d:\d\d$/);

      const fromMsg = await loadFlow(
        flow(
          limits({
            upperLimitValue: 'payload',
            upperLimitValueType: 'msg',
            lowerLimitValue: 'floor',
            lowerLimitValueType: 'msg',
          }),
          cfg(sim.s.url),
        ),
      );
      const reply = await fromMsg.ask({ payload: 40, floor: -60 });
      same(reply);
      assert.deepStrictEqual([reply.request.body.upperLimit, reply.request.body.lowerLimit], [kW(40), kW(-60)]);
    });

    it("a body in the API's own shape is sent as it is, validFrom and validUntil included", async () => {
      const loaded = await loadFlow(flow(limits(), cfg(sim.s.url)));
      const from = Date.now() + MINUTE_MS;
      const body = {
        upperLimit: { value: -100, unit: 'kW' },
        lowerLimit: { value: -200, unit: 'kW' },
        validFrom: from,
        validUntil: from + 10 * MINUTE_MS,
      };
      const reply = await loaded.ask({ payload: body });
      same(reply);
      assert.deepStrictEqual(reply.request.body, body);
    });

    it('validity as in the other modes: a duration, msg.validUntil, msg.payload.duration', async () => {
      const loaded = await loadFlow(
        flow(limits({ validity: 'duration', duration: 7, upperLimitValue: '50' }), cfg(sim.s.url)),
      );
      const t0 = Date.now();
      const reply = await loaded.ask({ payload: {} });
      assert.ok(
        reply.request.body.validUntil >= t0 + 7 * MINUTE_MS &&
          reply.request.body.validUntil <= Date.now() + 7 * MINUTE_MS,
      );
      const msgValidity = await loadFlow(flow(limits({ validity: 'msg', upperLimitValue: '50' }), cfg(sim.s.url)));
      const until = Date.now() + 9 * MINUTE_MS;
      assert.equal((await msgValidity.ask({ validUntil: until })).request.body.validUntil, until);
      const t1 = Date.now();
      const validUntil = (await msgValidity.ask({ payload: { lowerLimit: 1, duration: 2 } })).request.body.validUntil;
      assert.ok(validUntil >= t1 + 2 * MINUTE_MS && validUntil <= Date.now() + 2 * MINUTE_MS);
    });
  });

  describe('refusals: one Catch-able error each, naming the field and the accepted forms; nothing sent', () => {
    async function refused(
      f: Awaited<ReturnType<typeof loadFlow>>,
      cases: Array<[Record<string, unknown>, RegExp]>,
    ): Promise<void> {
      const requestsBefore = sim.s.sim.requestsReceived;
      for (const [msg, re] of cases) {
        const failure = await f.fails(msg);
        assert.match(failure.error.message, re, JSON.stringify(msg));
        assert.equal(failure.error.source.id, 'n');
      }
      assert.equal(sim.s.sim.requestsReceived, requestsBefore, 'the simulator received no request');
      assert.equal(f.out.msgs.length, 0);
      assert.equal(f.caught.msgs.length, cases.length);
      assert.equal(f.status.all.at(-1).fill, 'red');
    }

    it('neither limit set (nothing in the node, an empty object, a bare number, nulls)', async () => {
      const loaded = await loadFlow(flow(limits(), cfg(sim.s.url)));
      const NONE =
        /^ValidationError: msg\.payload sets no grid limit: send \{upperLimit, lowerLimit\} \(at least one; each a number in the node's unit or \{value, unit: W\|kW\|MW\}.*nothing was sent$/;
      await refused(loaded, [
        [{ payload: {} }, NONE],
        [{ payload: 50 }, NONE],
        [{ payload: { upperLimit: null, lowerLimit: '' } }, NONE],
        [{}, NONE],
      ]);
    });

    it('lowerLimit above upperLimit, from the node or the message', async () => {
      const loaded = await loadFlow(flow(limits({ upperLimitValue: '-100' }), cfg(sim.s.url)));
      await refused(loaded, [
        [
          { payload: { lowerLimit: -50 } },
          /^ValidationError: msg\.payload\.lowerLimit must not be above upperLimit \(-100 kW\); got -50 kW; nothing was sent$/,
        ],
        [
          { payload: { upperLimit: { value: 1, unit: 'W' }, lowerLimit: { value: 0.002, unit: 'kW' } } },
          /^ValidationError: msg\.payload\.lowerLimit must not be above upperLimit \(1 W\); got 0\.002 kW/,
        ],
      ]);
      const inverted = await loadFlow(flow(limits({ upperLimitValue: '10', lowerLimitValue: '20' }), cfg(sim.s.url)));
      await refused(inverted, [
        [
          { payload: {} },
          /^ValidationError: lowerLimit must not be above upperLimit \(10 kW\); got 20 kW; nothing was sent$/,
        ],
      ]);
    });

    it('beyond maxGridLimit (either sign, any unit); within it is sent', async () => {
      const loaded = await loadFlow(flow(limits({ maxGridLimit: '150000', lowerLimitValue: '-151' }), cfg(sim.s.url)));
      await refused(loaded, [
        [
          { payload: { upperLimit: 0 } },
          /^ValidationError: lowerLimit must be within the node's limit maxGridLimit = 150000 W \(either sign\); got -151 kW; nothing was sent$/,
        ],
      ]);
      const bounded = await loadFlow(flow(limits({ maxGridLimit: 150_000 }), cfg(sim.s.url)));
      await refused(bounded, [
        [
          { payload: { upperLimit: { value: 0.2, unit: 'MW' } } },
          /^ValidationError: msg\.payload\.upperLimit must be within the node's limit maxGridLimit = 150000 W \(either sign\); got 0\.2 MW/,
        ],
        [
          { payload: { lowerLimit: -150.001 } },
          /^ValidationError: msg\.payload\.lowerLimit must be within the node's limit maxGridLimit = 150000 W/,
        ],
      ]);
      const ok = await bounded.ask({ payload: { upperLimit: 150, lowerLimit: { value: -150_000, unit: 'W' } } });
      same(ok);
    });

    it('fields of other modes, unknown fields, bad units and values', async () => {
      const loaded = await loadFlow(flow(limits(), cfg(sim.s.url)));
      await refused(loaded, [
        [
          { payload: { upperLimit: 5, energyStorage: 3 } },
          /^ValidationError: energyStorage is not used in mode grid-limits; use mode combined .*, grid-target or grid-limits$/,
        ],
        [
          { payload: { upperLimit: 5, limit: 3 } },
          /^ValidationError: msg\.payload\.limit is not a steering field; accepted: .*upperLimit, lowerLimit/,
        ],
        [
          { payload: { upperLimit: { value: 5, unit: '%' } } },
          /^ValidationError: msg\.payload\.upperLimit\.unit must be one of W, kW, MW; got "%"$/,
        ],
        [{ payload: { lowerLimit: 'lots' } }, /^ValidationError: msg\.payload\.lowerLimit must be a finite number/],
      ]);
      // And the other way round: limits in another mode.
      const essMode = await loadFlow(flow(siteSteer(SITE, { mode: 'ess' }), cfg(sim.s.url)));
      await refused(essMode, [
        [{ payload: { energyStorage: 1, upperLimit: 5 } }, /^ValidationError: upperLimit is not used in mode ess/],
      ]);
    });

    it('a bad unit or maxGridLimit in the node is refused at deploy and for each message', async () => {
      const loaded = await loadFlow(flow(limits({ upperLimitUnit: 'mW' }), cfg(sim.s.url)));
      await refused(loaded, [
        [{ payload: { upperLimit: 1 } }, /^ValidationError: upperLimitUnit must be one of W, kW, MW; got "mW"$/],
      ]);
      const negativeMax = await loadFlow(flow(limits({ maxGridLimit: '-1' }), cfg(sim.s.url)));
      await refused(negativeMax, [
        [
          { payload: { upperLimit: 1 } },
          /^ValidationError: maxGridLimit must be more than 0 W \(empty = the site's rating; "none" = no limit\); got "-1"$/,
        ],
      ]);
    });
  });

  describe('dry run, stop, renew', () => {
    it('a dry run sends nothing and shows the request the same message sends for real', async () => {
      const validUntil = Date.now() + 10 * MINUTE_MS;
      const dry = await loadFlow(
        flow(limits({ dryRun: true, validity: 'msg', upperLimitValue: '-100' }), cfg(sim.s.url)),
      );
      const requestsBefore = sim.s.sim.requestsReceived;
      const dryReply = await dry.ask({ payload: { lowerLimit: -300 }, validUntil });
      assert.equal(sim.s.sim.requestsReceived, requestsBefore, 'nothing sent');
      assert.equal(dryReply.dryRun, true);
      assert.deepStrictEqual(dryReply.payload, dryReply.request.body);
      assert.equal(dry.status.all.at(-1).text, 'dry run: grid −300 kW … −100 kW');
      const real = await loadFlow(flow(limits({ validity: 'msg', upperLimitValue: '-100' }), cfg(sim.s.url)));
      const realReply = await real.ask({ payload: { lowerLimit: -300 }, validUntil });
      same(realReply);
      assert.deepStrictEqual(dryReply.request, realReply.request);
    });

    it("a dry run uses the config node's pathGridLimits", async () => {
      const loaded = await loadFlow(
        flow(limits({ dryRun: true }), cfg(sim.s.url, { pathGridLimits: '/v2/sites/<site>/grid/limits', version: 3 })),
      );
      const requestsBefore = sim.s.sim.requestsReceived;
      const reply = await loaded.ask({ payload: { upperLimit: 1 } });
      assert.equal(reply.request.path, `/v2/sites/${SITE}/grid/limits`);
      assert.equal(sim.s.sim.requestsReceived, requestsBefore, 'nothing sent');
    });

    it('stop sends nothing (there is no cancel; the limits lapse at validUntil), also with stopAction "lift"', async () => {
      for (const stopAction of ['expire', 'lift']) {
        const loaded = await loadFlow(flow(limits({ stopAction, pvPeakPower: 1000 }), cfg(sim.s.url)));
        const sent = await loaded.ask({ payload: { upperLimit: 20 } });
        const requestsBefore = sim.s.sim.requestsReceived;
        const reply = await loaded.ask({ payload: 'stop' });
        assert.deepStrictEqual(reply.payload, { stopped: true, renewing: false });
        assert.equal(reply.request, undefined);
        assert.equal(sim.s.sim.requestsReceived, requestsBefore, `${stopAction}: nothing sent`);
        assert.equal(loaded.status.all.at(-1).text, 'stopped');
        const inForce = sim.s.sim.steeringState(SITE).components.gridLimits;
        assert.equal(inForce?.validUntil, sent.request.body.validUntil, 'the limits stay until their validUntil');
      }
    });

    it('renew resends the same limits before expiry; stop ends renewing', async function () {
      this.timeout(15_000);
      // 0.05 min = 3 s validity: the first renewal goes out 2 s before expiry, 1 s after the send.
      const loaded = await loadFlow(
        flow(
          limits({
            validity: 'duration',
            duration: 0.05,
            renew: true,
            upperLimitValue: '-100',
            lowerLimitValue: '-200',
          }),
          cfg(sim.s.url),
        ),
      );
      const first = await loaded.ask({ payload: {} });
      await loaded.status.wait((s) => /\(renewed\)$/.test(s.text ?? ''), 5_000, 'a renewal');
      assert.match(loaded.status.all.at(-1).text, /^sent grid −200 kW … −100 kW until \d\d:\d\d \(renewed\)$/);
      const sent = gridLimitRequests();
      assert.equal(sent.length, 2);
      assert.deepStrictEqual((sent[1].body as { upperLimit: unknown }).upperLimit, kW(-100));
      assert.deepStrictEqual((sent[1].body as { lowerLimit: unknown }).lowerLimit, kW(-200));
      assert.ok((sent[1].body as { validUntil: number }).validUntil > first.request.body.validUntil);
      const stop = await loaded.ask({ payload: 'stop' });
      assert.deepStrictEqual(stop.payload, { stopped: true, renewing: false });
      assert.equal(loaded.status.all.at(-1).text, 'renew stopped');
    });
  });

  describe('ordering and merging, as in the other modes', () => {
    it('a burst of 50 grid-limits messages sends 2 requests; each msg.request is the request that carried it; the last wins', async () => {
      sim.s.sim.setFaults({ latencyMs: [40, 40] });
      try {
        const loaded = await loadFlow(flow(limits({ validity: 'msg' }), cfg(sim.s.url)));
        const validUntil = Date.now() + 10 * MINUTE_MS;
        for (let i = 1; i <= 50; i++) loaded.send({ payload: { upperLimit: i, lowerLimit: -i }, validUntil });
        const out = await loaded.out.count(50);
        assert.equal(gridLimitRequests().length, 2, 'the first, then one merged request');
        for (const m of out) same(m);
        assert.deepStrictEqual(out[49].request.body, { upperLimit: kW(50), lowerLimit: kW(-50), validUntil });
        assert.ok(out.slice(1).every((m) => m.merged === true));
        assert.equal(sim.s.sim.steeringState(SITE).components.gridLimits?.upperW, 50_000);
      } finally {
        sim.s.sim.setFaults({ latencyMs: [0, 0] });
      }
    });

    it('grid limits and ESS on one site go out one at a time in arrival order, each in its own request', async () => {
      sim.s.sim.setFaults({ latencyMs: [30, 30] });
      try {
        const loaded = await loadFlow(
          flow(
            limits({ validity: 'msg' }),
            cfg(sim.s.url),
            siteSteer(SITE, { id: 'ess', server: 'cfg', validity: 'msg', wires: [['out']] }),
          ),
        );
        const validUntil = Date.now() + 10 * MINUTE_MS;
        loaded.send({ payload: { upperLimit: 100 }, validUntil });
        await turns(2);
        helper.getNode('ess').receive({ payload: -20, validUntil });
        loaded.send({ payload: { upperLimit: 80 }, validUntil });
        const out = await loaded.out.count(3);
        for (const m of out) same(m);
        const routes = logged(sim.s, /^POST \/sites\/:ref\/steering/).map((e) => e.path.split('/').at(-1));
        assert.equal(routes[0], 'grid-limits');
        assert.deepStrictEqual([...routes.slice(1)].sort(), ['ess', 'grid-limits']);
        const components = sim.s.sim.steeringState(SITE).components;
        assert.equal(components.gridLimits?.upperW, 80_000);
        assert.equal(components.energyStorageSetting?.value, -20, 'grid limits coexist with asset steering');
      } finally {
        sim.s.sim.setFaults({ latencyMs: [0, 0] });
      }
    });
  });
});

describe('site steer: grid limits on a configured path', () => {
  const PATH = '/v2/sites/<site>/grid/limits';
  const sim = useSimulator({ frozen: false, paths: { gridLimits: PATH } });
  useRuntime();

  it("the config node's pathGridLimits is where the request goes; msg.request is what the simulator received there", async () => {
    const loaded = await loadFlow(flow(limits(), cfg(sim.s.url, { pathGridLimits: PATH, version: 3 })));
    const reply = await loaded.ask({ payload: { upperLimit: -10 } });
    assert.equal(reply.request.path, `/v2/sites/${SITE}/grid/limits`);
    assert.deepStrictEqual(reply.request, received(sim.s, reply.payload.requestId));
    assert.equal(sim.s.sim.steeringState(SITE).components.gridLimits?.upperW, -10_000);
  });
});
