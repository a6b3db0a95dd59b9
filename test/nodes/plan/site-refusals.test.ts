/**
 * The site model as the node takes it: `ems-plan` with the site planner's inputs in a real Node-RED
 * runtime (node-red-node-test-helper). Per-slot import and export prices, PV and load forecasts
 * (as one value per slot, or as points from any source, or a load history), grid limits, price
 * feeds (Tibber, power-saver, {start, value}), the price formulas, efficiencies, wear, a SOC
 * target by a time of day, an end value and the site's limits, from the message or the node's
 * settings (version 2); the payload stays what ems-schedule takes; every refusal names the msg
 * field and the slot, or the node's setting. The clock is @sinonjs/fake-timers (Date only).
 */
import assert from 'node:assert/strict';
import { HOUR_MS } from '../../../src/protocol/time';
import { callsOf, loadFlow, turns, useRuntime } from '../../helpers/red';
import { useFakeClock } from '../../helpers/clock';
import { hours, planFlow, T0 } from './flow';
import { planNode } from './site-flow';

describe('nodes: ems-plan with the site model', () => {
  useRuntime();
  useFakeClock(
    () => ({ now: T0 - HOUR_MS, toFake: ['Date'] }),
    () => undefined, // Date alone is faked, at a fixed time: no test moves the clock
  );
  const load = (extra: Record<string, unknown> = {}) => loadFlow(planFlow(planNode(extra)));

  describe("refusals name the msg field and the slot, or the node's setting", () => {
    const prices = () => hours([0.3, 0.1, 0.4]);
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, string, RegExp]> = [
      [
        'a negative load in a slot',
        {},
        { payload: { prices: prices(), loadForecast: [500, -1, 500] }, soc: 50 },
        'msg.payload.loadForecast[1]',
        /must be a finite number of W ≥ 0; got -1/,
      ],
      [
        'msg.pvForecast of the wrong length',
        {},
        { payload: prices(), pvForecast: [1, 2], soc: 50 },
        'msg.pvForecast',
        /one value per price slot: 3; got 2/,
      ],
      [
        'a point of msg.pvForecast',
        {},
        {
          payload: prices(),
          pvForecast: [
            { start: T0, value: 1 },
            { start: T0 + HOUR_MS, value: 'sunny' },
          ],
          soc: 50,
        },
        'msg.pvForecast[1].value',
        /finite number/,
      ],
      [
        'msg.pvForecast not covering the plan',
        {},
        { payload: prices(), pvForecast: [{ start: T0, end: T0 + HOUR_MS, value: 1 }], soc: 50 },
        'msg.pvForecast',
        /must cover every price slot: nothing for slot 1/,
      ],
      [
        'a load history without the weeks before',
        {},
        {
          payload: prices(),
          loadHistory: [
            { x: T0 - HOUR_MS, y: 1 },
            { x: T0, y: 1 },
          ],
          soc: 50,
        },
        'msg.loadHistory',
        /has no data for slot 0/,
      ],
      [
        'a load the site cannot supply',
        { importLimitKW: '1' },
        { payload: prices(), loadForecast: [500, 9000, 500], soc: 50 },
        'msg.loadForecast[1]',
        /cannot be met in that slot: at most 1 kW import/,
      ],
      [
        'msg.importFormula.vat',
        {},
        { payload: prices(), importFormula: { vat: 0 }, soc: 50 },
        'msg.importFormula.vat',
        /factor above 0/,
      ],
      [
        'msg.battery.gridCharge not true or false',
        {},
        { payload: prices(), battery: { gridCharge: 'no' }, soc: 50 },
        'msg.battery.gridCharge',
        /must be true or false; got "no"/,
      ],
      [
        "the node's gridDischarge not true or false",
        { gridDischarge: 'x' },
        { payload: prices(), soc: 50 },
        'gridDischarge',
        /must be true or false; got "x"/,
      ],
      [
        "the node's sellSocMin outside the SOC window",
        { sellSocMin: '99' },
        { payload: prices(), soc: 50 },
        'sellSocMin',
        /must be a SOC in % within socMin and socMax \[10, 90\]; got 99/,
      ],
      [
        'a misspelt msg field',
        {},
        { payload: prices(), loadForcast: [500, 500, 500], soc: 50 },
        'msg.loadForcast',
        /msg\.loadForcast is not a field the plan node reads; did you mean msg\.loadForecast\?/,
      ],
      [
        'a forecast inside a price slot',
        {},
        {
          payload: [{ start: T0, end: T0 + HOUR_MS, importPrice: 0.1, exportPrice: 0.05, loadForecast: 500 }],
          soc: 50,
        },
        'msg.payload[0].loadForecast',
        /is not a field of a price slot; did you mean/,
      ],
      [
        'a misspelt msg.payload.site field',
        {},
        { payload: { prices: prices(), site: { exportLimitw: 1 } }, soc: 50 },
        'msg.payload.site.exportLimitw',
        /did you mean exportLimitW\?/,
      ],
      [
        'a typo in msg.exportFormula',
        {},
        { payload: prices(), exportFormula: { tax: 1 }, soc: 50 },
        'msg.exportFormula.tax',
        /is not a field of msg\.exportFormula; did you mean (multiplier|fee|vat)\? Accepted: multiplier, fee, vat/,
      ],
      [
        "the node's importVat",
        { importVat: '0' },
        { payload: prices(), soc: 50 },
        'importVat',
        /factor above 0 \(1\.19 for 19 % VAT\); got 0/,
      ],
      [
        "the node's exportLimitKW",
        { exportLimitKW: '-2' },
        { payload: prices(), soc: 50 },
        'exportLimitKW',
        /must be a number of kW ≥ 0/,
      ],
      [
        "the node's socTargetTime",
        { socTarget: '50', socTargetTime: '7 am' },
        { payload: prices(), soc: 50 },
        'socTargetTime',
        /must be a time of day HH:MM/,
      ],
      [
        'a socTarget without its time',
        { socTarget: '50' },
        { payload: prices(), soc: 50 },
        'socTargetTime',
        /must be given with socTarget/,
      ],
      [
        'an unreachable msg.battery.socTarget',
        {},
        { payload: prices(), battery: { socTarget: { soc: 90, time: T0 + HOUR_MS } }, soc: 10 },
        'msg.battery.socTarget.soc',
        /cannot be reached by/,
      ],
      [
        'msg.payload.site.peakCost',
        {},
        { payload: { prices: prices(), site: { peakCost: -1 } }, soc: 50 },
        'msg.payload.site.peakCost',
        /≥ 0; got -1/,
      ],
      [
        'msg.battery.chargeEfficiency',
        {},
        { payload: prices(), battery: { chargeEfficiency: 95 }, soc: 50 },
        'msg.battery.chargeEfficiency',
        /within \(0, 1\]/,
      ],
      [
        'a delivery report without re-planning',
        {},
        { topic: 'delivery', payload: { followed: 'no' } },
        'msg.payload',
        /is a delivery report \(topic delivery\): the node uses it only with Re-plan on/,
      ],
    ];
    for (const [name, node, msg, field, text] of cases) {
      it(`${name}: ${field}`, async () => {
        const deployed = await load(node);
        const caught = await deployed.fails(msg);
        assert.ok(caught.error.message.startsWith(`ValidationError: ${field} `), caught.error.message);
        assert.match(caught.error.message, text);
        await turns();
        assert.equal(deployed.out.msgs.length, 0, 'nothing output');
      });
    }

    it('a bad setting of the node is reported at deploy, naming it', async () => {
      await load({ importVat: '-1', exportLimitKW: '' });
      const atDeploy = callsOf('error', 'n');
      assert.equal(atDeploy.length, 1);
      assert.match(String(atDeploy[0][0].message ?? atDeploy[0][0]), /^importVat must be a factor above 0/);
    });
  });
});
