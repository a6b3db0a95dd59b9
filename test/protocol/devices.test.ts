import assert from 'node:assert/strict';
import { normaliseDevices } from '../../src/protocol';

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
