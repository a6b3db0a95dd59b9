import assert from 'node:assert/strict';
import {
  normaliseDevices, validateActiveSteering, validateEssRequest, validateTimeSeriesRequest, validateProperties,
  validateReference, ValidationError, redact, serviceMessageOf,
} from '../src/api';

describe('Get Devices normalisation', () => {
  const expected = [{ deviceReference: 'dvc_19RnB3Lyjv2T', properties: [{ name: 'soc', unit: '%' }, { name: 'totalEnergyConsumed', unit: 'Wh' }] }];
  const shapes: Record<string, unknown> = {
    'top-level array of {name, unit}': [{ deviceReference: 'dvc_19RnB3Lyjv2T', properties: [{ name: 'soc', unit: '%' }, { name: 'totalEnergyConsumed', unit: 'Wh' }] }],
    'devices: [] with {property, unit}': { devices: [{ deviceReference: 'dvc_19RnB3Lyjv2T', properties: [{ property: 'soc', unit: '%' }, { property: 'totalEnergyConsumed', unit: 'Wh' }] }] },
    'data: [] with {key, unit}': { data: [{ deviceReference: 'dvc_19RnB3Lyjv2T', properties: [{ key: 'soc', unit: '%' }, { key: 'totalEnergyConsumed', unit: 'Wh' }] }] },
    'items: [] with map of units': { items: [{ deviceReference: 'dvc_19RnB3Lyjv2T', properties: { soc: '%', totalEnergyConsumed: 'Wh' } }] },
    'map of {unit}': [{ deviceReference: 'dvc_19RnB3Lyjv2T', properties: { soc: { unit: '%' }, totalEnergyConsumed: { unit: 'Wh' } } }],
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
    const b = validateActiveSteering({ energyStorageSetting: { value: -50, unit: 'kw' }, validUntil: now + 900_000 }, now);
    assert.deepEqual(b, { energyStorageSetting: { value: -50, unit: 'kW' }, validUntil: now + 900_000 });
    assert.equal('maximizeGridImport' in b, false);
    assert.equal('productionCurtailment' in b, false);
  });
  it('refuses validUntil not after validFrom, and in the past', () => {
    assert.throws(() => validateEssRequest({ setting: { value: 1, unit: 'kW' }, validFrom: now, validUntil: now }), (e: unknown) => e instanceof ValidationError && e.field === 'validUntil' && e.kind === 'unprocessable');
    assert.throws(() => validateEssRequest({ setting: { value: 1, unit: 'kW' }, validUntil: now - 1 }, now), /validUntil must be in the future/);
  });
  it('refuses unknown fields and empty signals, naming them', () => {
    assert.throws(() => validateActiveSteering({ energyStorageSetting: { value: 1, unit: 'W' }, validUntil: now + 1, gridLimit: 1 }), /gridLimit is not a field/);
    assert.throws(() => validateActiveSteering({ validUntil: now + 1 }), /must set at least one of/);
    assert.throws(() => validateActiveSteering({ maximizeGridImport: 'yes', validUntil: now + 1 }), /maximizeGridImport must be true or false/);
  });
  it('enforces one property and 30 days per time-series request', () => {
    const ok = validateTimeSeriesRequest({ property: 'soc', range: { type: 'absolute', start: '2026-01-01T00:00:00Z', end: '2026-01-31T00:00:00Z' }, resolution: { value: 1, unit: 'h' } });
    assert.equal(ok.range.end, '2026-01-31T00:00:00Z');
    assert.throws(() => validateTimeSeriesRequest({ property: 'soc', range: { type: 'absolute', start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z' }, resolution: { value: 1, unit: 'h' } }), (e: unknown) => e instanceof ValidationError && e.field === 'range' && e.kind === 'unprocessable');
    assert.throws(() => validateTimeSeriesRequest({ property: 'soc,power', range: { type: 'absolute', start: 0, end: 1000 }, resolution: { value: 1, unit: 'h' } }), /exactly one property/);
  });
  it('validates references and property lists', () => {
    assert.equal(validateReference(' dvc_19RnB3Lyjv2T ', 'd'), 'dvc_19RnB3Lyjv2T');
    assert.throws(() => validateReference('../etc', 'deviceReference'), /deviceReference must be a reference/);
    assert.deepEqual(validateProperties('soc, totalEnergyConsumed,soc', 'p'), ['soc', 'totalEnergyConsumed']);
    assert.throws(() => validateProperties('', 'properties'), /at least one property/);
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
});
