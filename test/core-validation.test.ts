import assert from 'node:assert/strict';
import {
  normaliseDevices,
  validateActiveSteering,
  validateEssRequest,
  validateTimeSeriesRequest,
  validateProperties,
  validateReference,
  ValidationError,
  MAX_PROPERTIES,
} from '../src/protocol';
import { redact, serviceMessageOf } from '../src/client';

describe('Get Devices normalisation', () => {
  const expected = [
    {
      deviceReference: 'dvc_19RnB3Lyjv2T',
      properties: [
        { name: 'soc', unit: '%' },
        { name: 'totalEnergyConsumed', unit: 'Wh' },
      ],
    },
  ];
  const shapes: Record<string, unknown> = {
    'top-level array of {name, unit}': [
      {
        deviceReference: 'dvc_19RnB3Lyjv2T',
        properties: [
          { name: 'soc', unit: '%' },
          { name: 'totalEnergyConsumed', unit: 'Wh' },
        ],
      },
    ],
    'devices: [] with {property, unit}': {
      devices: [
        {
          deviceReference: 'dvc_19RnB3Lyjv2T',
          properties: [
            { property: 'soc', unit: '%' },
            { property: 'totalEnergyConsumed', unit: 'Wh' },
          ],
        },
      ],
    },
    'data: [] with {key, unit}': {
      data: [
        {
          deviceReference: 'dvc_19RnB3Lyjv2T',
          properties: [
            { key: 'soc', unit: '%' },
            { key: 'totalEnergyConsumed', unit: 'Wh' },
          ],
        },
      ],
    },
    'items: [] with map of units': {
      items: [{ deviceReference: 'dvc_19RnB3Lyjv2T', properties: { soc: '%', totalEnergyConsumed: 'Wh' } }],
    },
    'map of {unit}': [
      { deviceReference: 'dvc_19RnB3Lyjv2T', properties: { soc: { unit: '%' }, totalEnergyConsumed: { unit: 'Wh' } } },
    ],
  };
  for (const [name, body] of Object.entries(shapes)) {
    it(`reads ${name}`, () => assert.deepEqual(normaliseDevices(body), expected));
  }
  it('keeps other fields of a device record', () => {
    const [d] = normaliseDevices([{ deviceReference: 'dvc_1', name: 'Battery', kind: 'battery', properties: [] }]);
    assert.equal(d.name, 'Battery');
    assert.equal(d.kind, 'battery');
  });
  it('refuses a body with no device list', () => {
    assert.throws(() => normaliseDevices({ foo: 1 }), /expected an array/);
  });
});

describe('validation', () => {
  const now = Date.UTC(2026, 10, 22, 10, 0);
  it('keeps omitted components omitted, and never adds maximizeGridImport', () => {
    const body = validateActiveSteering(
      { energyStorageSetting: { value: -50, unit: 'kw' }, validUntil: now + 900_000 },
      now,
    );
    assert.deepEqual(body, { energyStorageSetting: { value: -50, unit: 'kW' }, validUntil: now + 900_000 });
    assert.equal('maximizeGridImport' in body, false);
    assert.equal('productionCurtailment' in body, false);
  });
  it('refuses validUntil not after validFrom, and in the past', () => {
    assert.throws(
      () => validateEssRequest({ setting: { value: 1, unit: 'kW' }, validFrom: now, validUntil: now }),
      (e: unknown) => e instanceof ValidationError && e.field === 'validUntil' && e.kind === 'unprocessable',
    );
    assert.throws(
      () => validateEssRequest({ setting: { value: 1, unit: 'kW' }, validUntil: now - 1 }, now),
      /validUntil must be in the future/,
    );
  });
  it('refuses unknown fields and empty signals, naming them', () => {
    assert.throws(
      () =>
        validateActiveSteering({ energyStorageSetting: { value: 1, unit: 'W' }, validUntil: now + 1, gridLimit: 1 }),
      /gridLimit is not a field/,
    );
    assert.throws(() => validateActiveSteering({ validUntil: now + 1 }), /must set at least one of/);
    assert.throws(
      () => validateActiveSteering({ maximizeGridImport: 'yes', validUntil: now + 1 }),
      /maximizeGridImport must be true or false/,
    );
  });
  it('enforces one property and 30 days per time-series request', () => {
    const ok = validateTimeSeriesRequest({
      property: 'soc',
      range: { type: 'absolute', start: '2026-01-01T00:00:00Z', end: '2026-01-31T00:00:00Z' },
      resolution: { value: 1, unit: 'h' },
    });
    assert.equal(ok.range.end, '2026-01-31T00:00:00Z');
    assert.throws(
      () =>
        validateTimeSeriesRequest({
          property: 'soc',
          range: { type: 'absolute', start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z' },
          resolution: { value: 1, unit: 'h' },
        }),
      (e: unknown) => e instanceof ValidationError && e.field === 'range' && e.kind === 'unprocessable',
    );
    assert.throws(
      () =>
        validateTimeSeriesRequest({
          property: 'soc,power',
          range: { type: 'absolute', start: 0, end: 1000 },
          resolution: { value: 1, unit: 'h' },
        }),
      /exactly one property/,
    );
  });
  it('validates references and property lists', () => {
    assert.equal(validateReference(' dvc_19RnB3Lyjv2T ', 'd'), 'dvc_19RnB3Lyjv2T');
    assert.throws(() => validateReference('../etc', 'deviceReference'), /deviceReference must be a reference/);
    assert.deepEqual(validateProperties('soc, totalEnergyConsumed,soc', 'p'), ['soc', 'totalEnergyConsumed']);
    assert.throws(() => validateProperties('', 'properties'), /at least one property/);
  });
  it(`caps property lists at ${MAX_PROPERTIES} names, naming the field and the limit`, () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `p${i}`);
    assert.equal(validateProperties(names(100), 'properties').length, 100);
    assert.equal(
      validateProperties([...names(100), ...names(100)], 'properties').length,
      100,
      'duplicates do not count',
    );
    const refused = (n: string) => (e: unknown) =>
      e instanceof ValidationError &&
      e.field === 'msg.properties' &&
      e.message === `msg.properties must name at most 100 properties per request; got ${n}`;
    assert.throws(() => validateProperties(names(101), 'msg.properties'), refused('101'));
    assert.throws(() => validateProperties(names(101).join(','), 'msg.properties'), refused('101'));
    const million = names(1_000_000); // the 10^6 names (a 7 MB URL before the cap)
    assert.throws(() => validateProperties(million, 'msg.properties'), refused('1000000'));
    assert.throws(() => validateProperties(million.join(','), 'msg.properties'), refused('more than 1000'));
  });
});

describe('errors', () => {
  it('reads the service message from the usual fields', () => {
    assert.equal(serviceMessageOf({ message: 'a' }), 'a');
    assert.equal(serviceMessageOf({ error: 'b' }), 'b');
    assert.equal(serviceMessageOf({ error: { message: 'c' } }), 'c');
    assert.equal(serviceMessageOf({ detail: 'd' }), 'd');
    assert.equal(serviceMessageOf({ title: 'e' }), 'e');
  });
  it('redacts every secret', () => {
    assert.equal(redact('key=s3cret and s3cret', ['s3cret', undefined]), 'key=*** and ***');
  });
  it('redacts URL-encoded, form-encoded and base64 forms of a secret', () => {
    const secret = 'a b/c+d=e&f~!';
    const forms = [
      encodeURIComponent(secret),
      new URLSearchParams({ s: secret }).toString().slice(2),
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('base64url'),
    ];
    for (const f of forms) assert.equal(redact(`id ${f}.`, [secret]), 'id ***.', f);
  });
  it('relays an HTML page as its title or a short single line, never the page', () => {
    const page = '<!DOCTYPE html><html><head><title>502 Bad &amp; Gateway</title></head><body><h1>x</h1></body></html>';
    assert.equal(serviceMessageOf(page), '502 Bad & Gateway');
    const untitled = `<html><body><h1>Down</h1>\n<p>${'for maintenance '.repeat(20)}</p></body></html>`;
    const message = serviceMessageOf(untitled) ?? '';
    assert.ok(
      message.startsWith('Down for maintenance') &&
        message.length <= 120 &&
        !message.includes('<') &&
        !message.includes('\n'),
      message,
    );
    assert.equal(serviceMessageOf(`  plain\ntext ${'x'.repeat(500)}`)?.length, 120);
    assert.equal(serviceMessageOf({ message: `a\nb ${'y'.repeat(1000)}` })?.length, 200);
  });
});
