/**
 * The price plan as a node: `ems-plan` ("price plan") in a real Node-RED runtime
 * (node-red-node-test-helper). The sample day of 96 quarter-hour prices becomes a plan whose
 * slots `ems-schedule` takes (a dry run on the simulator); message overrides and node
 * defaults; every refusal a Catch-able error naming the field, with no output; the status; the
 * chart series. The clock is @sinonjs/fake-timers (Date only): the planner's `now`.
 */
import assert from 'node:assert/strict';
import { HOUR_MS } from '../../../src/protocol/time';
import { callsOf, loadFlow, turns, useRuntime } from '../../helpers/red';
import { useFakeClock } from '../../helpers/clock';
import { hours, planFlow, T0 } from './flow';
import { planNode } from './price-flow';

describe('nodes: ems-plan (price plan)', () => {
  useRuntime();
  useFakeClock(
    () => ({ now: T0 - HOUR_MS, toFake: ['Date'] }),
    () => {},
  );
  const load = (extra: Record<string, unknown> = {}) => loadFlow(planFlow(planNode(extra)));

  describe('refusals: one Catch-able error naming the field, nothing output', () => {
    const prices = () => hours([100, 10, 300, 10]);
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, string, RegExp]> = [
      [
        'payload not prices',
        {},
        { payload: 'prices', soc: 50 },
        'msg.payload',
        /must be an array of prices \[\{start, end or duration, price\}\], or \{prices, battery\?/,
      ],
      [
        'a slot without end',
        {},
        { payload: [{ start: T0, price: 1 }], soc: 50 },
        'msg.payload[0].end',
        /must be given .* or duration in minutes/,
      ],
      [
        'a slot in the object form',
        {},
        { payload: { prices: [...prices().slice(0, 3), { start: T0, end: T0 + 1, price: 1 }], soc: 50 } },
        'msg.payload.prices[3].start',
        /must not be before the end of msg\.payload\.prices\[2\]/,
      ],
      [
        'a price',
        {},
        { payload: [{ start: T0, end: T0 + HOUR_MS, price: 'cheap' }], soc: 50 },
        'msg.payload[0].price',
        /finite number \(or numeric string\); got "cheap"/,
      ],
      ['no prices in the object', {}, { payload: { soc: 50 } }, 'msg.payload.prices', /non-empty array/],
      [
        'an unknown field of msg.payload',
        {},
        { payload: { prices: prices(), socend: 50 }, soc: 50 },
        'msg.payload.socend',
        /is not a field of msg\.payload; did you mean socEnd\? Accepted: prices, battery, soc, socEnd, priceUnit, steps/,
      ],
      [
        'all slots ended',
        {},
        { payload: hours([1, 2], T0 - 3 * HOUR_MS), soc: 50 },
        'msg.payload',
        /must have a slot that ends after now/,
      ],
      [
        'no SOC',
        {},
        { payload: prices() },
        'msg.soc',
        /must be given: the current SOC in %, within \[0, 100\] \(msg\.soc, msg\.payload\.soc or msg\.battery\.soc\)/,
      ],
      ['SOC above 100', {}, { payload: prices(), soc: 120 }, 'msg.soc', /within \[0, 100\]; got 120/],
      [
        'SOC from msg.battery',
        {},
        { payload: prices(), battery: { soc: -1 } },
        'msg.battery.soc',
        /within \[0, 100\]; got -1/,
      ],
      [
        'msg.battery not an object',
        {},
        { payload: prices(), soc: 50, battery: 100 },
        'msg.battery',
        /must be an object \{capacityKWh, maxChargeKW, maxDischargeKW, socMin, socMax, efficiency, soc, chargeEfficiency, dischargeEfficiency, cycleCost, socTarget, endValue, gridCharge, gridDischarge, sellSocMin\} \(each optional\); got 100/,
      ],
      [
        'a typo in msg.battery',
        {},
        { payload: prices(), soc: 50, battery: { capacity: 10 } },
        'msg.battery.capacity',
        /is not a field of msg\.battery; did you mean capacityKWh\? Accepted: capacityKWh/,
      ],
      [
        "msg.battery.socMax below the node's socMin",
        {},
        { payload: prices(), soc: 50, battery: { socMax: 3 } },
        'msg.battery.socMax',
        /must be above socMin \(5 %\)/,
      ],
      [
        'msg.payload.battery.efficiency',
        {},
        { payload: { prices: prices(), battery: { efficiency: 90 } }, soc: 50 },
        'msg.payload.battery.efficiency',
        /round-trip efficiency within \(0, 1\] \(0\.9 for 90 %\); got 90/,
      ],
      [
        'no capacity anywhere',
        { capacityKWh: '' },
        { payload: prices(), soc: 50 },
        'capacityKWh',
        /must be given: the node's capacityKWh, or msg\.battery\.capacityKWh/,
      ],
      ['no charge power anywhere', { maxChargeKW: '' }, { payload: prices(), soc: 50 }, 'maxChargeKW', /must be given/],
      [
        'socEnd outside the window',
        {},
        { payload: prices(), soc: 50, socEnd: 99 },
        'msg.socEnd',
        /a SOC in % within socMin and socMax \[5, 95\]; got 99/,
      ],
      [
        'socEnd out of reach',
        {},
        { payload: hours([1]), soc: 10, socEnd: 95 },
        'msg.socEnd',
        /cannot be reached by the end of the last slot: at most [\d.]+ % from msg\.soc 10 % at maxChargeKW/,
      ],
      [
        'priceUnit',
        {},
        { payload: { prices: prices(), priceUnit: 'kW' }, soc: 50 },
        'msg.payload.priceUnit',
        /must be kWh or MWh/,
      ],
      ['steps', {}, { payload: prices(), soc: 50, steps: 1 }, 'msg.steps', /whole number within \[2, 2000\]; got 1/],
      [
        "the node's efficiency",
        { efficiency: '90' },
        { payload: prices(), soc: 50 },
        'efficiency',
        /within \(0, 1\] \(0\.9 for 90 %\); got 90/,
      ],
      [
        'power too small for the window',
        { capacityKWh: '1000000', maxChargeKW: '1' },
        { payload: prices(), soc: 50 },
        'maxChargeKW',
        /too small for the SOC window/,
      ],
    ];
    for (const [name, node, msg, field, text] of cases) {
      it(`${name}: ${field}`, async () => {
        const deployed = await load(node);
        const caught = await deployed.fails(msg);
        assert.equal(caught.error.source.id, 'n');
        assert.ok(caught.error.message.startsWith(`ValidationError: ${field} `), caught.error.message);
        assert.match(caught.error.message, text);
        assert.deepEqual(caught.payload, msg.payload, 'the Catch node gets the message');
        await turns();
        assert.equal(deployed.out.msgs.length, 0, 'nothing output');
        const status = deployed.status.all.at(-1);
        assert.equal(status.fill, 'red');
        assert.equal(status.text, `bad ${field}`.length > 40 ? `${`bad ${field}`.slice(0, 39)}…` : `bad ${field}`);
      });
    }

    it('a bad setting of the node is reported at deploy, naming it; messages that use it are refused, those that override it are planned', async () => {
      const deployed = await load({ socMin: '20', socMax: '10' });
      const atDeploy = callsOf('error', 'n');
      assert.equal(atDeploy.length, 1);
      assert.match(
        String(atDeploy[0][0].message ?? atDeploy[0][0]),
        /^socMax must be above socMin \(20 %\), within \(socMin, 100\]; got 10/,
      );
      const caught = await deployed.fails({ payload: prices(), soc: 50 });
      assert.match(caught.error.message, /^ValidationError: socMax must be above socMin/);
      const reply = await deployed.ask({ payload: prices(), soc: 50, battery: { socMax: 90 } });
      assert.equal(reply.payload.length, 4);
      assert.equal(deployed.caught.msgs.length, 1);
    });

    it('a node whose capacity and power come from the message deploys without an error', async () => {
      await load({ capacityKWh: '', maxChargeKW: '' });
      assert.deepEqual(callsOf('error', 'n'), []);
    });
  });
});
