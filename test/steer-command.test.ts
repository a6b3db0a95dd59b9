import assert from 'node:assert/strict';
import { buildCommand, settingsOf } from '../src/nodes/steer-command';
import { describeCommand, renewLead } from '../src/nodes/renewal';
import { ValidationError } from '../src/api';

const now = Date.UTC(2026, 10, 22, 14, 7);
const S = (c: Record<string, unknown> = {}) => settingsOf({ mode: 'ess', essUnit: 'kW', validity: 'quarter-hour', ...c });

describe('steer command building', () => {
  it('takes a number as the mode\'s main value in the node\'s unit, with the spec sign', () => {
    const cmd = buildCommand(S(), 'ste_1', undefined, { ess: -50 }, now);
    assert.deepEqual(cmd.energyStorageSetting, { value: -50, unit: 'kW' });
    assert.equal(cmd.validUntil, Date.UTC(2026, 10, 22, 14, 15));
    assert.equal(describeCommand(cmd, true).startsWith('ESS −50 kW until'), true);
  });

  it('leaves out every component nobody set (partial update)', () => {
    const cmd = buildCommand(S({ mode: 'combined' }), 'ste_1', { curtailment: 300 }, {}, now);
    assert.deepEqual(cmd.productionCurtailment, { value: 300, unit: 'kW' });
    assert.equal(cmd.energyStorageSetting, undefined);
    assert.equal(cmd.maximizeGridImport, undefined);
  });

  it('takes the node\'s maximizeGridImport setting, or the message\'s', () => {
    assert.equal(buildCommand(S({ mode: 'combined', maximizeGridImport: 'true' }), 's', undefined, {}, now).maximizeGridImport, true);
    assert.equal(buildCommand(S({ mode: 'combined', maximizeGridImport: 'msg' }), 's', undefined, { msgMaximizeGridImport: false }, now).maximizeGridImport, false);
    assert.throws(() => buildCommand(S({ mode: 'combined', maximizeGridImport: 'msg' }), 's', undefined, { msgMaximizeGridImport: 'yes' }, now), /maximizeGridImport must be true or false/);
  });

  it('accepts objects with units, and a body in the API\'s own shape', () => {
    const a = buildCommand(S({ mode: 'combined' }), 's', { energyStorage: { value: 0.1, unit: 'MW' }, curtailment: { value: 40, unit: '%' }, duration: 30 }, {}, now);
    assert.deepEqual(a.energyStorageSetting, { value: 0.1, unit: 'MW' });
    assert.deepEqual(a.productionCurtailment, { value: 40, unit: '%' });
    assert.equal(a.validUntil, now + 30 * 60_000);
    const b = buildCommand(S({ mode: 'combined' }), 's', { energyStorageSetting: { value: 100, unit: 'kW' }, maximizeGridImport: false, validUntil: now + 60_000 }, {}, now);
    assert.deepEqual(b.energyStorageSetting, { value: 100, unit: 'kW' });
    assert.equal(b.maximizeGridImport, false);
    assert.equal(b.validUntil, now + 60_000);
  });

  it('refuses values beyond the safety limits, naming the limit', () => {
    assert.throws(() => buildCommand(S({ maxEssPower: 100_000 }), 's', undefined, { ess: 101 }, now), /energyStorage must be within the node's limit maxEssPower = 100000 W \(either sign\); got 101 kW; nothing was sent/);
    assert.doesNotThrow(() => buildCommand(S({ maxEssPower: 100_000, essUnit: 'MW' }), 's', undefined, { ess: -0.1 }, now));
    assert.throws(() => buildCommand(S({ maxEssPower: 100_000, essUnit: 'MW' }), 's', undefined, { ess: -0.11 }, now), /maxEssPower/);
    assert.throws(() => buildCommand(S({ mode: 'curtailment', maxCurtailment: 1000, curtailmentUnit: 'kW' }), 's', 2, {}, now), /maxCurtailment/);
  });

  it('refuses validity problems before anything is sent', () => {
    assert.throws(() => buildCommand(S(), 's', { energyStorage: 1, validUntil: now - 1 }, {}, now), /validUntil must be in the future/);
    assert.throws(() => buildCommand(S(), 's', { energyStorage: 1, validFrom: now + 10, validUntil: now + 5 }, {}, now), /validUntil must be after validFrom/);
    assert.throws(() => buildCommand(S({ validity: 'msg' }), 's', 1, {}, now), /validUntil is required when validity is "msg"/);
  });

  it('names the field for components the mode does not use and for junk', () => {
    assert.throws(() => buildCommand(S(), 's', { curtailment: 5 }, {}, now), (e: unknown) => e instanceof ValidationError && e.field === 'curtailment');
    assert.throws(() => buildCommand(S(), 's', JSON.parse('{"__proto__": {"polluted": 1}, "energyStorage": 1}'), {}, now), /msg.payload.__proto__ is not a steering field/);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.throws(() => buildCommand(S(), 's', { foo: 1 }, {}, now), /msg.payload.foo is not a steering field/);
    assert.throws(() => buildCommand(S(), 's', 'abc', { ess: 'abc' }, now), /energyStorage must be a finite number/);
    assert.throws(() => buildCommand(S(), 's', undefined, {}, now), /msg.payload sets nothing/);
  });

  it('builds grid-target commands with a deadband', () => {
    const c = buildCommand(S({ mode: 'grid-target', gridTargetUnit: 'kW', deadbandUnit: 'W' }), 's', 20, { gridTarget: 20, deadband: 500 }, now);
    assert.deepEqual(c.gridTarget, { setpoint: { value: 20, unit: 'kW' }, deadband: { value: 500, unit: 'W' } });
  });

  it('checks node settings once, naming the property', () => {
    assert.throws(() => settingsOf({ mode: 'turbo' }), /mode must be one of combined, ess, curtailment, grid-target/);
    assert.throws(() => settingsOf({ essUnit: 'GW' }), /essUnit must be one of W, kW, MW/);
    assert.throws(() => settingsOf({ duration: 0, validity: 'duration' }), /duration must be more than 0/);
  });

  it('renews 20 % before expiry, between 2 s and 60 s', () => {
    assert.equal(renewLead(15 * 60_000), 60_000);
    assert.equal(renewLead(60_000), 12_000);
    assert.equal(renewLead(1_000), 2_000);
  });
});
