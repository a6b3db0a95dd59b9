import assert from 'node:assert/strict';
import {
  parsePowerUnit,
  parseCurtailmentValue,
  parsePowerValue,
  toWatts,
  curtailmentToWatts,
  ValidationError,
} from '../../src/protocol';

describe('units', () => {
  it('converts W, kW and MW to watts', () => {
    assert.equal(toWatts({ value: 1.5, unit: 'kW' }), 1500);
    assert.equal(toWatts({ value: 250, unit: 'W' }), 250);
    assert.equal(toWatts({ value: -50, unit: 'kW' }), -50_000);
    assert.equal(toWatts({ value: 2, unit: 'MW' }), 2_000_000);
  });

  it('is lenient about case where unambiguous and refuses the rest naming the field', () => {
    assert.equal(parsePowerUnit('kw', 'u'), 'kW');
    assert.equal(parsePowerUnit('KW', 'u'), 'kW');
    assert.equal(parsePowerUnit('w', 'u'), 'W');
    assert.equal(parsePowerUnit('mw', 'u'), 'MW');
    assert.throws(
      () => parsePowerUnit('mW', 'energyStorageSetting.unit'),
      /energyStorageSetting.unit must be one of W, kW, MW; got "mW"/,
    );
    assert.throws(
      () => parsePowerUnit('GW', 'x.unit'),
      (e: unknown) => e instanceof ValidationError && e.field === 'x.unit',
    );
  });

  it('parses power values from numbers, numeric strings and objects', () => {
    assert.deepEqual(parsePowerValue(-50, 'ess', 'kW'), { value: -50, unit: 'kW' });
    assert.deepEqual(parsePowerValue('12.5', 'ess', 'W'), { value: 12.5, unit: 'W' });
    assert.deepEqual(parsePowerValue({ value: 3, unit: 'mw' }, 'ess'), { value: 3, unit: 'MW' });
    for (const bad of [NaN, Infinity, '12abc', '', null, [], true]) {
      assert.throws(() => parsePowerValue(bad, 'ess', 'kW'), /^ValidationError: ess/);
    }
  });

  it('takes curtailment in % within 0-100 and converts it with the installed power', () => {
    assert.deepEqual(parseCurtailmentValue(60, 'c', '%'), { value: 60, unit: '%' });
    assert.throws(() => parseCurtailmentValue(101, 'c', '%'), /c.value must be within 0-100/);
    assert.throws(() => parseCurtailmentValue(-1, 'c', 'kW'), /c.value must be 0 or more/);
    assert.equal(curtailmentToWatts({ value: 50, unit: '%' }, 10_000), 5_000);
    assert.equal(curtailmentToWatts({ value: 3, unit: 'kW' }), 3_000);
  });
});
