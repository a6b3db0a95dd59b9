/**
 * Reads one way: a read is validated once, where it enters (the device-read
 * node, which names the msg field, or the client's and coalescer's public methods for code);
 * the coalescer and the client's trusted read path take the typed ReadRequest and send it as
 * given. Shown with inputs the validators refuse: the public methods refuse them and send
 * nothing, the trusted path sends them (URL-encoded) and the simulator answers.
 */
import assert from 'node:assert/strict';
import { ValidationError, validateReadRequest, type ReadRequest } from '../../src/protocol';
import { ApiError, EmsClient } from '../../src/client';
import { ReadCoalescer } from '../../src/runtime';
import { DEFAULT_SITES, startSimulator, type StartedSimulator } from '../../src/simulator';

const BAT = DEFAULT_SITES[0].battery.deviceReference;

describe('reads one way: validated once, trusted after', () => {
  let simulator: StartedSimulator;
  let client: EmsClient;
  before(async () => {
    simulator = await startSimulator({ frozen: true, startTime: Date.UTC(2026, 5, 1, 12) });
    client = new EmsClient({ baseUrl: simulator.url, retries: 0 });
  });
  after(async () => {
    client.close();
    await simulator.close();
  });
  beforeEach(() => simulator.sim.clearLog());
  const paths = () => simulator.sim.requestLog.map((e) => `${e.method} ${e.path} ${e.status}`);

  it('validateReadRequest: the one check for code, naming deviceReference, property or properties', () => {
    assert.deepEqual(validateReadRequest('single', ` ${BAT} `, 'soc'), {
      device: BAT,
      shape: 'single',
      properties: ['soc'],
    });
    assert.deepEqual(validateReadRequest('map', BAT, 'soc, power,soc'), {
      device: BAT,
      shape: 'map',
      properties: ['soc', 'power'],
    });
    assert.throws(
      () => validateReadRequest('list', 'a b', 'soc'),
      (e: unknown) => e instanceof ValidationError && e.field === 'deviceReference',
    );
    assert.throws(
      () => validateReadRequest('single', BAT, 'soc,power'),
      (e: unknown) => e instanceof ValidationError && e.field === 'property',
    );
    assert.throws(
      () => validateReadRequest('map', BAT, ['1soc']),
      (e: unknown) => e instanceof ValidationError && e.field === 'properties[0]',
    );
  });

  it("the client's trusted path sends a typed request as given; the public method refuses the same input and sends nothing", async () => {
    // A property name the validator refuses ("1soc" starts with a digit): the simulator answers 400 for it.
    const bad: ReadRequest<'map'> = { device: BAT, shape: 'map', properties: ['1soc'] };
    await assert.rejects(
      client.getMeasurementsMap(BAT, ['1soc']),
      (e: unknown) => e instanceof ValidationError && e.field === 'properties[0]',
    );
    assert.deepEqual(paths(), [], 'the public method sent nothing');
    await assert.rejects(client.read(bad), (e: unknown) => e instanceof ApiError && e.status === 400);
    assert.deepEqual(
      paths(),
      [`GET /devices/${BAT}/measurements/map?properties=1soc 400`],
      'the trusted path sent it as given',
    );
    // A device reference the validator refuses is still URL-encoded into the path, as any.
    await assert.rejects(
      client.read({ device: 'no such/device', shape: 'single', properties: ['soc'] }),
      (e: unknown) => e instanceof ApiError && e.status === 404,
    );
    assert.equal(paths()[1], 'GET /devices/no%20such%2Fdevice/measurement?property=soc 404');
  });

  it('the trusted path and the public methods send the same request for valid input', async () => {
    for (const shape of ['single', 'map', 'list'] as const) {
      const props = shape === 'single' ? ['soc'] : ['soc', 'totalEnergyConsumed'];
      const trusted = await client.read({ device: BAT, shape, properties: props });
      const pub =
        shape === 'single'
          ? await client.getMeasurement(BAT, 'soc')
          : shape === 'map'
            ? await client.getMeasurementsMap(BAT, props)
            : await client.getMeasurementsList(BAT, props);
      assert.deepEqual(trusted, pub);
    }
    const logged = paths();
    assert.equal(logged.length, 6);
    for (let i = 0; i < 6; i += 2) assert.equal(logged[i], logged[i + 1]);
    assert.deepEqual(
      logged.filter((_, i) => i % 2 === 0),
      [
        `GET /devices/${BAT}/measurement?property=soc 200`,
        `GET /devices/${BAT}/measurements/map?properties=soc,totalEnergyConsumed 200`,
        `GET /devices/${BAT}/measurements?properties=soc,totalEnergyConsumed 200`,
      ],
    );
  });

  it('the coalescer trusts typed reads (lone, shared and merged) and validates only what code hands its public methods', async () => {
    const reads = new ReadCoalescer(client, 5);
    try {
      // Lone: sent as given.
      await assert.rejects(
        reads.read({ device: BAT, shape: 'list', properties: ['1soc'] }),
        (e: unknown) => e instanceof ApiError && e.status === 400,
      );
      assert.deepEqual(paths(), [`GET /devices/${BAT}/measurements?properties=1soc 400`]);
      // Public: refused before anything is queued (thrown at the call, as before).
      assert.throws(
        () => reads.list(BAT, '1soc'),
        (e: unknown) => e instanceof ValidationError && e.field === 'properties[0]',
      );
      assert.throws(
        () => reads.measurement('a b', 'soc'),
        (e: unknown) => e instanceof ValidationError && e.field === 'deviceReference',
      );
      assert.equal(paths().length, 1);
      // Concurrent with a read in flight (the lead, sent at once), merged in one window: one list
      // request with the union; the bad name makes it fail (400), then each kind of read falls
      // back to its own request, sent as given.
      simulator.sim.clearLog();
      const lead = reads.read({ device: BAT, shape: 'single', properties: ['power'] });
      const [ok, bad] = await Promise.allSettled([
        reads.read({ device: BAT, shape: 'single', properties: ['soc'] }),
        reads.read({ device: BAT, shape: 'map', properties: ['1soc'] }),
      ]);
      await lead;
      assert.equal(ok.status, 'fulfilled');
      assert.equal((ok as PromiseFulfilledResult<{ property: string }>).value.property, 'soc');
      assert.equal(bad.status, 'rejected');
      assert.deepEqual(paths().sort(), [
        `GET /devices/${BAT}/measurement?property=power 200`,
        `GET /devices/${BAT}/measurement?property=soc 200`,
        `GET /devices/${BAT}/measurements/map?properties=1soc 400`,
        `GET /devices/${BAT}/measurements?properties=soc,1soc 400`,
      ]);
      // Shared: identical typed reads share one request.
      simulator.sim.clearLog();
      const req: ReadRequest<'map'> = { device: BAT, shape: 'map', properties: ['soc', 'power'] };
      const [a, b, c2] = await Promise.all([reads.read(req), reads.read(req), reads.read(req)]);
      assert.deepEqual(a, b);
      assert.deepEqual(a, c2);
      assert.deepEqual(
        paths(),
        [`GET /devices/${BAT}/measurements/map?properties=soc,power 200`],
        'the first at once, the identical ones join it',
      );
    } finally {
      reads.close();
    }
  });
});
