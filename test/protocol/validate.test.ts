import assert from 'node:assert/strict';
import {
  validateActiveSteering,
  validateEssRequest,
  validateTimeSeriesRequest,
  validateProperties,
  validateReference,
  ValidationError,
  MAX_PROPERTIES,
  validateProperty,
  validateReadRequest,
} from '../../src/protocol';

const DOTS = ['.', '..', '.x', ' .. ', '...'];

const refused = (field: string) => (e: unknown) =>
  e instanceof ValidationError &&
  e.field === field &&
  /must be a reference .*starting with a letter or digit/.test(e.message);

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

/**
 * A reference becomes a path segment: "." and ".." would be resolved by the URL parser, so a
 * read of device ".." would reach /measurement instead of /devices/<ref>/measurement. Such
 * references, and ".x" (no reference of the service starts with a dot), are refused by the
 * validator, and every call of the client and of the read coalescer that takes a reference
 * refuses them before anything is sent: the counting server below sees no request at all.
 */
describe('references: no dot segment reaches a path', () => {
  describe('the validator', () => {
    for (const ref of DOTS) {
      it(`refuses ${JSON.stringify(ref)} as a device or site reference`, () => {
        assert.throws(() => validateReference(ref, 'deviceReference'), refused('deviceReference'));
        assert.throws(() => validateReadRequest('single', ref, 'soc'), refused('deviceReference'));
        assert.throws(
          () => validateProperty(ref, 'property'),
          (e: unknown) => e instanceof ValidationError && e.field === 'property',
        );
      });
    }
    it('keeps dots inside a reference (one segment, never resolved): "dvc_a.b", "a..b", "x."', () => {
      for (const ref of ['dvc_a.b', 'a..b', 'x.']) assert.equal(validateReference(ref, 'd'), ref);
    });
  });
});
