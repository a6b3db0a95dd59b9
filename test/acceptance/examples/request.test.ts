/**
 * Example 11, loaded as shipped (config node on the test simulator): the raw request node
 * reads the site list and the Home site's steering state, and its stats mode shows the request
 * counts; nothing is steered, so the example cannot disturb the others.
 */
import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { nodeRedVersion } from '../../helpers/node-red-path';
import { loadExample } from '../../helpers/examples';
import { useRuntime, useSimulator } from '../../helpers/red';

const FILE = '11 Raw request - sites, steering state and request counts.json';
const HOME = DEFAULT_SITES[1];

describe(`examples: raw request (11) on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(30_000);
  const sim = useSimulator({ frozen: true });
  useRuntime();

  it('11 lists the sites, reads the Home steering state and shows the request counts; only GETs reach the service', async () => {
    const ex = await loadExample(FILE, sim.s.url);
    const [sites, steering, counts, errors] = ['sites', 'steering in force', 'counts', 'errors'].map((n) =>
      ex.inbox(n),
    );
    sim.s.sim.clearLog();
    ex.fire('list the sites');
    const [s] = await sites.count(1);
    assert.equal(s.statusCode, 200);
    const listed = (Array.isArray(s.payload) ? s.payload : s.payload.sites).map((x: any) => x.siteReference);
    for (const site of DEFAULT_SITES) assert.ok(listed.includes(site.siteReference), `${site.siteReference} listed`);
    ex.fire('steering state of Home');
    const [st] = await steering.count(1);
    assert.equal(st.statusCode, 200);
    assert.equal(st.payload.siteReference, HOME.siteReference);
    assert.ok('components' in st.payload);
    ex.fire('request counts');
    const [c] = await counts.count(1);
    assert.equal(typeof c.payload, 'object');
    assert.match(JSON.stringify(c.payload), /sent/);
    assert.equal(errors.msgs.length, 0);
    const methods = sim.s.sim.requestLog.map((e) => e.method);
    assert.deepEqual([...new Set(methods)], ['GET'], 'nothing but reads');
    assert.equal(methods.length, 2, 'the stats mode sends nothing');
  });
});
