/**
 * No silent keys (src/plan/keys.ts): every key the planners do not know, at the top level, in
 * `battery`, `site`, a SOC target or a price slot, is refused naming it and the nearest key they
 * know; a misspelt key would otherwise plan as if it were not given (no load, the default
 * efficiency).
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/protocol';
import { planBattery, planFromPrices, planSite } from '../../src/plan';

const HOUR_MS = 3_600_000;
const T0 = Date.UTC(2026, 5, 1);
const slots = (n: number) =>
  Array.from({ length: n }, (_, k) => ({ start: T0 + k * HOUR_MS, end: T0 + (k + 1) * HOUR_MS, price: 0.1 + 0.1 * k }));
const battery = (o: Record<string, unknown> = {}) => ({
  capacityKWh: 10,
  maxChargeKW: 5,
  socMin: 10,
  socMax: 90,
  soc: 50,
  ...o,
});

function refused(fn: () => unknown, field: string, message: RegExp): void {
  assert.throws(fn, (e: any) => {
    assert.ok(e instanceof ValidationError, String(e));
    assert.equal(e.field, field);
    assert.match(e.message, message);
    assert.ok(e.message.startsWith(`${field} `), e.message);
    return true;
  });
}

describe('planner: no silent keys', () => {
  const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
    [
      'a misspelt top-level field',
      { prices: slots(2), loadForcast: [500, 500], battery: battery() },
      'loadForcast',
      /^loadForcast is not a planner field; did you mean loadForecast\? Accepted: prices, battery/,
    ],
    [
      'a field in the wrong case',
      { prices: slots(2), pvforecast: [500, 500], battery: battery() },
      'pvforecast',
      /did you mean pvForecast\?/,
    ],
    [
      'a misspelt battery field',
      { prices: slots(2), battery: battery({ chargeEfficency: 0.9 }) },
      'battery.chargeEfficency',
      /^battery\.chargeEfficency is not a field of battery; did you mean chargeEfficiency\?/,
    ],
    [
      'a misspelt battery field with a site input',
      { prices: slots(2), loadForecast: [0, 0], battery: battery({ cyclecost: 0.1 }) },
      'battery.cyclecost',
      /did you mean cycleCost\?/,
    ],
    [
      'a misspelt site field',
      { prices: slots(2), site: { peakcost: 0.1 }, battery: battery() },
      'site.peakcost',
      /^site\.peakcost is not a field of site; did you mean peakCost\?/,
    ],
    [
      'a forecast inside a price slot',
      { prices: [{ ...slots(1)[0], importPrice: 0.2, exportPrice: 0.1, loadForecast: 500 }], battery: battery() },
      'prices[0].loadForecast',
      /^prices\[0\]\.loadForecast is not a field of a price slot; did you mean /,
    ],
    [
      'a price-only slot with an unknown field',
      { prices: [{ ...slots(1)[0], prise: 1 }], battery: battery() },
      'prices[0].prise',
      /did you mean price\?/,
    ],
    [
      'a {start, value} slot with an unknown field',
      {
        prices: [{ start: T0, value: 80, ned: T0 + HOUR_MS }],
        priceUnit: 'EUR/MWh',
        loadForecast: [0],
        battery: battery(),
      },
      'prices[0].ned',
      /did you mean end\?/,
    ],
    [
      'a SOC target with an unknown field',
      { prices: slots(2), battery: battery({ socTarget: { soc: 60, time: T0 + HOUR_MS, tim: 1 } }) },
      'battery.socTarget.tim',
      /did you mean time\?/,
    ],
  ];
  for (const [name, input, field, message] of cases) {
    it(`${name}: ${field}`, () => refused(() => planBattery(input as any), field, message));
  }

  it('planSite and planFromPrices refuse them too (planFromPrices knows every planner field: planBattery routes)', () => {
    refused(
      () => planSite({ prices: slots(2), loadForcast: [1, 1], battery: battery() } as any),
      'loadForcast',
      /did you mean loadForecast\?/,
    );
    refused(
      () => planFromPrices({ prices: slots(2), stpes: 10, battery: battery() } as any),
      'stpes',
      /did you mean steps\?/,
    );
    refused(
      () => planFromPrices({ prices: slots(2), battery: battery({ efficency: 0.9 }) } as any),
      'battery.efficency',
      /did you mean efficiency\?/,
    );
  });

  it('a key given as undefined is absent (JSON drops it), and every known key plans', () => {
    const plan = planBattery({
      prices: slots(2),
      loadForcast: undefined,
      battery: battery({ chargeEfficency: undefined }),
    } as any);
    assert.equal(plan.slots.length, 2);
  });
});
