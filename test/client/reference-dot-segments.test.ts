/**
 * A reference becomes a path segment: "." and ".." would be resolved by the URL parser, so a
 * read of device ".." would reach /measurement instead of /devices/<ref>/measurement. Such
 * references, and ".x" (no reference of the service starts with a dot), are refused by the
 * validator, and every call of the client and of the read coalescer that takes a reference
 * refuses them before anything is sent: the counting server below sees no request at all.
 */
import assert from 'node:assert/strict';
import { steeringRequest, ValidationError } from '../../src/protocol';
import { EmsClient } from '../../src/client';
import { ReadCoalescer } from '../../src/runtime';
import { startCounting, type CountingServer } from '../helpers/counting-server';

const DOTS = ['.', '..', '.x', ' .. ', '...'];
const until = () => Date.now() + 600_000;

const refused = (field: string) => (e: unknown) =>
  e instanceof ValidationError &&
  e.field === field &&
  /must be a reference .*starting with a letter or digit/.test(e.message);

describe('references: no dot segment reaches a path', () => {
  describe('the client and the read coalescer: nothing is sent', () => {
    let srv: CountingServer;
    let client: EmsClient;
    before(async () => {
      srv = await startCounting();
      client = new EmsClient({ baseUrl: srv.url, retries: 0 });
    });
    after(async () => {
      client.close();
      await srv.close();
    });

    const day = { property: 'soc', start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 0, 2) };
    const CALLS: Array<[string, 'deviceReference' | 'siteReference', (ref: string) => Promise<unknown>]> = [
      ['getMeasurement', 'deviceReference', (r) => client.getMeasurement(r, 'soc')],
      ['getMeasurementsMap', 'deviceReference', (r) => client.getMeasurementsMap(r, 'soc,power')],
      ['getMeasurementsList', 'deviceReference', (r) => client.getMeasurementsList(r, ['soc', 'power'])],
      ['getTimeSeries', 'deviceReference', (r) => client.getTimeSeries(r, day)],
      ['getTimeSeriesRange', 'deviceReference', (r) => client.getTimeSeriesRange(r, day)],
      [
        'steer',
        'siteReference',
        (r) => client.steer(r, { energyStorageSetting: { value: 1, unit: 'kW' }, validUntil: until() }),
      ],
      [
        'steerEss',
        'siteReference',
        (r) => client.steerEss(r, { setting: { value: 1, unit: 'kW' }, validUntil: until() }),
      ],
      [
        'steerCurtailment',
        'siteReference',
        (r) =>
          client.steerCurtailment(r, { productionCurtailment: { value: 50, unit: '%' }, validUntil: until() } as never),
      ],
      [
        'steerGridTarget',
        'siteReference',
        (r) => client.steerGridTarget(r, { target: { value: 0, unit: 'W' }, validUntil: until() } as never),
      ],
      [
        'steerGridLimits',
        'siteReference',
        (r) => client.steerGridLimits(r, { maxImport: { value: 5, unit: 'kW' }, validUntil: until() } as never),
      ],
      ['cancelGridTarget', 'siteReference', (r) => client.cancelGridTarget(r)],
      ['coalescer measurement', 'deviceReference', (r) => new ReadCoalescer(client, 2).measurement(r, 'soc')],
      ['coalescer map', 'deviceReference', (r) => new ReadCoalescer(client, 2).map(r, 'soc,power')],
      ['coalescer list', 'deviceReference', (r) => new ReadCoalescer(client, 2).list(r, ['power', 'soc'])],
    ];
    for (const [name, field, call] of CALLS) {
      it(`${name} refuses ".", "..", ".x" (${field}) without a request`, async () => {
        for (const ref of DOTS)
          await assert.rejects(
            Promise.resolve().then(() => call(ref)),
            refused(field),
            `${name}(${JSON.stringify(ref)})`,
          );
        assert.deepEqual(
          srv.requests.map((r) => r.url),
          [],
        );
      });
    }

    it('a raw request with a "." or ".." segment (raw or encoded) is refused without a request', async () => {
      for (const path of [
        '/devices/../measurement',
        '/devices/./measurement',
        '/devices/%2e%2e/measurement',
        '/devices/.%2E/measurement',
        '/devices/..;x/measurement',
      ]) {
        await assert.rejects(
          client.raw('GET', path),
          (e: unknown) => e instanceof ValidationError && /a "\." or "\.\." segment|an encoded dot/.test(e.message),
          path,
        );
      }
      assert.deepEqual(
        srv.requests.map((r) => r.url),
        [],
      );
    });

    it('the trusted read and a steering request built from a table refuse "." and ".." too (where the path is built), without a request', async () => {
      for (const ref of ['.', '..']) {
        const dotStep = (field: string) => (e: unknown) =>
          e instanceof ValidationError &&
          e.field === field &&
          /must not be "\.\.?" \(a URL resolves it as a path step\)/.test(e.message);
        await assert.rejects(
          client.read({ shape: 'single', device: ref, properties: ['soc'] } as never),
          dotStep('deviceReference'),
          `read(${ref})`,
        );
        assert.throws(
          () => steeringRequest('ess', ref, { setting: { value: 1, unit: 'kW' }, validUntil: until() } as never),
          dotStep('site'),
          `steeringRequest(${ref})`,
        );
      }
      assert.deepEqual(
        srv.requests.map((r) => r.url),
        [],
      );
    });

    it('the same calls with a valid reference do reach the server (the counting above counts)', async () => {
      await client.getMeasurement('dvc_a', 'soc').catch(() => undefined);
      assert.deepEqual(
        srv.requests.map((r) => r.url),
        ['/devices/dvc_a/measurement?property=soc'],
      );
    });
  });
});
