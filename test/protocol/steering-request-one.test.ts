/**
 * A request of one component: built on its command's own endpoint when that endpoint carries
 * it, else on the first POST endpoint that does (what endpointFor answers for any number).
 */
import assert from 'node:assert/strict';
import { endpointFor, steeringRequestFor, STEERING_ENDPOINT_NAMES, STEERING_ENDPOINTS } from '../../src/protocol';
import type { SteeringComponent, SteeringEndpoint } from '../../src/protocol';

const SITE = 'site-1';
const VALID = { validUntil: 2_000_000_000_000 };
const VALUES: Record<SteeringComponent, unknown> = {
  energyStorageSetting: { value: -5, unit: 'kW' },
  productionCurtailment: { value: 10, unit: 'kW' },
  maximizeGridImport: true,
  gridTarget: { setpoint: { value: 3, unit: 'kW' } },
  gridLimits: { upperLimit: { value: 20, unit: 'kW' } },
};

describe('protocol: the steering request of one component', () => {
  it('for every component from every endpoint: the endpoint endpointFor names, the body that endpoint builds', () => {
    let own = 0;
    let carried = 0;
    for (const from of STEERING_ENDPOINT_NAMES as readonly SteeringEndpoint[]) {
      for (const name of Object.keys(VALUES) as SteeringComponent[]) {
        const expected = endpointFor([name], [from]);
        if (expected === from) own++;
        else carried++;
        const req = steeringRequestFor(SITE, [{ name, value: VALUES[name], from }], VALID);
        assert.equal(req.endpoint, expected, `${name} from ${from}`);
        const build = STEERING_ENDPOINTS[expected].body;
        assert.deepStrictEqual(req.body, build?.({ [name]: VALUES[name] } as never, VALID), `${name} from ${from}`);
      }
    }
    assert.ok(own > 0 && carried > 0, 'both cases are covered');
  });

  it('a component its own endpoint does not carry (ESS from a curtailment command) goes to the endpoint that does', () => {
    const req = steeringRequestFor(
      SITE,
      [{ name: 'energyStorageSetting', value: VALUES.energyStorageSetting, from: 'curtailment' }],
      VALID,
    );
    assert.equal(req.endpoint, 'combined');
    assert.equal(req.path, `/sites/${SITE}/steering`);
  });
});
