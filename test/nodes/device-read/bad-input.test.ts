/**
 * Bad input: each gives exactly one Catch-able error naming the field, sends nothing that
 * could move power, and the flow keeps running (a good message afterwards gets its output).
 */
import assert from 'node:assert/strict';
import { callsOf, cfg, flow, loadFlow, useRuntime, useSimulator } from '../../helpers/red';
import { badSettingOn, check } from '../../helpers/bad-input';
import { read } from '../../helpers/battery-nodes';

describe('nodes: bad input', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();

  it('ems-device-read: message fields', async () => {
    const deployed = await loadFlow(flow(read(), cfg(sim.s.url)));
    const ok = await check(
      deployed,
      [
        ['reference with a space', { deviceReference: 'bad ref' }, /msg\.deviceReference must be a reference/],
        ['reference object', { deviceReference: { id: 1 } }, /msg\.deviceReference .*got an object/],
        ['empty reference', { deviceReference: '' }, /msg\.deviceReference/],
        ['empty properties array', { properties: [] }, /msg\.properties must name at least one property/],
        ['property number in array', { properties: ['soc', 5] }, /msg\.properties\[1\]/],
        ['properties number', { properties: 42 }, /msg\.properties must be a comma-separated string or an array/],
        ['bad property name', { property: 'so c' }, /msg\.property\[0\] must be a property name/],
        ['unknown device', { deviceReference: 'dvc_nosuchdevice' }, /HTTP 404 unknown device "dvc_nosuchdevice"/],
        ['unknown property', { properties: 'soc,nosuch' }, /no property "nosuch"/],
      ],
      {},
    );
    assert.equal(typeof ok.payload.soc, 'number');
  });

  it('ems-device-read: single mode takes one property (the error names where the list came from)', async () => {
    const deployed = await loadFlow(flow(read({ mode: 'single' }), cfg(sim.s.url)));
    await check(
      deployed,
      [
        [
          'two in msg.properties',
          { properties: 'soc,power' },
          /msg\.properties must name exactly one property in mode single/,
        ],
        ['two in msg.property', { property: ['soc', 'power'] }, /msg\.property must name exactly one property/],
      ],
      { property: 'power' },
    );
  });

  for (const [what, node, field] of [
    ['mode', read({ mode: 'bogus' }), /mode must be one of single, map, list, devices/],
    ['device', read({ device: '' }), /device must be a reference/],
    ['device from msg', read({ device: 'dev', deviceType: 'msg' }), /device must be a reference.*got nothing/],
    ['properties', read({ properties: ' , ' }), /properties must name at least one property/],
    ['properties json', read({ properties: '["soc", 7]', propertiesType: 'json' }), /properties\[1\]/],
    [
      'single with two',
      read({ mode: 'single', properties: 'soc,power' }),
      /properties must name exactly one property in mode single/,
    ],
  ] as Array<[string, Record<string, unknown>, RegExp]>) {
    it(`ems-device-read: node setting ${what}`, async () => {
      await badSetting(node, field, read());
    });
  }

  it('ems-device-read: a bad interval is reported and the node still reads on input', async () => {
    const deployed = await loadFlow(flow(read({ interval: 'often' }), cfg(sim.s.url)));
    const errors = callsOf('error', 'n');
    assert.equal(errors.length, 1);
    assert.match(String(errors[0][0]), /interval must be a number of seconds/);
    assert.equal(typeof (await deployed.ask()).payload.soc, 'number');
  });

  const badSetting = badSettingOn(sim);
});
