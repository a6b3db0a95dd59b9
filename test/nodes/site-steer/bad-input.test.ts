/**
 * Bad input: each gives exactly one Catch-able error naming the field, sends nothing that
 * could move power, and the flow keeps running (a good message afterwards gets its output).
 */
import assert from 'node:assert/strict';
import { MINUTE_MS } from '../../../src/protocol/time';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { cfg, flow, loadFlow, useRuntime, useSimulator } from '../../helpers/red';
import { badSettingOn, check } from '../../helpers/bad-input';

const COM = DEFAULT_SITES[0];

const SITE = COM.siteReference;

const steer = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-site-steer',
  site: SITE,
  siteType: 'str',
  mode: 'ess',
  essValue: 'payload',
  essValueType: 'msg',
  essUnit: 'kW',
  curtailmentValue: '',
  curtailmentValueType: 'num',
  curtailmentUnit: 'kW',
  maximizeGridImport: 'unchanged',
  gridTargetValue: 'payload',
  gridTargetValueType: 'msg',
  gridTargetUnit: 'kW',
  deadbandValue: '',
  deadbandUnit: 'kW',
  validity: 'quarter-hour',
  duration: 15,
  maxEssPower: 0,
  maxCurtailment: 0,
  ...extra,
});

describe('nodes: bad input', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();

  it('ems-site-steer: message fields (ess mode); nothing is sent for a refused message', async () => {
    const deployed = await loadFlow(flow(steer(), cfg(sim.s.url)));
    const received = sim.s.sim.requestsReceived;
    const ok = await check(
      deployed,
      [
        ['site with a space', { payload: 1, site: 'bad site' }, /msg\.site must be a reference/],
        ['site number', { payload: 1, site: { ref: 1 } }, /msg\.site/],
        ['payload text', { payload: 'lots' }, /energyStorage must be a finite number/],
        ['payload boolean', { payload: true }, /energyStorage/],
        ['energyStorage text', { payload: { energyStorage: 'x' } }, /energyStorage must be a finite number/],
        ['energyStorage unit', { payload: { energyStorage: { value: 1, unit: 'GW' } } }, /energyStorage\.unit/],
        ['unknown field', { payload: { energyStorage: 1, power: 2 } }, /msg\.payload\.power is not a steering field/],
        ['nothing set', { payload: null }, /msg\.payload sets nothing/],
        ['curtailment in ess mode', { payload: { curtailment: 5 } }, /curtailment is not used in mode ess/],
        [
          'validUntil past',
          () => ({ payload: { energyStorage: 5, validUntil: Date.now() - MINUTE_MS } }),
          /validUntil must be in the future/,
        ],
        [
          'validUntil text',
          { payload: { energyStorage: 5, validUntil: 'soon' } },
          /msg\.payload\.validUntil must be epoch milliseconds/,
        ],
        [
          'validUntil before validFrom',
          () => ({
            payload: {
              energyStorage: 5,
              validFrom: Date.now() + 20 * MINUTE_MS,
              validUntil: Date.now() + 10 * MINUTE_MS,
            },
          }),
          /validUntil must be after validFrom/,
        ],
        ['validFrom text', { payload: 5, validFrom: 'later' }, /msg\.validFrom must be epoch milliseconds/],
        [
          'duration negative',
          { payload: { energyStorage: 5, duration: -1 } },
          /msg\.payload\.duration must be a positive number of minutes/,
        ],
        [
          'API shape with stray field',
          { payload: { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() + MINUTE_MS, extra: 1 } },
          /msg\.payload\.extra/,
        ],
      ],
      { payload: -2 },
    );
    assert.deepEqual(ok.request.body.setting, { value: -2, unit: 'kW' });
    assert.equal(sim.s.sim.requestsReceived, received + 1, 'only the good message reached the service');
  });

  it('ems-site-steer: message fields (combined, curtailment in %, maximizeGridImport from msg)', async () => {
    const deployed = await loadFlow(
      flow(steer({ mode: 'combined', curtailmentUnit: '%', maximizeGridImport: 'msg' }), cfg(sim.s.url)),
    );
    await check(
      deployed,
      [
        ['curtailment negative', { payload: { curtailment: -5 } }, /curtailment\.value must be 0 or more/],
        [
          'curtailment over 100 %',
          { payload: { curtailment: 150 } },
          /curtailment\.value must be within 0-100 when the unit is %/,
        ],
        ['curtailment text', { payload: { curtailment: 'half' } }, /curtailment must be a finite number/],
        [
          'maximizeGridImport text',
          { payload: 5, maximizeGridImport: 'yes' },
          /maximizeGridImport must be true or false/,
        ],
        [
          'maximizeGridImport number',
          { payload: { energyStorage: 1, maximizeGridImport: 1 } },
          /maximizeGridImport must be true or false/,
        ],
        ['gridTarget in combined', { payload: { gridTarget: 5 } }, /gridTarget is not used in mode combined/],
      ],
      { payload: { curtailment: 40 }, maximizeGridImport: false },
    );
  });

  it('ems-site-steer: message fields (grid-target, validity msg)', async () => {
    const deployed = await loadFlow(flow(steer({ mode: 'grid-target', validity: 'msg' }), cfg(sim.s.url)));
    await check(
      deployed,
      [
        ['no validUntil', { payload: 5 }, /validUntil is required when validity is "msg"/],
        ['no setpoint', { payload: { deadband: 5, duration: 5 } }, /gridTarget is required in mode grid-target/],
        ['deadband negative', { payload: { gridTarget: 5, deadband: -1, duration: 5 } }, /deadband must be 0 or more/],
        [
          'energyStorage in grid-target',
          { payload: { energyStorage: 5, duration: 5 } },
          /energyStorage is not used in mode grid-target/,
        ],
        [
          'msg.validUntil text',
          { payload: 5, validUntil: 'tomorrow-ish' },
          /msg\.validUntil must be epoch milliseconds/,
        ],
      ],
      { payload: 5, validUntil: Date.now() + 5 * MINUTE_MS },
    );
  });

  for (const [what, node, field] of [
    ['mode', steer({ mode: 'turbo' }), /mode must be one of combined, ess, curtailment, grid-target/],
    ['validity', steer({ validity: 'sometimes' }), /validity must be one of duration, quarter-hour, msg/],
    ['duration', steer({ validity: 'duration', duration: 0 }), /duration must be more than 0 minutes/],
    ['essUnit', steer({ essUnit: 'GW' }), /essUnit/],
    [
      'maxEssPower',
      steer({ maxEssPower: -1 }),
      /maxEssPower must be more than 0 W \(empty = the site's rating; "none" = no limit\)/,
    ],
    [
      'maximizeGridImport',
      steer({ maximizeGridImport: 'maybe' }),
      /maximizeGridImport must be one of unchanged, true, false, msg/,
    ],
    ['site', steer({ site: '' }), /site must be a reference/],
    [
      'curtailmentValue',
      steer({ mode: 'combined', curtailmentValue: 'x', curtailmentValueType: 'str' }),
      /curtailment must be a finite number/,
    ],
  ] as Array<[string, Record<string, unknown>, RegExp]>) {
    it(`ems-site-steer: node setting ${what}`, async () => {
      const received = sim.s.sim.requestsReceived;
      await badSetting(node, field, steer(), { payload: 1 });
      assert.equal(sim.s.sim.requestsReceived, received + 1, 'only the good node sent');
    });
  }

  const badSetting = badSettingOn(sim);
});
