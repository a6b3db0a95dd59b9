/**
 * The request budget on the admin route, in a real Node-RED with httpAdminRoot and
 * adminAuth: `GET ems-partner/stats/:id` answers a user with read permission with the deployed
 * config node's counts and caps (the counts match the simulator's request log; no form of the
 * key in the reply), refuses a request without a token and a user without that permission,
 * and answers 404 for an unknown id. Needs the build (dist/nodes), as the other admin tests.
 */
import assert from 'node:assert/strict';
import { startAdminRed, type AdminRed } from '../../helpers/admin-red';
import { formsOf } from '../../helpers/hostile-server';
import { useSimulator } from '../../helpers/sim';
const KEY = 'k-SECRET/+=?&admin-budget-7';
const ID = 'b0d6e70000000001';

describe('request budget on the admin route (real Node-RED, adminAuth)', function () {
  this.timeout(90_000);
  const sim = useSimulator({ apiKey: KEY });
  let nr: AdminRed;
  const token = (username: string) => nr.token(username);
  const get = (route: string, bearer?: string) =>
    fetch(`${nr.base}/admin/ems-partner/${route}`, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
  const post = (route: string, body: object, bearer: string) =>
    fetch(`${nr.base}/admin/ems-partner/${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify(body),
    });

  before(async () => {
    nr = await startAdminRed('budget-admin', {
      users: { admin: '*', viewer: 'read', flowsonly: 'flows.read' },
      flows: [
        {
          id: ID,
          type: 'ems-partner-config',
          name: 'capped',
          simulator: false,
          baseUrl: sim.url,
          authType: 'header',
          retries: 0,
          maxPerMinute: 100,
          maxPerDay: 1000,
          budgetMode: 'refuse',
        },
      ],
      credentials: { [ID]: { apiKey: KEY } },
    });
  });

  after(async () => {
    await nr?.stop();
  });

  it("a user with read permission gets the counts and caps, exact against the simulator's log; no secret", async () => {
    const viewer = await token('viewer');
    for (let i = 0; i < 3; i++) assert.equal((await post('devices', { server: ID }, viewer)).status, 200);
    assert.equal((await post('test', { server: ID }, await token('admin'))).status, 200);
    const response = await get(`stats/${ID}`, viewer);
    assert.equal(response.status, 200);
    const text = await response.text();
    const body = JSON.parse(text);
    const logged = sim.sim.requestLog.length;
    assert.equal(logged, 4);
    assert.equal(body.id, ID);
    assert.equal(body.name, 'capped');
    assert.deepEqual(body.caps, { maxPerMinute: 100, maxPerDay: 1000, budgetMode: 'refuse' });
    for (const w of ['lastMinute', 'lastHour', 'lastDay', 'total'])
      assert.deepEqual(body[w], { sent: logged, retried: 0, rateLimited: 0, failed: 0, refused: 0 }, w);
    assert.deepEqual(body.usage, { maxPerMinute: 4, maxPerDay: 0 });
    for (const form of formsOf(KEY)) assert.ok(!text.includes(form), `no form of the key (${form})`);
    assert.ok(!/apiKey|credentials|x-api-key/i.test(text), text);
  });

  it('refuses a request without a token and a user without read permission on the config nodes; 404 for an unknown id', async () => {
    assert.equal((await get(`stats/${ID}`)).status, 401);
    const flowsOnly = await token('flowsonly');
    assert.equal(
      (await fetch(`${nr.base}/admin/flows`, { headers: { authorization: `Bearer ${flowsOnly}` } })).status,
      200,
      'the token itself is good',
    );
    const response = await get(`stats/${ID}`, flowsOnly);
    assert.ok([401, 403].includes(response.status), String(response.status));
    assert.ok(!(await response.text()).includes('"lastMinute"'));
    const unknown = await get('stats/nope', await token('viewer'));
    assert.equal(unknown.status, 404);
    assert.deepEqual(Object.keys(await unknown.json()).sort(), ['error', 'message']);
  });
});
