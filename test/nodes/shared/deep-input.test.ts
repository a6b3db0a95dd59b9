/**
 * Deep messages: a message property nested deeper than INPUTS.maxDepth (64) is refused by every
 * node before any other work, with an error naming the property; the property is replaced in
 * the message a Catch node gets, so Node-RED's recursive copy of it cannot overflow the stack.
 * Node-RED survives a 100,000-level-deep payload into each node.
 */
import assert from 'node:assert/strict';
import { INPUTS } from '../../../src/protocol';
import { DEFAULT_SITES } from '../../../src/simulator';
import { cfg, flow, helper, loadFlow, siteSteer, useRuntime, useSimulator } from '../../helpers/red';
import { scheduleNode } from '../../helpers/schedule';

const SITE = DEFAULT_SITES[0].siteReference;
const BAT = DEFAULT_SITES[0].battery.deviceReference;

/** `levels` nested objects (or arrays) around 1. */
function nested(levels: number, array = false): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = array ? [value] : { a: value };
  return value;
}

describe('deep input: every node refuses it, and Node-RED survives', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();

  const planNode = {
    type: 'ems-plan',
    name: '',
    capacityKWh: '10',
    maxChargeKW: '5',
    maxDischargeKW: '',
    socMin: '10',
    socMax: '90',
    efficiency: '0.9',
    socEnd: '',
    priceUnit: 'kWh',
    steps: '',
  };
  const NODES: Array<[string, Record<string, unknown>, string[]]> = [
    [
      'ems-device-read',
      {
        type: 'ems-device-read',
        device: BAT,
        deviceType: 'str',
        mode: 'map',
        properties: 'soc',
        propertiesType: 'str',
      },
      ['payload'],
    ],
    [
      'ems-time-series',
      {
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
      },
      ['payload'],
    ],
    ['ems-site-steer', siteSteer(SITE, { maxEssPower: 1_000_000 }), ['payload']],
    ['ems-schedule', scheduleNode(), ['payload']],
    ['ems-request', { type: 'ems-request', method: 'POST', path: `/sites/${SITE}/steering/ess` }, ['payload', 'body']],
    ['ems-plan', planNode, ['payload']],
  ];

  for (const [type, node, props] of NODES) {
    for (const prop of props) {
      it(`${type}: a 100,000-level-deep msg.${prop} fails with an error naming it; the Catch node gets the message with the property replaced; nothing is sent`, async () => {
        const loaded = await loadFlow(flow(node, cfg(sim.s.url)));
        const before = sim.s.sim.requestsReceived;
        const failure = await loaded.fails({ [prop]: nested(100_000), topic: 'kept' });
        assert.match(failure.error.message, new RegExp(`msg\\.${prop} is nested deeper than 64 levels`));
        assert.ok(failure.error.message.length < 200, 'the error does not carry the value');
        assert.equal(failure[prop], '[refused: nested deeper than 64 levels]');
        assert.equal(failure.topic, 'kept', 'the other properties stay');
        assert.equal(loaded.status.all.at(-1).fill, 'red');
        assert.equal(loaded.out.msgs.length, 0);
        assert.equal(sim.s.sim.requestsReceived, before, 'refused before any request');
        // Node-RED runs on: a second one (an array this time) is refused the same way.
        const again = await loaded.fails({ [prop]: nested(100_000, true) });
        assert.match(again.error.message, /nested deeper than 64 levels/);
        assert.equal(loaded.caught.msgs.length, 2);
        assert.ok(helper.getNode('n'));
      });
    }
  }

  for (const [type, node] of NODES) {
    it(`${type}: a msg.payload array of 1,000,000 elements fails at once naming its length and the limit, none of its elements read; the Catch node gets the message with it replaced`, async () => {
      const loaded = await loadFlow(flow(node, cfg(sim.s.url)));
      const before = sim.s.sim.requestsReceived;
      let reads = 0;
      const huge = new Proxy(new Array(1_000_000).fill({ start: 0, price: 1 }), {
        get: (t, k, r) => {
          if (typeof k === 'string' && /^\d+$/.test(k)) reads++;
          return Reflect.get(t, k, r);
        },
      });
      const failure = await loaded.fails({ payload: huge, topic: 'kept' });
      assert.equal(
        failure.error.message,
        `ValidationError: msg.payload holds an array of 1000000 elements (at most ${INPUTS.maxElements} in one array of a message; no node of this package reads more): refused before any other work`,
      );
      assert.equal(reads, 0, 'no element read');
      assert.equal(failure.payload, '[refused: an array of 1000000 elements]');
      assert.equal(failure.topic, 'kept');
      assert.equal(loaded.out.msgs.length, 0);
      assert.equal(sim.s.sim.requestsReceived, before, 'refused before any request');
    });
  }

  it('a message 64 levels deep is taken as before (device read answers it)', async () => {
    const loaded = await loadFlow(
      flow(
        {
          type: 'ems-device-read',
          device: BAT,
          deviceType: 'str',
          mode: 'map',
          properties: 'soc',
          propertiesType: 'str',
        },
        cfg(sim.s.url),
      ),
    );
    const ok = await loaded.ask({ extra: nested(64) });
    assert.equal(typeof ok.payload.soc, 'number');
  });
});
