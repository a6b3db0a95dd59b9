import assert from 'node:assert/strict';
import axios from 'axios';
import { ValidationError, MINUTE_MS } from '../../src/protocol';
import { EmsClient } from '../../src/client';
import { DEFAULT_SITES, type StartedSimulator } from '../../src/simulator';
import { clientFor, useSimulator, useSimulatorAndClient } from '../helpers/sim';
import {
  STEERING_ENDPOINTS,
  STEERING_ENDPOINT_NAMES,
  steeringPath,
  steeringRequest,
  type SteeringEndpoint,
} from '../../src/protocol/endpoints';

const [COM, HOME] = DEFAULT_SITES;

const SITE = DEFAULT_SITES[0].siteReference;
const until = (min = 10) => Date.now() + min * MINUTE_MS;

describe('client: steering against the simulator', () => {
  const sim = useSimulator({}, { each: true });
  let client: EmsClient;
  beforeEach(() => {
    client = clientFor(sim);
  });
  afterEach(() => {
    client.close();
  });

  it('reproduces the worked example of spec section 3', async () => {
    const validUntil = Date.now() + 15 * 60_000;
    const r1 = await client.steer(COM.siteReference, {
      energyStorageSetting: { value: 100, unit: 'kW' },
      productionCurtailment: { value: 300, unit: 'kW' },
      maximizeGridImport: false,
      validUntil,
    });
    assert.match(r1.requestId, /^req_/);
    await client.steerEss(COM.siteReference, { setting: { value: 300, unit: 'kW' }, validUntil });
    const st = (await axios.get(`${sim.url}/sites/${COM.siteReference}/steering`)).data;
    assert.equal(st.components.energyStorageSetting.value, 300);
    assert.equal(st.components.energyStorageSetting.unit, 'kW');
    assert.equal(st.components.productionCurtailment.value, 300);
    assert.equal(st.components.productionCurtailment.validUntil, validUntil);
    assert.equal(st.components.energyStorageSetting.validUntil, validUntil);
  });

  it('sends only the components the caller set (partial update)', async () => {
    await client.steer(COM.siteReference, {
      productionCurtailment: { value: 50, unit: '%' },
      validUntil: Date.now() + 60_000,
    });
    const body = sim.sim.requestLog.at(-1)!.body as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['productionCurtailment', 'validUntil']);
  });

  it('echoes curtailment-only and grid-target requests, and cancels a grid target', async () => {
    const validUntil = Date.now() + 60_000;
    const cu = await client.steerCurtailment(HOME.siteReference, { setting: { value: 4, unit: 'kW' }, validUntil });
    assert.deepEqual(cu.setting, { value: 4, unit: 'kW' });
    const gt = await client.steerGridTarget(HOME.siteReference, {
      setpoint: { value: 0, unit: 'W' },
      deadband: { value: 200, unit: 'W' },
      validUntil,
    });
    assert.deepEqual(gt.deadband, { value: 200, unit: 'W' });
    assert.ok(sim.sim.steeringState(HOME.siteReference).components.gridTarget);
    const del = await client.cancelGridTarget(HOME.siteReference);
    assert.equal(del.cancelled, true);
    assert.equal(sim.sim.steeringState(HOME.siteReference).components.gridTarget, null);
  });
});

/**
 * Steering one way: a command becomes one typed request, built once by the
 * protocol's endpoint table; the client sends exactly that request; msg.request is that
 * request. For every steering mode, msg.request (method, path, body) deep-equals what the
 * simulator received (its request log, found by the answer's requestId). Unit tests cover the
 * endpoint table, the typed request builder, the simulator's routes built from the table and
 * the client's trusted path (sends as given, validates nothing again, never after validUntil).
 */
describe('steering one way: the client sends the typed request as it is', () => {
  let simulator: StartedSimulator;
  let emsClient: EmsClient;
  useSimulatorAndClient({ retries: 0 }, (sim, client) => {
    simulator = sim;
    emsClient = client;
  });
  const last = () => simulator.sim.requestLog.at(-1)!;

  it('sendSteering sends method, path and body unchanged (no second validation); the public method validates', async () => {
    const validUntil = until();
    // "kw" is what a validator would normalise: sent as given proves nothing validated it again.
    const raw = { setting: { value: 1, unit: 'kw' }, validUntil } as never;
    const response = await emsClient.sendSteering(steeringRequest('ess', SITE, raw));
    assert.deepStrictEqual(last().body, { setting: { value: 1, unit: 'kw' }, validUntil });
    assert.equal(last().path, `/sites/${SITE}/steering/ess`);
    assert.match(response.requestId, /^req_/);
    await emsClient.steerEss(SITE, raw);
    assert.deepStrictEqual(
      last().body,
      { setting: { value: 1, unit: 'kW' }, validUntil },
      'the public method sends the validated body',
    );
    const requestsBefore = simulator.sim.requestsReceived;
    await assert.rejects(
      emsClient.steerEss(SITE, { setting: { value: 1, unit: 'mW' }, validUntil } as never),
      (e: unknown) => e instanceof ValidationError && e.field === 'setting.unit',
    );
    await assert.rejects(
      emsClient.steerEss('bad site', { setting: { value: 1, unit: 'kW' }, validUntil }),
      (e: unknown) => e instanceof ValidationError && e.field === 'siteReference',
    );
    assert.equal(simulator.sim.requestsReceived, requestsBefore, 'nothing sent');
  });

  it('steerEndpoint reaches every endpoint of the table with its validator', async () => {
    const validUntil = until();
    const bodies: Record<SteeringEndpoint, unknown> = {
      combined: { energyStorageSetting: { value: 2, unit: 'kW' }, validUntil },
      ess: { setting: { value: 3, unit: 'kW' }, validUntil },
      curtailment: { setting: { value: 4, unit: 'kW' }, validUntil },
      'grid-target': { setpoint: { value: 5, unit: 'kW' }, validUntil },
      'cancel-grid-target': undefined,
      'grid-limits': { upperLimit: { value: 5, unit: 'kW' }, validUntil },
    };
    for (const e of STEERING_ENDPOINT_NAMES) {
      await emsClient.steerEndpoint(e, SITE, bodies[e]);
      assert.deepStrictEqual(
        { method: last().method, path: last().path, body: last().body },
        { method: STEERING_ENDPOINTS[e].method, path: steeringPath(e, SITE), body: bodies[e] },
      );
    }
    assert.equal(simulator.sim.steeringState(SITE).components.gridTarget, null, 'cancelled last');
  });

  it('never sends a request whose validUntil has passed', async () => {
    const req = steeringRequest('ess', SITE, { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() - 1 });
    await assert.rejects(
      emsClient.sendSteering(req),
      (e: unknown) =>
        e instanceof ValidationError && e.field === 'validUntil' && /must be in the future/.test(e.message),
    );
    assert.equal(simulator.sim.requestsReceived, 0);
  });
});
