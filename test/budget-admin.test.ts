/**
 * The request budget on the admin route (issue 14), in a real Node-RED with httpAdminRoot and
 * adminAuth: `GET ems-partner/stats/:id` answers a user with read permission with the deployed
 * config node's counts and caps (the counts match the simulator's request log; no form of the
 * key in the reply), refuses a request without a token and a user without that permission,
 * and answers 404 for an unknown id. Needs the build (dist/nodes), as the other admin tests.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { nodeRedDir } from './helpers/node-red-path';
import { start, type Spawned } from './helpers/spawned';
import { formsOf } from './helpers/hostile-server';
import { startSimulator, type StartedSimulator } from '../src/simulator';

const ROOT = path.resolve(__dirname, '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const bcrypt = require('bcryptjs');
const KEY = 'k-SECRET/+=?&admin-budget-7';
const ID = 'b0d6e70000000001';

describe('request budget on the admin route (real Node-RED, adminAuth)', function () {
  this.timeout(90_000);
  const dir = path.join(ROOT, '.test-tmp', `budget-admin-${process.pid}`);
  let sim: StartedSimulator;
  let red: Spawned;
  let base = '';
  const token = async (username: string) => {
    const r = await fetch(`${base}/admin/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'node-red-editor', grant_type: 'password', scope: '', username, password: 'pw' }).toString(),
    });
    assert.equal(r.status, 200, `token for ${username}`);
    return ((await r.json()) as { access_token: string }).access_token;
  };
  const get = (route: string, bearer?: string) => fetch(`${base}/admin/ems-partner/${route}`, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
  const post = (route: string, body: object, bearer: string) => fetch(`${base}/admin/ems-partner/${route}`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` }, body: JSON.stringify(body),
  });

  before(async () => {
    assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'nodes', 'ems-partner-config.js')), 'dist/ is built (npm test builds first)');
    sim = await startSimulator({ port: 0, apiKey: KEY });
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const hash = bcrypt.hashSync('pw', 8);
    fs.writeFileSync(path.join(dir, 'settings.js'), `module.exports = ${JSON.stringify({
      uiHost: '127.0.0.1', flowFile: 'flows.json', credentialSecret: false, httpAdminRoot: '/admin', httpNodeRoot: '/api',
      nodesDir: [ROOT], telemetry: { enabled: false }, editorTheme: { tours: false },
      adminAuth: { type: 'credentials', users: [
        { username: 'admin', password: hash, permissions: '*' },
        { username: 'viewer', password: hash, permissions: 'read' },
        { username: 'flowsonly', password: hash, permissions: 'flows.read' },
      ] },
    })};\n`);
    fs.writeFileSync(path.join(dir, 'flows.json'), JSON.stringify([
      { id: ID, type: 'ems-partner-config', name: 'capped', simulator: false, baseUrl: sim.url, authType: 'header', retries: 0, maxPerMinute: 100, maxPerDay: 1000, budgetMode: 'refuse' },
    ]));
    fs.writeFileSync(path.join(dir, 'flows_cred.json'), JSON.stringify({ [ID]: { apiKey: KEY } }));
    red = start(process.execPath, [path.join(nodeRedDir, 'red.js'), '-p', '0', '-u', dir, '-s', path.join(dir, 'settings.js')], { cwd: dir, env: { ...process.env } });
    base = (await red.waitFor(/Server now running at (http:\/\/127\.0\.0\.1:\d+)\//, 60_000))[1];
    await red.waitFor(/Started flows/, 30_000);
  });

  after(async () => {
    await red?.stop('SIGTERM');
    await sim?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a user with read permission gets the counts and caps, exact against the simulator\'s log; no secret', async () => {
    const viewer = await token('viewer');
    for (let i = 0; i < 3; i++) assert.equal((await post('devices', { server: ID }, viewer)).status, 200);
    assert.equal((await post('test', { server: ID }, await token('admin'))).status, 200);
    const r = await get(`stats/${ID}`, viewer);
    assert.equal(r.status, 200);
    const text = await r.text();
    const b = JSON.parse(text);
    const logged = sim.sim.requestLog.length;
    assert.equal(logged, 4);
    assert.equal(b.id, ID);
    assert.equal(b.name, 'capped');
    assert.deepEqual(b.caps, { maxPerMinute: 100, maxPerDay: 1000, budgetMode: 'refuse' });
    for (const w of ['lastMinute', 'lastHour', 'lastDay', 'total']) assert.deepEqual(b[w], { sent: logged, retried: 0, rateLimited: 0, failed: 0, refused: 0 }, w);
    assert.deepEqual(b.usage, { maxPerMinute: 4, maxPerDay: 0 });
    for (const form of formsOf(KEY)) assert.ok(!text.includes(form), `no form of the key (${form})`);
    assert.ok(!/apiKey|credentials|x-api-key/i.test(text), text);
  });

  it('refuses a request without a token and a user without read permission on the config nodes; 404 for an unknown id', async () => {
    assert.equal((await get(`stats/${ID}`)).status, 401);
    const flowsOnly = await token('flowsonly');
    assert.equal((await fetch(`${base}/admin/flows`, { headers: { authorization: `Bearer ${flowsOnly}` } })).status, 200, 'the token itself is good');
    const r = await get(`stats/${ID}`, flowsOnly);
    assert.ok([401, 403].includes(r.status), String(r.status));
    assert.ok(!(await r.text()).includes('"lastMinute"'));
    const unknown = await get('stats/nope', await token('viewer'));
    assert.equal(unknown.status, 404);
    assert.deepEqual(Object.keys(await unknown.json()).sort(), ['error', 'message']);
  });
});
