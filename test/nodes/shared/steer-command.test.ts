import assert from 'node:assert/strict';
import { buildCommand, liftCommand, maxValidityMsOf, settingsOf } from '../../../src/nodes/shared/steer-command';
import { convertPercent } from '../../../src/nodes/shared/steer-percent';
import { describeCommand, renewLead } from '../../../src/nodes/shared/renewal';
import { ValidationError, checkMaxValidity, formatSpan } from '../../../src/protocol';

const now = Date.UTC(2026, 10, 22, 14, 7);
const settingsWith = (c: Record<string, unknown> = {}) =>
  settingsOf({ mode: 'ess', essUnit: 'kW', validity: 'quarter-hour', ...c });

describe('steer command building', () => {
  it("takes a number as the mode's main value in the node's unit, with the spec sign", () => {
    const cmd = buildCommand(settingsWith(), 'ste_1', undefined, { ess: -50 }, now);
    assert.deepEqual(cmd.energyStorageSetting, { value: -50, unit: 'kW' });
    assert.equal(cmd.validUntil, Date.UTC(2026, 10, 22, 14, 15));
    assert.equal(describeCommand(cmd, true).startsWith('ESS −50 kW until'), true);
  });

  it('leaves out every component nobody set (partial update)', () => {
    const cmd = buildCommand(settingsWith({ mode: 'combined' }), 'ste_1', { curtailment: 300 }, {}, now);
    assert.deepEqual(cmd.productionCurtailment, { value: 300, unit: 'kW' });
    assert.equal(cmd.energyStorageSetting, undefined);
    assert.equal(cmd.maximizeGridImport, undefined);
  });

  it("takes the node's maximizeGridImport setting, or the message's", () => {
    assert.equal(
      buildCommand(settingsWith({ mode: 'combined', maximizeGridImport: 'true' }), 's', undefined, {}, now)
        .maximizeGridImport,
      true,
    );
    assert.equal(
      buildCommand(
        settingsWith({ mode: 'combined', maximizeGridImport: 'msg' }),
        's',
        undefined,
        { msgMaximizeGridImport: false },
        now,
      ).maximizeGridImport,
      false,
    );
    assert.throws(
      () =>
        buildCommand(
          settingsWith({ mode: 'combined', maximizeGridImport: 'msg' }),
          's',
          undefined,
          { msgMaximizeGridImport: 'yes' },
          now,
        ),
      /maximizeGridImport must be true or false/,
    );
  });

  it("accepts objects with units, and a body in the API's own shape", () => {
    const withUnits = buildCommand(
      settingsWith({ mode: 'combined' }),
      's',
      { energyStorage: { value: 0.1, unit: 'MW' }, curtailment: { value: 40, unit: '%' }, duration: 30 },
      {},
      now,
    );
    assert.deepEqual(withUnits.energyStorageSetting, { value: 0.1, unit: 'MW' });
    assert.deepEqual(withUnits.productionCurtailment, { value: 40, unit: '%' });
    assert.equal(withUnits.validUntil, now + 30 * 60_000);
    const apiBody = buildCommand(
      settingsWith({ mode: 'combined' }),
      's',
      { energyStorageSetting: { value: 100, unit: 'kW' }, maximizeGridImport: false, validUntil: now + 60_000 },
      {},
      now,
    );
    assert.deepEqual(apiBody.energyStorageSetting, { value: 100, unit: 'kW' });
    assert.equal(apiBody.maximizeGridImport, false);
    assert.equal(apiBody.validUntil, now + 60_000);
  });

  it('refuses values beyond the safety limits, naming the limit', () => {
    assert.throws(
      () => buildCommand(settingsWith({ maxEssPower: 100_000 }), 's', undefined, { ess: 101 }, now),
      /energyStorage must be within the node's limit maxEssPower = 100000 W \(either sign\); got 101 kW; nothing was sent/,
    );
    assert.doesNotThrow(() =>
      buildCommand(settingsWith({ maxEssPower: 100_000, essUnit: 'MW' }), 's', undefined, { ess: -0.1 }, now),
    );
    assert.throws(
      () => buildCommand(settingsWith({ maxEssPower: 100_000, essUnit: 'MW' }), 's', undefined, { ess: -0.11 }, now),
      /maxEssPower/,
    );
    assert.throws(
      () =>
        buildCommand(
          settingsWith({ mode: 'curtailment', maxCurtailment: 1000, curtailmentUnit: 'kW' }),
          's',
          2,
          {},
          now,
        ),
      /maxCurtailment/,
    );
  });

  it('refuses validity problems before anything is sent', () => {
    assert.throws(
      () => buildCommand(settingsWith(), 's', { energyStorage: 1, validUntil: now - 1 }, {}, now),
      /validUntil must be in the future/,
    );
    assert.throws(
      () => buildCommand(settingsWith(), 's', { energyStorage: 1, validFrom: now + 10, validUntil: now + 5 }, {}, now),
      /validUntil must be after validFrom/,
    );
    assert.throws(
      () => buildCommand(settingsWith({ validity: 'msg' }), 's', 1, {}, now),
      /validUntil is required when validity is "msg"/,
    );
  });

  it('names the field for components the mode does not use and for junk', () => {
    assert.throws(
      () => buildCommand(settingsWith(), 's', { curtailment: 5 }, {}, now),
      (e: unknown) => e instanceof ValidationError && e.field === 'curtailment',
    );
    assert.throws(
      () =>
        buildCommand(settingsWith(), 's', JSON.parse('{"__proto__": {"polluted": 1}, "energyStorage": 1}'), {}, now),
      /msg.payload.__proto__ is not a steering field/,
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.throws(
      () => buildCommand(settingsWith(), 's', { foo: 1 }, {}, now),
      /msg.payload.foo is not a steering field/,
    );
    assert.throws(
      () => buildCommand(settingsWith(), 's', 'abc', { ess: 'abc' }, now),
      /energyStorage must be a finite number/,
    );
    assert.throws(() => buildCommand(settingsWith(), 's', undefined, {}, now), /msg.payload sets nothing/);
  });

  it('builds grid-target commands with a deadband', () => {
    const command = buildCommand(
      settingsWith({ mode: 'grid-target', gridTargetUnit: 'kW', deadbandUnit: 'W' }),
      's',
      20,
      { gridTarget: 20, deadband: 500 },
      now,
    );
    assert.deepEqual(command.gridTarget, { setpoint: { value: 20, unit: 'kW' }, deadband: { value: 500, unit: 'W' } });
  });

  it('checks node settings once, naming the property', () => {
    assert.throws(() => settingsOf({ mode: 'turbo' }), /mode must be one of combined, ess, curtailment, grid-target/);
    assert.throws(() => settingsOf({ essUnit: 'GW' }), /essUnit must be one of W, kW, MW/);
    assert.throws(() => settingsOf({ duration: 0, validity: 'duration' }), /duration must be more than 0/);
  });

  it('maxValidity: refuses a validUntil beyond the cap, naming the field it came from and the limit', () => {
    const cap = { maxValidityMs: maxValidityMsOf(undefined) };
    const field = (f: string) => (e: unknown) => e instanceof ValidationError && e.field === f;
    const msgS = settingsWith({ validity: 'msg' });
    assert.throws(
      () => buildCommand(msgS, 's', { energyStorage: 1, validUntil: '9999-12-31T23:59:59Z' }, {}, now, cap),
      /^ValidationError: msg.payload.validUntil must be at most 24 h \(the config node's maxValidity, 1440 min\) from now; got 9999-12-31T23:59:59.000Z; nothing was sent$/,
    );
    assert.throws(() => buildCommand(msgS, 's', 1, { msgValidUntil: 8.64e15 - 1 }, now, cap), field('msg.validUntil'));
    assert.throws(
      () => buildCommand(msgS, 's', { energyStorage: 1, duration: 1e9 }, {}, now, cap),
      /msg.payload.duration must give a validUntil at most 24 h .*; got 1000000000 min/,
    );
    assert.throws(
      () => buildCommand(settingsWith({ validity: 'duration', duration: 1e9 }), 's', 1, {}, now, cap),
      field('duration'),
    );
    assert.throws(
      () =>
        buildCommand(settingsWith({ validity: 'duration', duration: 120 }), 's', 1, {}, now, {
          maxValidityMs: maxValidityMsOf('60'),
        }),
      /duration must give a validUntil at most 1 h \(the config node's maxValidity, 60 min\)/,
    );
    assert.throws(
      () => buildCommand(settingsWith(), 's', 1, {}, now, { maxValidityMs: maxValidityMsOf(5) }),
      field('validity'),
    );
    assert.throws(
      () => buildCommand(settingsWith(), 's', { energyStorage: 1, validFrom: now + 2 * 86_400_000 }, {}, now, cap),
      field('msg.payload.validFrom'),
    );
    assert.equal(
      buildCommand(settingsWith({ validity: 'duration', duration: 60 }), 's', 1, {}, now, {
        maxValidityMs: 60 * 60_000,
      }).validUntil,
      now + 60 * 60_000,
      'exactly the cap is accepted',
    );
    assert.equal(
      buildCommand(msgS, 's', { energyStorage: 1, duration: 1e9 }, {}, now).validUntil,
      now + 6e13,
      'no cap given: none applied (the queue still checks)',
    );
    assert.throws(
      () => maxValidityMsOf('0'),
      /maxValidity \(config node\) must be a whole number of minutes from 1 to 43200/,
    );
    assert.equal(formatSpan(90 * 60_000), '1 h 30 min');
    assert.doesNotThrow(() => checkMaxValidity(now + 10, 10, now));
    assert.throws(() => checkMaxValidity(now + 11, 10, now), field('validUntil'));
  });

  it('maxGridPower bounds |grid setpoint| and the deadband; empty (the site\'s rating, checked once the site list is known) and "none" are no number here; 0 is refused', () => {
    const gridTarget = (c: Record<string, unknown>) =>
      settingsWith({ mode: 'grid-target', gridTargetUnit: 'kW', deadbandUnit: 'kW', ...c });
    assert.throws(
      () => buildCommand(gridTarget({ maxGridPower: 100_000 }), 's', -1000, {}, now),
      /^ValidationError: gridTarget must be within the node's limit maxGridPower = 100000 W \(either sign\); got -1000 kW; nothing was sent$/,
    );
    assert.throws(
      () => buildCommand(gridTarget({ maxGridPower: '100000' }), 's', { gridTarget: 50, deadband: 101 }, {}, now),
      /deadband must be within the node's limit maxGridPower = 100000 W; got 101 kW/,
    );
    assert.deepEqual(
      buildCommand(gridTarget({ maxGridPower: 100_000 }), 's', -100, { deadband: 100 }, now).gridTarget,
      {
        setpoint: { value: -100, unit: 'kW' },
        deadband: { value: 100, unit: 'kW' },
      },
    );
    assert.equal(buildCommand(gridTarget({ maxGridPower: '' }), 's', -1000, {}, now).gridTarget!.setpoint.value, -1000);
    assert.deepEqual(settingsOf({ maxGridPower: '' }).rating, [
      'maxEssPower',
      'maxCurtailment',
      'maxGridPower',
      'maxGridLimit',
    ]);
    assert.equal(
      buildCommand(gridTarget({ maxGridPower: 'none' }), 's', -1000, {}, now).gridTarget!.setpoint.value,
      -1000,
    );
    assert.deepEqual(settingsOf({ maxGridPower: 'none' }).none, ['maxGridPower']);
    assert.throws(
      () => settingsOf({ maxGridPower: -1 }),
      /maxGridPower must be more than 0 W \(empty = the site's rating; "none" = no limit\); got -1/,
    );
    assert.throws(() => settingsOf({ maxGridPower: 0 }), /maxGridPower must be more than 0 W/);
  });

  it('allowMaximizeGridImport off refuses maximizeGridImport: true from the node, the msg, the payload and an API body', () => {
    const combined = (c: Record<string, unknown> = {}) =>
      settingsWith({ mode: 'combined', allowMaximizeGridImport: false, ...c });
    const refused = (f: string) => (e: unknown) =>
      e instanceof ValidationError &&
      e.field === f &&
      /forbids maximize grid import \(allowMaximizeGridImport is off\); nothing was sent/.test(e.message);
    assert.throws(
      () => buildCommand(combined({ maximizeGridImport: 'true' }), 's', 5, {}, now),
      refused('maximizeGridImport'),
    );
    assert.throws(
      () =>
        buildCommand(
          combined({ maximizeGridImport: 'msg', allowMaximizeGridImport: 'false' }),
          's',
          5,
          { msgMaximizeGridImport: true },
          now,
        ),
      refused('msg.maximizeGridImport'),
    );
    assert.throws(
      () => buildCommand(combined(), 's', { energyStorage: 5, maximizeGridImport: true }, {}, now),
      refused('msg.payload.maximizeGridImport'),
    );
    assert.throws(
      () =>
        buildCommand(
          combined(),
          's',
          { energyStorageSetting: { value: 5, unit: 'kW' }, maximizeGridImport: true, validUntil: now + 60_000 },
          {},
          now,
        ),
      refused('msg.payload.maximizeGridImport'),
    );
    assert.equal(
      buildCommand(combined(), 's', { maximizeGridImport: false }, {}, now).maximizeGridImport,
      false,
      'turning it off is allowed',
    );
    assert.equal(
      buildCommand(settingsWith({ mode: 'combined' }), 's', { maximizeGridImport: true }, {}, now).maximizeGridImport,
      true,
      'default: allowed, as before',
    );
    assert.throws(
      () => settingsOf({ allowMaximizeGridImport: 'maybe' }),
      /allowMaximizeGridImport must be true or false/,
    );
  });

  it('liftCommand: the PV peak power until the known validUntil, else the quarter hour, within maxValidity', () => {
    const lifting = (c: Record<string, unknown> = {}) =>
      settingsWith({ mode: 'curtailment', stopAction: 'lift', pvPeakPower: 10_000, ...c });
    assert.deepEqual(liftCommand(lifting(), 's', now + 20 * 60_000, now), {
      site: 's',
      kind: 'curtailment',
      productionCurtailment: { value: 10_000, unit: 'W' },
      validUntil: now + 20 * 60_000,
    });
    assert.equal(liftCommand(lifting(), 's', undefined, now).validUntil, Date.UTC(2026, 10, 22, 14, 15));
    assert.equal(
      liftCommand(lifting(), 's', now - 1, now).validUntil,
      Date.UTC(2026, 10, 22, 14, 15),
      'an expired signal is not known any more',
    );
    assert.equal(liftCommand(lifting(), 's', undefined, now, { maxValidityMs: 60_000 }).validUntil, now + 60_000);
    assert.throws(
      () => liftCommand(lifting({ pvPeakPower: '' }), 's', undefined, now),
      /^ValidationError: pvPeakPower must be set \(the site's PV peak power in W\) for stop with stopAction "lift"/,
    );
    assert.throws(
      () => liftCommand(lifting({ maxCurtailment: 5_000 }), 's', undefined, now),
      /maxCurtailment = 5000 W/,
    );
    assert.throws(() => settingsOf({ stopAction: 'hold' }), /stopAction must be one of expire, lift/);
    assert.equal(settingsOf({}).stopAction, 'expire');
  });

  it('renews 20 % before expiry, between 2 s and 60 s', () => {
    assert.equal(renewLead(15 * 60_000), 60_000);
    assert.equal(renewLead(60_000), 12_000);
    assert.equal(renewLead(1_000), 2_000);
  });
});

describe('steer command: the W a % curtailment becomes', () => {
  const pct = settingsWith({ mode: 'curtailment', curtailmentUnit: '%' });
  /** The node's command for `percent`, converted with the node's pvPeakPower `peak` W. */
  const watts = async (percent: number, peak: number, maxCurtailment = 0) => {
    const cmd = buildCommand(pct, 'ste_1', percent, {}, now);
    assert.deepEqual(
      cmd.productionCurtailment,
      { value: percent, unit: '%' },
      'the node keeps the % until it converts',
    );
    return (await convertPercent(cmd, 'convert', { node: peak, msg: undefined }, { maxCurtailment }))
      .productionCurtailment;
  };

  it('is percent × peak / 100, rounded to the nearest whole watt', async () => {
    assert.deepStrictEqual(await watts(37.5, 7_400), { value: 2_775, unit: 'W' });
    assert.deepStrictEqual(await watts(60, 1_000_000), { value: 600_000, unit: 'W' });
    assert.deepStrictEqual(await watts(33.34, 1_000), { value: 333, unit: 'W' }, '333.4 W rounds down');
    assert.deepStrictEqual(await watts(33.36, 1_000), { value: 334, unit: 'W' }, '333.6 W rounds up');
    assert.deepStrictEqual(await watts(100, 9_999), { value: 9_999, unit: 'W' });
    assert.deepStrictEqual(await watts(0, 9_999), { value: 0, unit: 'W' });
  });

  it('obeys maxCurtailment on the converted W: equal passes, one W more is refused, naming both', async () => {
    assert.deepStrictEqual(await watts(50, 10_000, 5_000), { value: 5_000, unit: 'W' });
    await assert.rejects(
      watts(50.01, 10_000, 5_000),
      (e: unknown) =>
        e instanceof ValidationError &&
        e.field === 'curtailment' &&
        e.message ===
          "curtailment must be within the node's limit maxCurtailment = 5000 W; got 50.01 % = 5001 W of the site's PV power 10000 W (pvPeakPower); nothing was sent",
    );
  });
});
