/**
 * Safety limits, and `stop` in curtailment mode, in a real Node-RED runtime on
 * the simulator: the config node's maxValidity, the site steer node's maxGridPower and
 * allowMaximizeGridImport refuse with one Catch-able error naming the field and the limit,
 * and send nothing; stopAction 'lift' sends "no curtailment" (pvPeakPower W) until the
 * current validUntil, 'expire' sends nothing.
 */
import assert from 'node:assert/strict';
import { MINUTE_MS, quarterHourValidUntil } from '../../../src/protocol/time';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { cfg, flow, loadFlow, logged, useRuntime, useSimulator, siteSteer } from '../../helpers/red';

const COM = DEFAULT_SITES[0];
const SITE = COM.siteReference;
const PEAK = COM.pv.peakW;

const steer = (extra: Record<string, unknown> = {}) => siteSteer(SITE, extra);

describe('nodes: ems-site-steer limits (maxValidity, maxGridPower, allowMaximizeGridImport) and stopAction', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();
  beforeEach(() => sim.s.sim.reset());
  const state = () => sim.s.sim.steeringState(SITE).components;
  const steerings = () => logged(sim.s, /^(POST|DELETE) \/sites\/:ref\/steering/);

  /** Sends each message, expects one Catch-able error each matching its pattern, and no request at all. */
  async function refusedAll(
    f: Awaited<ReturnType<typeof loadFlow>>,
    cases: Array<[Record<string, unknown>, RegExp]>,
  ): Promise<void> {
    const received = sim.s.sim.requestsReceived;
    for (const [msg, re] of cases) {
      const failure = await f.fails(msg);
      assert.match(failure.error.message, /^ValidationError: /);
      assert.match(
        failure.error.message.slice('ValidationError: '.length),
        re,
        `${JSON.stringify(msg)}: ${failure.error.message}`,
      );
      assert.match(failure.error.message, /nothing was sent/);
    }
    assert.equal(sim.s.sim.requestsReceived, received, 'the simulator received no request');
    assert.equal(f.out.msgs.length, 0);
    assert.equal(f.caught.msgs.length, cases.length, 'exactly one error per message');
  }

  describe('maxValidity (config node, default 24 h)', () => {
    const DAY = /at most 24 h \(the config node's maxValidity, 1440 min\) from now/;

    it('refuses validUntil "9999-12-31T23:59:59Z", 8.64e15 - 1 and duration 1e9, naming the field; sends nothing', async () => {
      const loaded = await loadFlow(flow(steer({ validity: 'msg' }), cfg(sim.s.url)));
      await refusedAll(loaded, [
        [
          { payload: { energyStorage: 5, validUntil: '9999-12-31T23:59:59Z' } },
          /^msg\.payload\.validUntil must be at most 24 h \(the config node's maxValidity, 1440 min\) from now; got 9999-12-31T23:59:59\.000Z; nothing was sent$/,
        ],
        [
          { payload: 5, validUntil: 8.64e15 - 1 },
          new RegExp(`^msg\\.validUntil must be ${DAY.source}; got \\+275760-09-12T23:59:59\\.999Z`),
        ],
        [
          { payload: { energyStorage: 5, duration: 1e9 } },
          new RegExp(`^msg\\.payload\\.duration must give a validUntil ${DAY.source}; got 1000000000 min`),
        ],
        [
          { payload: { setting: { value: 5, unit: 'kW' }, validUntil: 8.64e15 - 1 } },
          /^msg\.payload\.validUntil must be at most 24 h/,
        ],
      ]);
      assert.equal(state().energyStorageSetting, null);
      assert.equal(loaded.caught.msgs[0].error.source.id, 'n');
    });

    it("refuses the node's own duration beyond the cap, in a dry run too", async () => {
      const loaded = await loadFlow(flow(steer({ validity: 'duration', duration: 1e9 }), cfg(sim.s.url)));
      await refusedAll(loaded, [[{ payload: 5 }, new RegExp(`^duration must give a validUntil ${DAY.source}`)]]);
      const dryRun = await loadFlow(flow(steer({ validity: 'msg', dryRun: true }), cfg(sim.s.url)));
      await refusedAll(dryRun, [
        [
          { payload: 5, validUntil: '9999-12-31T23:59:59Z' },
          /^msg\.validUntil must be at most 24 h .*got 9999-12-31T23:59:59\.000Z; nothing was sent$/,
        ],
      ]);
    });

    it('a config node with maxValidity 60 refuses a 2 h duration and accepts 1 h', async () => {
      const loaded = await loadFlow(flow(steer({ validity: 'msg' }), cfg(sim.s.url, { maxValidity: 60 })));
      await refusedAll(loaded, [
        [
          { payload: { energyStorage: 5, duration: 120 } },
          /^msg\.payload\.duration must give a validUntil at most 1 h \(the config node's maxValidity, 60 min\) from now; got 120 min/,
        ],
        [{ payload: 5, validUntil: Date.now() + 61 * MINUTE_MS }, /^msg\.validUntil must be at most 1 h/],
      ]);
      const before = Date.now();
      const ok = await loaded.ask({ payload: { energyStorage: 5, duration: 60 } });
      assert.ok(
        ok.request.body.validUntil >= before + 60 * MINUTE_MS &&
          ok.request.body.validUntil <= Date.now() + 60 * MINUTE_MS,
      );
      assert.equal(state().energyStorageSetting!.value, 5);
      assert.equal(steerings().length, 1);
    });
  });

  describe('maxGridPower (grid target)', () => {
    it('refuses a setpoint beyond it (either sign) and a deadband beyond it, from the payload or the node; sends nothing', async () => {
      const loaded = await loadFlow(flow(steer({ mode: 'grid-target', maxGridPower: 100_000 }), cfg(sim.s.url)));
      await refusedAll(loaded, [
        [
          { payload: -1000 },
          /^gridTarget must be within the node's limit maxGridPower = 100000 W \(either sign\); got -1000 kW; nothing was sent$/,
        ],
        [
          { payload: { gridTarget: { value: 0.2, unit: 'MW' } } },
          /^gridTarget must be within .*maxGridPower = 100000 W/,
        ],
        [
          { payload: { gridTarget: 50, deadband: 150 } },
          /^deadband must be within the node's limit maxGridPower = 100000 W; got 150 kW/,
        ],
        [
          { payload: { setpoint: { value: -101, unit: 'kW' }, validUntil: Date.now() + MINUTE_MS } },
          /^gridTarget must be within .*got -101 kW/,
        ],
      ]);
      const withDeadband = await loadFlow(
        flow(steer({ mode: 'grid-target', maxGridPower: '100000', deadbandValue: '200' }), cfg(sim.s.url)),
      );
      await refusedAll(withDeadband, [[{ payload: 20 }, /^deadband must be within .*got 200 kW/]]);
      assert.equal(state().gridTarget, null);
    });

    it('accepts values within it; turned off ("none", as an old flow is migrated) nothing is bounded', async () => {
      const loaded = await loadFlow(
        flow(steer({ mode: 'grid-target', maxGridPower: 100_000, deadbandValue: '100' }), cfg(sim.s.url)),
      );
      const reply = await loaded.ask({ payload: -100 });
      assert.deepEqual(reply.request.body.setpoint, { value: -100, unit: 'kW' });
      assert.equal(state().gridTarget!.value, -100);
      const unbounded = await loadFlow(flow(steer({ mode: 'grid-target', maxGridPower: 'none' }), cfg(sim.s.url)));
      assert.equal((await unbounded.ask({ payload: -1000 })).request.body.setpoint.value, -1000);
    });
  });

  describe('allowMaximizeGridImport', () => {
    const FORBIDS =
      /is true, but this node forbids maximize grid import \(allowMaximizeGridImport is off\); nothing was sent$/;

    it('off: maximizeGridImport true from the node setting, msg, payload or an API body is refused; sends nothing', async () => {
      const loaded = await loadFlow(
        flow(steer({ mode: 'combined', maximizeGridImport: 'true', allowMaximizeGridImport: false }), cfg(sim.s.url)),
      );
      await refusedAll(loaded, [[{ payload: 10 }, new RegExp(`^maximizeGridImport ${FORBIDS.source}`)]]);
      const fromMsg = await loadFlow(
        flow(steer({ mode: 'combined', maximizeGridImport: 'msg', allowMaximizeGridImport: false }), cfg(sim.s.url)),
      );
      await refusedAll(fromMsg, [
        [{ payload: 10, maximizeGridImport: true }, new RegExp(`^msg\\.maximizeGridImport ${FORBIDS.source}`)],
        [
          { payload: { energyStorage: 10, maximizeGridImport: true } },
          new RegExp(`^msg\\.payload\\.maximizeGridImport ${FORBIDS.source}`),
        ],
        [
          {
            payload: {
              energyStorageSetting: { value: 10, unit: 'kW' },
              maximizeGridImport: true,
              validUntil: Date.now() + 5 * MINUTE_MS,
            },
          },
          new RegExp(`^msg\\.payload\\.maximizeGridImport ${FORBIDS.source}`),
        ],
      ]);
      assert.equal(state().maximizeGridImport, null);
    });

    it('off still sends maximizeGridImport false; on by default (old flows behave as before)', async () => {
      const loaded = await loadFlow(
        flow(steer({ mode: 'combined', maximizeGridImport: 'msg', allowMaximizeGridImport: false }), cfg(sim.s.url)),
      );
      assert.equal(
        (await loaded.ask({ payload: 1, maximizeGridImport: false })).request.body.maximizeGridImport,
        false,
      );
      assert.equal(state().maximizeGridImport!.value, false);
      const allowed = await loadFlow(flow(steer({ mode: 'combined', maximizeGridImport: 'true' }), cfg(sim.s.url)));
      assert.equal((await allowed.ask({ payload: 1 })).request.body.maximizeGridImport, true);
      assert.equal(state().maximizeGridImport!.value, true);
    });
  });

  describe('stop in curtailment mode: stopAction', () => {
    it('lift: stop sends curtailment = pvPeakPower W until the validUntil of the signal in force', async () => {
      const loaded = await loadFlow(
        flow(
          steer({ mode: 'curtailment', validity: 'duration', duration: 30, stopAction: 'lift', pvPeakPower: PEAK }),
          cfg(sim.s.url),
        ),
      );
      const first = await loaded.ask({ payload: 300 });
      assert.equal(state().productionCurtailment!.value, 300);
      const lift = await loaded.ask({ payload: 'stop' });
      assert.deepEqual(lift.request, {
        method: 'POST',
        path: `/sites/${SITE}/steering/curtailment`,
        body: { setting: { value: PEAK, unit: 'W' }, validUntil: first.request.body.validUntil },
      });
      assert.match(lift.payload.requestId, /^req_/);
      const curtailment = state().productionCurtailment!;
      assert.deepEqual(
        [curtailment.value, curtailment.unit, curtailment.validUntil],
        [PEAK, 'W', first.request.body.validUntil],
      );
      assert.equal(steerings().length, 2);
      assert.match(loaded.status.all.at(-1).text, /^sent lift of the curtailment until \d\d:\d\d$/);
      // msg.stop works the same way.
      const viaStop = await loaded.ask({ stop: true });
      assert.equal(viaStop.request.body.setting.value, PEAK);
    });

    it('lift with no signal known: until the end of the quarter hour, capped by maxValidity', async () => {
      const loaded = await loadFlow(
        flow(steer({ mode: 'curtailment', stopAction: 'lift', pvPeakPower: '50000' }), cfg(sim.s.url)),
      );
      const before = Date.now();
      const reply = await loaded.ask({ payload: 'stop' });
      assert.ok([before, Date.now()].map((t) => quarterHourValidUntil(t)).includes(reply.request.body.validUntil));
      assert.deepEqual(reply.request.body.setting, { value: 50_000, unit: 'W' });
      const capped = await loadFlow(
        flow(
          steer({ mode: 'curtailment', stopAction: 'lift', pvPeakPower: 50_000 }),
          cfg(sim.s.url, { maxValidity: 1 }),
        ),
      );
      const t0 = Date.now();
      const cappedLift = await capped.ask({ payload: 'stop' });
      assert.ok(
        cappedLift.request.body.validUntil >= t0 + MINUTE_MS &&
          cappedLift.request.body.validUntil <= Date.now() + MINUTE_MS,
      );
    });

    it('expire (default): stop sends nothing and the last limit stays until its validUntil', async () => {
      const loaded = await loadFlow(flow(steer({ mode: 'curtailment', pvPeakPower: PEAK }), cfg(sim.s.url)));
      await loaded.ask({ payload: 300 });
      const received = sim.s.sim.requestsReceived;
      const reply = await loaded.ask({ payload: 'stop' });
      assert.deepEqual(reply.payload, { stopped: true, renewing: false });
      assert.equal(reply.request, undefined);
      assert.equal(sim.s.sim.requestsReceived, received);
      assert.equal(state().productionCurtailment!.value, 300);
    });

    it('lift without pvPeakPower: stop ends in an error that says to set pvPeakPower; nothing is sent', async () => {
      const loaded = await loadFlow(flow(steer({ mode: 'curtailment', stopAction: 'lift' }), cfg(sim.s.url)));
      await refusedAll(loaded, [
        [
          { payload: 'stop' },
          /^pvPeakPower must be set \(the site's PV peak power in W\) for stop with stopAction "lift"/,
        ],
      ]);
    });

    it('lift in a dry run outputs the request and sends nothing; combined lifts only a curtailment it steers', async () => {
      const loaded = await loadFlow(
        flow(steer({ mode: 'curtailment', stopAction: 'lift', pvPeakPower: PEAK, dryRun: true }), cfg(sim.s.url)),
      );
      const received = sim.s.sim.requestsReceived;
      const dryReply = await loaded.ask({ payload: 'stop' });
      assert.equal(dryReply.dryRun, true);
      assert.deepEqual(dryReply.request.body.setting, { value: PEAK, unit: 'W' });
      assert.equal(sim.s.sim.requestsReceived, received);

      const combined = await loadFlow(
        flow(steer({ mode: 'combined', stopAction: 'lift', pvPeakPower: PEAK }), cfg(sim.s.url)),
      );
      await combined.ask({ payload: 10 });
      const requestsBefore = sim.s.sim.requestsReceived;
      assert.deepEqual(
        (await combined.ask({ payload: 'stop' })).payload,
        { stopped: true, renewing: false },
        'ESS only: no curtailment to lift',
      );
      assert.equal(sim.s.sim.requestsReceived, requestsBefore);
      const sent = await combined.ask({ payload: { curtailment: 200, duration: 20 } });
      const lift = await combined.ask({ payload: 'stop' });
      assert.deepEqual(lift.request.body, {
        setting: { value: PEAK, unit: 'W' },
        validUntil: sent.request.body.validUntil,
      });
      assert.equal(state().productionCurtailment!.value, PEAK);
    });
  });
});
