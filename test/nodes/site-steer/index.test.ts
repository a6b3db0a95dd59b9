import assert from 'node:assert/strict';
import { formatClock, MINUTE_MS, QUARTER_HOUR_MS } from '../../../src/protocol/time';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { cfg, flow, helper, loadFlow, logged, simGet, useRuntime, useSimulator, siteSteer } from '../../helpers/red';

const COM = DEFAULT_SITES[0];
const HOME = DEFAULT_SITES[1];
const SITE = COM.siteReference;

const steer = (extra: Record<string, unknown> = {}) => siteSteer(SITE, extra);

describe('nodes: ems-site-steer', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();
  beforeEach(() => sim.s.sim.reset());
  const state = (site = SITE) => sim.s.sim.steeringState(site).components;
  const lastSteer = () => logged(sim.s, /^(POST|DELETE) \/sites\/:ref\/steering/).at(-1)!;

  it('ess: a number is the ESS power in the node\'s unit; outputs payload (requestId), request, site; status "sent ESS −50 kW until HH:MM"', async () => {
    const deployed = await loadFlow(flow(steer(), cfg(sim.s.url)));
    const before = Date.now();
    const reply = await deployed.ask({ payload: -50, foo: 'kept' });
    const validUntil = reply.request.body.validUntil;
    assert.deepEqual(reply.request, {
      method: 'POST',
      path: `/sites/${SITE}/steering/ess`,
      body: { setting: { value: -50, unit: 'kW' }, validUntil },
    });
    assert.equal(validUntil % QUARTER_HOUR_MS, 0);
    assert.ok(validUntil - before > MINUTE_MS - 1000 && validUntil - before <= QUARTER_HOUR_MS + MINUTE_MS);
    assert.match(reply.payload.requestId, /^req_[0-9a-f]{16}$/);
    assert.deepEqual(reply.payload.setting, { value: -50, unit: 'kW' });
    assert.equal(reply.site, SITE);
    assert.equal(reply.foo, 'kept');
    assert.equal(Object.hasOwn(reply, 'merged'), false, 'msg.merged is set only when the queue merged the message');
    assert.equal(lastSteer().requestId, reply.payload.requestId);
    assert.deepEqual(lastSteer().body, reply.request.body);
    assert.equal(deployed.status.all.at(-1).text, `sent ESS −50 kW until ${formatClock(validUntil)}`);
    assert.equal(deployed.status.all.at(-1).fill, 'green');
    const steering = state();
    assert.equal(steering.energyStorageSetting!.value, -50);
    assert.equal(steering.productionCurtailment, null);
  });

  it('msg.merged from an upstream node is not passed on: it did not describe this request', async () => {
    const deployed = await loadFlow(flow(steer(), cfg(sim.s.url)));
    const reply = await deployed.ask({ payload: -20, merged: true });
    assert.equal(reply.request.body.setting.value, -20);
    assert.equal(Object.hasOwn(reply, 'merged'), false);
  });

  it('curtailment: a number is the production limit (here in %)', async () => {
    const deployed = await loadFlow(flow(steer({ mode: 'curtailment', curtailmentUnit: '%' }), cfg(sim.s.url)));
    const reply = await deployed.ask({ payload: 40 });
    assert.equal(reply.request.path, `/sites/${SITE}/steering/curtailment`);
    assert.deepEqual(reply.request.body.setting, { value: 40, unit: '%' });
    assert.deepEqual(
      { value: state().productionCurtailment!.value, unit: state().productionCurtailment!.unit },
      { value: 40, unit: '%' },
    );
    assert.match(deployed.status.all.at(-1).text, /^sent curtailment 40 % until \d\d:\d\d$/);
  });

  it("combined: a number is the ESS power; the node's curtailment and maximizeGridImport join it in one request", async () => {
    const deployed = await loadFlow(
      flow(steer({ mode: 'combined', curtailmentValue: '200', maximizeGridImport: 'true' }), cfg(sim.s.url)),
    );
    const reply = await deployed.ask({ payload: 75 });
    assert.equal(reply.request.path, `/sites/${SITE}/steering`);
    assert.deepEqual(reply.request.body, {
      energyStorageSetting: { value: 75, unit: 'kW' },
      productionCurtailment: { value: 200, unit: 'kW' },
      maximizeGridImport: true,
      validUntil: reply.request.body.validUntil,
    });
    const steering = state();
    assert.equal(steering.energyStorageSetting!.value, 75);
    assert.equal(steering.productionCurtailment!.value, 200);
    assert.equal(steering.maximizeGridImport!.value, true);
  });

  it('combined: maximizeGridImport unchanged is left out; "msg" takes msg.maximizeGridImport', async () => {
    const deployed = await loadFlow(flow(steer({ mode: 'combined' }), cfg(sim.s.url)));
    const unchanged = await deployed.ask({ payload: 10 });
    assert.deepEqual(Object.keys(unchanged.request.body), ['energyStorageSetting', 'validUntil']);
    const fromMsg = await loadFlow(flow(steer({ mode: 'combined', maximizeGridImport: 'msg' }), cfg(sim.s.url)));
    const fromMsgReply = await fromMsg.ask({ payload: 10, maximizeGridImport: true });
    assert.equal(fromMsgReply.request.body.maximizeGridImport, true);
  });

  it("grid-target: a number is the setpoint; the node's deadband joins it", async () => {
    const deployed = await loadFlow(flow(steer({ mode: 'grid-target', deadbandValue: '5' }), cfg(sim.s.url)));
    const reply = await deployed.ask({ payload: 20 });
    assert.equal(reply.request.path, `/sites/${SITE}/steering/grid-target`);
    assert.deepEqual(reply.request.body, {
      setpoint: { value: 20, unit: 'kW' },
      deadband: { value: 5, unit: 'kW' },
      validUntil: reply.request.body.validUntil,
    });
    assert.equal(state().gridTarget!.value, 20);
    assert.match(deployed.status.all.at(-1).text, /^sent grid 20 kW until \d\d:\d\d$/);
  });

  it('payload object: energyStorage, curtailment, maximizeGridImport, validFrom, validUntil, duration', async () => {
    const deployed = await loadFlow(flow(steer({ mode: 'combined' }), cfg(sim.s.url)));
    const from = Date.now() + 5 * MINUTE_MS;
    const until = from + 20 * MINUTE_MS;
    const combined = await deployed.ask({
      payload: {
        energyStorage: { value: 0.1, unit: 'MW' },
        curtailment: 300,
        maximizeGridImport: false,
        validFrom: new Date(from).toISOString(),
        validUntil: until,
      },
    });
    assert.deepEqual(combined.request.body, {
      energyStorageSetting: { value: 0.1, unit: 'MW' },
      productionCurtailment: { value: 300, unit: 'kW' },
      maximizeGridImport: false,
      validFrom: from,
      validUntil: until,
    });
    assert.equal(state().energyStorageSetting, null, 'validFrom lies ahead: nothing applies yet');
    const before = Date.now();
    const curtailed = await deployed.ask({ payload: { curtailment: { value: 50, unit: '%' }, duration: 30 } });
    assert.deepEqual(Object.keys(curtailed.request.body), ['productionCurtailment', 'validUntil']);
    assert.ok(
      curtailed.request.body.validUntil >= before + 30 * MINUTE_MS &&
        curtailed.request.body.validUntil <= Date.now() + 30 * MINUTE_MS,
    );

    const gridFlow = await loadFlow(flow(steer({ mode: 'grid-target' }), cfg(sim.s.url)));
    const gridTarget = await gridFlow.ask({ payload: { gridTarget: { value: -3, unit: 'kW' }, deadband: 1 } });
    assert.deepEqual(gridTarget.request.body.setpoint, { value: -3, unit: 'kW' });
    assert.deepEqual(gridTarget.request.body.deadband, { value: 1, unit: 'kW' });
    assert.equal(
      gridFlow.status.all.at(-1).text,
      `sent grid −3 kW until ${formatClock(gridTarget.request.body.validUntil)}`,
    );
  });

  it("payload in the API's own shape is sent as it is (combined and ess)", async () => {
    const until = Date.now() + 10 * MINUTE_MS;
    const deployed = await loadFlow(flow(steer({ mode: 'combined' }), cfg(sim.s.url)));
    const body = {
      energyStorageSetting: { value: 30, unit: 'kW' },
      productionCurtailment: { value: 100, unit: 'kW' },
      maximizeGridImport: true,
      validUntil: until,
    };
    const combined = await deployed.ask({ payload: body });
    assert.deepEqual(combined.request.body, body);
    assert.deepEqual(lastSteer().body, body);
    const essFlow = await loadFlow(flow(steer({ mode: 'ess' }), cfg(sim.s.url)));
    const ess = await essFlow.ask({ payload: { setting: { value: -20, unit: 'kW' }, validUntil: until } });
    assert.deepEqual(ess.request, {
      method: 'POST',
      path: `/sites/${SITE}/steering/ess`,
      body: { setting: { value: -20, unit: 'kW' }, validUntil: until },
    });
  });

  it('msg.site overrides the site; the site also comes from a TypedInput', async () => {
    const deployed = await loadFlow(flow(steer(), cfg(sim.s.url)));
    const reply = await deployed.ask({ payload: 3, site: HOME.siteReference });
    assert.equal(reply.site, HOME.siteReference);
    assert.equal(reply.request.path, `/sites/${HOME.siteReference}/steering/ess`);
    assert.equal(state(HOME.siteReference).energyStorageSetting!.value, 3);
    assert.equal(state(SITE).energyStorageSetting, null);
    const bySite = await loadFlow(flow(steer({ site: 'target', siteType: 'msg' }), cfg(sim.s.url)));
    assert.equal((await bySite.ask({ payload: 4, target: HOME.siteReference })).site, HOME.siteReference);
  });

  it("validity duration: now plus the node's minutes", async () => {
    const deployed = await loadFlow(flow(steer({ validity: 'duration', duration: 7 }), cfg(sim.s.url)));
    const before = Date.now();
    const reply = await deployed.ask({ payload: 1 });
    assert.ok(
      reply.request.body.validUntil >= before + 7 * MINUTE_MS &&
        reply.request.body.validUntil <= Date.now() + 7 * MINUTE_MS,
    );
  });

  it('validity msg: msg.validUntil, msg.payload.validUntil or msg.payload.duration; msg.validFrom', async () => {
    const deployed = await loadFlow(flow(steer({ validity: 'msg' }), cfg(sim.s.url)));
    const until = Date.now() + 9 * MINUTE_MS;
    assert.equal((await deployed.ask({ payload: 1, validUntil: new Date(until) })).request.body.validUntil, until);
    assert.equal(
      (await deployed.ask({ payload: { energyStorage: 2, validUntil: until + 1000 } })).request.body.validUntil,
      until + 1000,
    );
    const before = Date.now();
    const validUntil = (await deployed.ask({ payload: { energyStorage: 3, duration: 2 } })).request.body.validUntil;
    assert.ok(validUntil >= before + 2 * MINUTE_MS && validUntil <= Date.now() + 2 * MINUTE_MS);
    const from = Date.now() + MINUTE_MS;
    const ahead = await deployed.ask({ payload: 4, validFrom: from, validUntil: from + MINUTE_MS });
    assert.deepEqual(ahead.request.body, {
      setting: { value: 4, unit: 'kW' },
      validFrom: from,
      validUntil: from + MINUTE_MS,
    });
  });

  it('worked example of spec section 3: combined, then ESS-only 300 kW with the same validUntil', async () => {
    const validUntil = Date.now() + 10 * MINUTE_MS;
    const deployed = await loadFlow(
      flow(
        steer({ mode: 'combined' }),
        cfg(sim.s.url),
        steer({ id: 'essNode', server: 'cfg', mode: 'ess', validity: 'msg', wires: [['out']] }),
      ),
    );
    await deployed.ask({ payload: { energyStorage: 100, curtailment: 300, maximizeGridImport: false, validUntil } });
    const ess = helper.getNode('essNode');
    const nextOut = deployed.out.next();
    ess.receive({ payload: 300, validUntil });
    const reply = await nextOut;
    assert.deepEqual(reply.request, {
      method: 'POST',
      path: `/sites/${SITE}/steering/ess`,
      body: { setting: { value: 300, unit: 'kW' }, validUntil },
    });
    const got = await simGet(sim.s, `/sites/${SITE}/steering`);
    assert.equal(got.siteReference, SITE);
    const live = got.components;
    assert.deepEqual(
      [live.energyStorageSetting.value, live.energyStorageSetting.unit, live.energyStorageSetting.validUntil],
      [300, 'kW', validUntil],
    );
    assert.deepEqual(
      [live.productionCurtailment.value, live.productionCurtailment.unit, live.productionCurtailment.validUntil],
      [300, 'kW', validUntil],
    );
    assert.deepEqual([live.maximizeGridImport.value, live.maximizeGridImport.validUntil], [false, validUntil]);
    assert.equal(live.gridTarget, null);
  });

  it('dryRun sends nothing and outputs what would be sent in msg.request', async () => {
    const deployed = await loadFlow(
      flow(steer({ mode: 'combined', dryRun: true, curtailmentValue: '10' }), cfg(sim.s.url)),
    );
    const received = sim.s.sim.requestsReceived;
    const reply = await deployed.ask({ payload: -5 });
    assert.equal(sim.s.sim.requestsReceived, received);
    assert.equal(reply.dryRun, true);
    assert.deepEqual(reply.request, {
      method: 'POST',
      path: `/sites/${SITE}/steering`,
      body: {
        energyStorageSetting: { value: -5, unit: 'kW' },
        productionCurtailment: { value: 10, unit: 'kW' },
        validUntil: reply.request.body.validUntil,
      },
    });
    assert.deepEqual(reply.payload, reply.request.body);
    assert.match(deployed.status.all.at(-1).text, /^dry run: ESS −5 kW, curtailment 10 kW$/);
    const gridFlow = await loadFlow(flow(steer({ mode: 'grid-target', dryRun: true }), cfg(sim.s.url)));
    const stop = await gridFlow.ask({ payload: 'stop' });
    assert.deepEqual(stop.request, { method: 'DELETE', path: `/sites/${SITE}/steering/grid-target` });
    assert.equal(sim.s.sim.requestsReceived, received, 'a dry-run stop sends no DELETE either');
  });

  it('safety limits: maxEssPower and maxCurtailment refuse, send nothing, and give a Catch-able error naming the limit', async () => {
    const deployed = await loadFlow(
      flow(steer({ mode: 'combined', maxEssPower: 100_000, maxCurtailment: 250_000 }), cfg(sim.s.url)),
    );
    const received = sim.s.sim.requestsReceived;
    const essRefused = await deployed.fails({ payload: -150 });
    assert.match(essRefused.error.message, /maxEssPower = 100000 W/);
    assert.match(essRefused.error.message, /energyStorage/);
    const curtailRefused = await deployed.fails({ payload: { curtailment: { value: 0.3, unit: 'MW' } } });
    assert.match(curtailRefused.error.message, /maxCurtailment = 250000 W/);
    assert.equal(sim.s.sim.requestsReceived, received);
    assert.equal(state().energyStorageSetting, null);
    const ok = await deployed.ask({ payload: { energyStorage: 100, curtailment: 250 } });
    assert.equal(ok.request.body.energyStorageSetting.value, 100);
    assert.deepEqual([deployed.out.msgs.length, deployed.caught.msgs.length], [1, 2]);
  });

  it('grid-target: stop (payload "stop" or msg.stop) cancels with a DELETE', async () => {
    const deployed = await loadFlow(flow(steer({ mode: 'grid-target' }), cfg(sim.s.url)));
    await deployed.ask({ payload: 12 });
    assert.equal(state().gridTarget!.value, 12);
    const reply = await deployed.ask({ payload: 'stop' });
    assert.deepEqual(reply.request, { method: 'DELETE', path: `/sites/${SITE}/steering/grid-target` });
    assert.equal(reply.payload.cancelled, true);
    assert.match(reply.payload.requestId, /^req_/);
    assert.equal(lastSteer().method, 'DELETE');
    assert.equal(state().gridTarget, null);
    assert.equal(deployed.status.all.at(-1).text, 'sent cancel of the grid target');
    await deployed.ask({ payload: 8 });
    const stopped = await deployed.ask({ stop: true });
    assert.equal(stopped.request.method, 'DELETE');
    assert.equal(state().gridTarget, null);
  });

  it('renew: resends before expiry so the signal outlives its first validUntil; stop ends renewing and the signal expires', async function () {
    this.timeout(20_000);
    // 0.05 min = 3 s validity; the renewal goes out 2 s before expiry.
    const deployed = await loadFlow(flow(steer({ validity: 'duration', duration: 0.05, renew: true }), cfg(sim.s.url)));
    const reply = await deployed.ask({ payload: -7 });
    const firstUntil = reply.request.body.validUntil;
    const route = 'POST /sites/:ref/steering/ess';
    // Await renewals until one went out after the first signal would have expired.
    while (!logged(sim.s, route).some((e) => e.time > firstUntil)) {
      await deployed.status.wait((s) => /\(renewed\)$/.test(s.text ?? ''), 5_000, 'a renewal');
    }
    const sent = logged(sim.s, route);
    assert.ok(sent.length >= 3);
    for (const e of sent) assert.deepEqual((e.body as { setting: unknown }).setting, { value: -7, unit: 'kW' });
    const untils = sent.map((e) => (e.body as { validUntil: number }).validUntil);
    untils.slice(1).forEach((u, i) => assert.ok(u > untils[i], 'each renewal extends the signal'));
    const steering = state();
    assert.equal(steering.energyStorageSetting!.value, -7, 'still in force after the first validUntil');
    assert.ok(Date.now() > firstUntil);
    assert.match(deployed.status.all.at(-1).text, /^sent ESS −7 kW until \d\d:\d\d \(renewed\)$/);

    // Sent right after a renewal completed: the next one is ~1 s away, none is in flight.
    const stop = await deployed.ask({ payload: 'stop' });
    assert.deepEqual(stop.payload, { stopped: true, renewing: false });
    const count = logged(sim.s, route).length;
    const lastUntil = Math.max(...logged(sim.s, route).map((e) => (e.body as { validUntil: number }).validUntil));
    // Past the last signal's validUntil no renewal can start any more: wait for that instant.
    await new Promise((r) => setTimeout(r, Math.max(0, lastUntil - Date.now()) + 50));
    assert.equal(logged(sim.s, route).length, count, 'no renewal after stop');
    assert.equal(state().energyStorageSetting, null, 'the signal expired: the site fell back');
  });
});
