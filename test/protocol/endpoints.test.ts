/**
 * Steering one way: a command becomes one typed request, built once by the
 * protocol's endpoint table; the client sends exactly that request; msg.request is that
 * request. For every steering mode, msg.request (method, path, body) deep-equals what the
 * simulator received (its request log, found by the answer's requestId). Unit tests cover the
 * endpoint table, the typed request builder, the simulator's routes built from the table and
 * the client's trusted path (sends as given, validates nothing again, never after validUntil).
 */
import assert from 'node:assert/strict';
import {
  STEERING_ENDPOINTS,
  STEERING_ENDPOINT_NAMES,
  endpointFor,
  mergeKey,
  sentForm,
  steeringPath,
  steeringRequest,
  steeringRequestFor,
  steeringRequestOf,
  type SteeringCommand,
} from '../../src/protocol/endpoints';
import { requestForCommand } from '../../src/runtime';
import { matchRoute } from '../../src/simulator/routes';
import { DEFAULT_SITES } from '../../src/simulator';

const SITE = DEFAULT_SITES[0].siteReference;

describe('steering one way: the endpoint table and the typed request builder', () => {
  const valid = { validUntil: 2_000_000_000_000 };
  const ess = { value: -5, unit: 'kW' } as const;
  const curt = { value: 40, unit: '%' } as const;

  it('names method, path and components of every endpoint', () => {
    assert.deepEqual(STEERING_ENDPOINT_NAMES, [
      'combined',
      'ess',
      'curtailment',
      'grid-target',
      'cancel-grid-target',
      'grid-limits',
    ]);
    const rows = STEERING_ENDPOINT_NAMES.map((e) => [
      e,
      STEERING_ENDPOINTS[e].method,
      STEERING_ENDPOINTS[e].path,
      STEERING_ENDPOINTS[e].components.join(','),
    ]);
    assert.deepEqual(rows, [
      ['combined', 'POST', '/sites/<site>/steering', 'energyStorageSetting,productionCurtailment,maximizeGridImport'],
      ['ess', 'POST', '/sites/<site>/steering/ess', 'energyStorageSetting'],
      ['curtailment', 'POST', '/sites/<site>/steering/curtailment', 'productionCurtailment'],
      ['grid-target', 'POST', '/sites/<site>/steering/grid-target', 'gridTarget'],
      ['cancel-grid-target', 'DELETE', '/sites/<site>/steering/grid-target', 'gridTarget'],
      ['grid-limits', 'POST', '/sites/<site>/steering/grid-limits', 'gridLimits'],
    ]);
    for (const e of STEERING_ENDPOINT_NAMES) {
      const spec = STEERING_ENDPOINTS[e];
      assert.equal(!!spec.validate, spec.method === 'POST', `${e}: a POST has a validator, a DELETE none`);
      assert.equal(!!spec.body, spec.method === 'POST', `${e}: a POST builds a body, a DELETE none`);
    }
  });

  it('URL-encodes the site in the path', () => {
    assert.equal(steeringPath('ess', 'ste:a b/c'), '/sites/ste%3Aa%20b%2Fc/steering/ess');
    assert.equal(steeringRequest('cancel-grid-target', 'x').path, '/sites/x/steering/grid-target');
  });

  it('every body the table builds is one its validator accepts unchanged', () => {
    const values = {
      energyStorageSetting: ess,
      productionCurtailment: curt,
      maximizeGridImport: true,
      gridTarget: { setpoint: { value: 3, unit: 'kW' as const }, deadband: { value: 1, unit: 'kW' as const } },
      gridLimits: { upperLimit: { value: 5, unit: 'kW' as const }, lowerLimit: { value: -5, unit: 'kW' as const } },
    };
    for (const e of STEERING_ENDPOINT_NAMES) {
      const spec = STEERING_ENDPOINTS[e];
      if (!spec.body) continue;
      for (const validity of [valid, { validFrom: valid.validUntil - 60_000, validUntil: valid.validUntil }]) {
        const body: unknown = spec.body(values, validity);
        assert.deepStrictEqual(spec.validate!(body, 0), body, e);
      }
    }
  });

  it("picks the endpoint: a lone component keeps its command's endpoint, merged ones go where they are carried together", () => {
    assert.equal(endpointFor(['energyStorageSetting'], ['ess']), 'ess');
    assert.equal(endpointFor(['energyStorageSetting'], ['combined']), 'combined');
    assert.equal(endpointFor(['productionCurtailment'], ['curtailment']), 'curtailment');
    assert.equal(endpointFor(['energyStorageSetting', 'productionCurtailment'], ['ess', 'curtailment']), 'combined');
    assert.equal(
      endpointFor(['productionCurtailment'], ['ess']),
      'combined',
      "a component its command's endpoint does not carry",
    );
    assert.equal(endpointFor(['gridTarget'], ['grid-target']), 'grid-target');
    assert.equal(endpointFor(['gridTarget'], ['cancel-grid-target']), 'cancel-grid-target');
    assert.equal(endpointFor(['gridTarget'], ['ess']), 'grid-target');
    assert.throws(
      () => endpointFor(['gridTarget', 'energyStorageSetting'], ['combined', 'grid-target']),
      /no steering endpoint carries gridTarget and energyStorageSetting/,
    );
    // Components merge when the endpoint that carries them alone and the validity are the same.
    assert.equal(mergeKey('energyStorageSetting', valid), 'combined||2000000000000');
    assert.equal(mergeKey('maximizeGridImport', valid), 'combined||2000000000000');
    assert.equal(
      mergeKey('productionCurtailment', { validFrom: 1, validUntil: valid.validUntil }),
      'combined|1|2000000000000',
    );
    assert.equal(mergeKey('gridTarget', valid), 'grid-target||2000000000000');
    assert.equal(mergeKey('productionCurtailment', { validUntil: valid.validUntil + 1 }), 'combined||2000000000001');
  });

  it('builds one typed request: endpoint, method, path, body in the component order whatever order the parts came in', () => {
    const req = steeringRequestFor(
      SITE,
      [
        { name: 'maximizeGridImport', value: false, from: 'combined' },
        { name: 'productionCurtailment', value: curt, from: 'curtailment' },
        { name: 'energyStorageSetting', value: ess, from: 'ess' },
      ],
      { validFrom: 1, validUntil: 2 },
    );
    assert.deepStrictEqual(req, {
      site: SITE,
      endpoint: 'combined',
      method: 'POST',
      path: `/sites/${SITE}/steering`,
      body: {
        energyStorageSetting: ess,
        productionCurtailment: curt,
        maximizeGridImport: false,
        validFrom: 1,
        validUntil: 2,
      },
      validUntil: 2,
    });
    assert.deepEqual(Object.keys(req.body!), [
      'energyStorageSetting',
      'productionCurtailment',
      'maximizeGridImport',
      'validFrom',
      'validUntil',
    ]);
  });

  it("builds a lone command's request once, for every kind; msg.request is its method, path and body", () => {
    const cases: Array<[SteeringCommand, unknown]> = [
      [
        { site: SITE, kind: 'ess', energyStorageSetting: ess, ...valid },
        { setting: ess, ...valid },
      ],
      [
        { site: SITE, kind: 'curtailment', productionCurtailment: curt, ...valid },
        { setting: curt, ...valid },
      ],
      [
        { site: SITE, kind: 'combined', energyStorageSetting: ess, maximizeGridImport: true, ...valid },
        { energyStorageSetting: ess, maximizeGridImport: true, ...valid },
      ],
      [
        { site: SITE, kind: 'grid-target', gridTarget: { setpoint: ess }, ...valid },
        { setpoint: ess, ...valid },
      ],
      [{ site: SITE, kind: 'cancel-grid-target' }, undefined],
    ];
    for (const [cmd, body] of cases) {
      const req = steeringRequestOf(cmd)!;
      assert.equal(req.endpoint, cmd.kind);
      assert.equal(req.method, STEERING_ENDPOINTS[cmd.kind].method);
      assert.equal(req.path, steeringPath(cmd.kind, SITE));
      assert.deepStrictEqual(req.body, body);
      assert.equal(
        req.validUntil,
        (body as { validUntil?: number } | undefined)?.validUntil,
        "the typed validUntil is the body's",
      );
      const shown =
        body === undefined ? { method: req.method, path: req.path } : { method: req.method, path: req.path, body };
      assert.deepStrictEqual(sentForm(req), shown);
      assert.deepStrictEqual(requestForCommand(cmd), shown);
    }
    assert.equal(steeringRequestOf({ site: SITE, kind: 'ess' }), undefined);
  });

  it('the simulator routes every endpoint of the table, on its path and method', () => {
    for (const e of STEERING_ENDPOINT_NAMES) {
      const spec = STEERING_ENDPOINTS[e];
      const matched = matchRoute(steeringPath(e, SITE).split('/').filter(Boolean));
      assert.ok(matched, e);
      assert.deepEqual(matched.params, [SITE]);
      assert.equal(typeof matched.route.methods[spec.method], 'function', `${spec.method} ${spec.path}`);
    }
  });
});
