/**
 * Bad input: each gives exactly one Catch-able error naming the field, sends nothing that
 * could move power, and the flow keeps running (a good message afterwards gets its output).
 */
import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { cfg, flow, loadFlow, useRuntime, useSimulator } from '../../helpers/red';
import { badSettingOn, check } from '../../helpers/bad-input';

const COM = DEFAULT_SITES[0];
const BAT = COM.battery.deviceReference;

const series = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-time-series',
  device: BAT,
  deviceType: 'str',
  property: 'soc',
  propertyType: 'str',
  range: 'last',
  last: 3,
  lastUnit: 'hours',
  resolution: 1,
  output: 'points',
  ...extra,
});

describe('nodes: bad input', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();

  it('ems-time-series: message fields', async () => {
    const end = Date.now() - 3_600_000;
    const deployed = await loadFlow(flow(series(), cfg(sim.s.url)));
    const ok = await check(
      deployed,
      [
        ['reference array', { deviceReference: ['a'] }, /msg\.deviceReference must be a reference/],
        ['two properties', { property: 'soc,power' }, /msg\.property must be a property name/],
        ['property number', { property: 7 }, /msg\.property/],
        [
          'start text',
          { start: 'last tuesday' },
          /msg\.start must be epoch milliseconds, an ISO 8601 string or a Date/,
        ],
        ['start object', { start: {} }, /msg\.start/],
        ['start invalid Date', { start: new Date(NaN) }, /msg\.start/],
        ['end alone', { end: end }, /msg\.start is required with msg\.end/],
        ['end text', { start: end - 7_200_000, end: 'soon' }, /msg\.end must be epoch milliseconds/],
        ['end before start', { start: end, end: end - 7_200_000 }, /msg\.end must be after msg\.start/],
        ['resolution 0', { resolution: 0 }, /msg\.resolution must be a whole number of hours from 1 to 720/],
        ['resolution 1.5', { resolution: 1.5 }, /msg\.resolution/],
        ['resolution text', { resolution: 'hourly' }, /msg\.resolution/],
        ['resolution 721', { resolution: 721 }, /msg\.resolution/],
        ['resolution boolean', { resolution: true }, /msg\.resolution/],
        ['unknown device', { deviceReference: 'dvc_nosuchdevice' }, /HTTP 404/],
      ],
      { start: end - 7_200_000, end },
    );
    assert.equal(ok.payload.length, 2);
  });

  for (const [what, node, field] of [
    ['output', series({ output: 'csv' }), /output must be one of arrays, points, split/],
    ['range', series({ range: 'forever' }), /range must be one of last, today, yesterday, absolute/],
    ['last', series({ last: 0 }), /last must be a positive number of hours/],
    ['resolution', series({ resolution: 0 }), /resolution must be a whole number of hours/],
    ['start', series({ range: 'absolute', start: '' }), /start must be epoch milliseconds/],
    [
      'end',
      series({ range: 'absolute', start: '2026-01-02T00:00:00Z', end: '2026-01-01T00:00:00Z' }),
      /end must be after start/,
    ],
    ['property', series({ property: '' }), /property must be a property name/],
    ['device', series({ device: 'has space' }), /device must be a reference/],
  ] as Array<[string, Record<string, unknown>, RegExp]>) {
    it(`ems-time-series: node setting ${what}`, async () => {
      await badSetting(node, field, series());
    });
  }

  const badSetting = badSettingOn(sim);
});
