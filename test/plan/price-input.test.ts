/**
 * Price → battery plan (src/plan): every refusal is a ValidationError that names the field
 * (the slot's index for prices) and the forms it accepts.
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/protocol';
import { planFromPrices } from '../../src/plan';
import { battery, QUARTER_MS, slotsOf } from '../helpers/price-plan';

describe('planner: validation names the field and the accepted forms', () => {
  const ok = () => ({ prices: slotsOf([10, 20, 30, 40]), battery: battery() }) as any;
  const cases: [string, (i: any) => any, string, RegExp][] = [
    ['input', () => 'prices', 'input', /must be an object \{prices, battery/],
    ['prices missing', (i) => ({ ...i, prices: undefined }), 'prices', /non-empty array of \{start, end, price\}/],
    ['prices empty', (i) => ({ ...i, prices: [] }), 'prices', /got an empty array/],
    [
      'too many slots',
      (i) => ({ ...i, prices: slotsOf(Array(961).fill(1), QUARTER_MS) }),
      'prices',
      /at most 960 slots; got 961/,
    ],
    [
      'slot not an object',
      (i) => {
        i.prices[2] = 7;
        return i;
      },
      'prices[2]',
      /must be an object \{start, end \(or duration in minutes\), price\}/,
    ],
    [
      'bad start',
      (i) => {
        i.prices[1].start = 'soon';
        return i;
      },
      'prices[1].start',
      /epoch milliseconds, an ISO 8601 string or a Date; got "soon"/,
    ],
    [
      'no end',
      (i) => {
        delete i.prices[3].end;
        return i;
      },
      'prices[3].end',
      /must be given .* or duration in minutes/,
    ],
    [
      'end before start',
      (i) => {
        i.prices[3].end = i.prices[3].start - 1;
        return i;
      },
      'prices[3].end',
      /must be after prices\[3\]\.start/,
    ],
    [
      'duration disagrees',
      (i) => {
        i.prices[0].duration = 30;
        return i;
      },
      'prices[0].duration',
      /disagrees with prices\[0\]\.end/,
    ],
    [
      'duration 0',
      (i) => {
        delete i.prices[0].end;
        i.prices[0].duration = 0;
        return i;
      },
      'prices[0].duration',
      /minutes above 0/,
    ],
    [
      'overlap',
      (i) => {
        i.prices[2].start -= 60_000;
        return i;
      },
      'prices[2].start',
      /not be before the end of prices\[1\].*sorted by time, not overlapping/,
    ],
    [
      'unsorted',
      (i) => {
        i.prices.reverse();
        return i;
      },
      'prices[1].start',
      /sorted by time/,
    ],
    [
      'price',
      (i) => {
        i.prices[1].price = 'cheap';
        return i;
      },
      'prices[1].price',
      /finite number \(or numeric string\); got "cheap"/,
    ],
    ['priceUnit', (i) => ({ ...i, priceUnit: 'kW' }), 'priceUnit', /kWh or MWh .*EUR\/MWh/],
    [
      'battery',
      (i) => ({ ...i, battery: 100 }),
      'battery',
      /\{capacityKWh, maxChargeKW, maxDischargeKW\?, socMin\?, socMax\?, efficiency\?, soc\}/,
    ],
    [
      'capacity',
      (i) => {
        i.battery.capacityKWh = 0;
        return i;
      },
      'battery.capacityKWh',
      /a number above 0; got 0/,
    ],
    [
      'charge power',
      (i) => {
        i.battery.maxChargeKW = -5;
        return i;
      },
      'battery.maxChargeKW',
      /above 0/,
    ],
    [
      'discharge power',
      (i) => {
        i.battery.maxDischargeKW = 'fast';
        return i;
      },
      'battery.maxDischargeKW',
      /finite number/,
    ],
    [
      'efficiency above 1',
      (i) => {
        i.battery.efficiency = 90;
        return i;
      },
      'battery.efficiency',
      /within \(0, 1\] \(0\.9 for 90 %\)/,
    ],
    [
      'efficiency 0',
      (i) => {
        i.battery.efficiency = 0;
        return i;
      },
      'battery.efficiency',
      /within \(0, 1\]/,
    ],
    [
      'socMin',
      (i) => {
        i.battery.socMin = -1;
        return i;
      },
      'battery.socMin',
      /within \[0, 100\)/,
    ],
    [
      'socMax below socMin',
      (i) => {
        i.battery.socMax = 5;
        return i;
      },
      'battery.socMax',
      /above battery.socMin \(5 %\)/,
    ],
    [
      'soc missing',
      (i) => {
        delete i.battery.soc;
        return i;
      },
      'battery.soc',
      /current SOC in %, within \[0, 100\]/,
    ],
    [
      'soc above 100',
      (i) => {
        i.battery.soc = 101;
        return i;
      },
      'battery.soc',
      /within \[0, 100\]; got 101/,
    ],
    [
      'socEnd outside window',
      (i) => ({ ...i, socEnd: 99 }),
      'socEnd',
      /within battery.socMin and battery.socMax \[5, 95\]/,
    ],
    ['steps', (i) => ({ ...i, steps: 2.5 }), 'steps', /whole number within \[2, 2000\]/],
    ['steps too many', (i) => ({ ...i, steps: 5000 }), 'steps', /whole number within \[2, 2000\]/],
    ['now', (i) => ({ ...i, now: 'tomorrow' }), 'now', /epoch milliseconds, an ISO 8601 string or a Date/],
    [
      'tiny power for the window',
      (i) => {
        i.battery.capacityKWh = 1e6;
        i.battery.maxChargeKW = 1;
        return i;
      },
      'battery.maxChargeKW',
      /too small for the SOC window/,
    ],
    [
      'too many states',
      (i) => {
        Object.assign(i.battery, { soc: 0, socMin: 90, socMax: 100 });
        return { ...i, steps: 2000 };
      },
      'steps',
      /needs \d+ SOC grid states from battery.soc 0 %, more than 10001: give fewer/,
    ],
  ];
  for (const [name, mutate, field, message] of cases) {
    it(`${name}: ${field}`, () => {
      assert.throws(
        () => planFromPrices(mutate(ok())),
        (e: any) => {
          assert.ok(e instanceof ValidationError, String(e));
          assert.equal(e.field, field);
          assert.equal(e.code, 'EMS_VALIDATION');
          assert.ok(e.message.startsWith(`${field} `), e.message);
          assert.match(e.message, message);
          return true;
        },
      );
    });
  }

  it('reads priceUnit as its energy unit: kWh, MWh, EUR/MWh, ct/kWh', () => {
    const kwh = planFromPrices({ ...ok(), priceUnit: 'ct/kWh' });
    const mwh = planFromPrices({ ...ok(), priceUnit: 'EUR/MWh' });
    assert.equal(kwh.priceUnit, 'kWh');
    assert.equal(mwh.priceUnit, 'MWh');
    assert.ok(Math.abs(kwh.value - mwh.value * 1000) < 1e-9);
  });
});
