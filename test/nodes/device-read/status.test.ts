/**
 * What ems-device-read shows while its messages overlap: "requesting" once, as it starts from
 * idle, and the results held back (Status.okLater) until the last message ended, whose result
 * then shows; a message on its own shows "requesting", then its result, as before.
 */
import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { cfg, flow, loadFlow, useRuntime, useSimulator } from '../../helpers/red';

const COM = DEFAULT_SITES[0];
const BAT = COM.battery.deviceReference;
const PV = COM.pv.deviceReference;
const T0 = Date.UTC(2026, 5, 21, 12, 0, 0);

const read = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-device-read',
  device: BAT,
  deviceType: 'str',
  properties: 'soc',
  propertiesType: 'str',
  ...extra,
});

describe('nodes: ems-device-read status while messages overlap', () => {
  const sim = useSimulator({ frozen: true, startTime: T0 });
  useRuntime();

  it('20 overlapping messages: one "requesting", then the last result only', async () => {
    const deployed = await loadFlow(flow(read({ mode: 'map', properties: 'soc,power' }), cfg(sim.s.url)));
    const before = deployed.status.all.length;
    for (let i = 0; i < 20; i++) deployed.send({ i, deviceReference: i % 2 ? BAT : PV, properties: 'power' });
    await deployed.out.count(20);
    const shown = deployed.status.all.slice(before);
    assert.equal(shown.filter((s) => s.fill === 'blue').length, 1, JSON.stringify(shown));
    assert.equal(shown[0].fill, 'blue');
    assert.ok(shown.filter((s) => s.fill === 'green').length <= 2, JSON.stringify(shown));
    const last = shown.at(-1);
    assert.equal(last.fill, 'green');
    assert.match(last.text, /^power -?\d+(\.\d+)? k?W · \d\d:\d\d$/);
  });

  it('one message at a time: "requesting", then its result, each time', async () => {
    const deployed = await loadFlow(flow(read({ mode: 'map' }), cfg(sim.s.url)));
    const before = deployed.status.all.length;
    await deployed.ask();
    await deployed.ask();
    const fills = deployed.status.all.slice(before).map((s) => s.fill);
    assert.deepEqual(fills, ['blue', 'green', 'blue', 'green']);
  });
});
