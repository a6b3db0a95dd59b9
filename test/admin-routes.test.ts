/**
 * The editor's admin endpoints in a real Node-RED with `httpAdminRoot` and `adminAuth`:
 * they live under the admin root, refuse requests without a token, honour read/write
 * permissions, and answer with data when allowed. The config node's clear-text warning for a
 * remote http:// base URL reaches the log.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { BUILT_IN_SITES } from '../src/simulator/index';
import { nodeRedDir } from './helpers/node-red-path';
import { start, type Spawned } from './helpers/spawned';

const ROOT = path.resolve(__dirname, '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const bcrypt = require('bcryptjs');

describe('admin routes under httpAdminRoot and adminAuth (real Node-RED)', function () {
  this.timeout(60_000);
  const dir = path.join(ROOT, '.test-tmp', `admin-${process.pid}`);
  let red: Spawned;
  let base = '';
  const token = async (username: string) => {
    const r = await fetch(`${base}/admin/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'node-red-editor', grant_type: 'password', scope: '', username, password: 'pw' }).toString(),
    });
    assert.equal(r.status, 200, `token for ${username}: ${r.status} ${await r.clone().text()}`);
    return ((await r.json()) as { access_token: string }).access_token;
  };
  const post = (route: string, body: object, bearer?: string) => fetch(`${base}/admin/ems-partner/${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(bearer && { authorization: `Bearer ${bearer}` }) },
    body: JSON.stringify(body),
  });

  before(async () => {
    assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'nodes', 'ems-partner-config.js')), 'dist/ is built (npm test builds first)');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const hash = bcrypt.hashSync('pw', 8);
    fs.writeFileSync(path.join(dir, 'settings.js'), `module.exports = ${JSON.stringify({
      uiHost: '127.0.0.1', flowFile: 'flows.json', credentialSecret: 'test', httpAdminRoot: '/admin', httpNodeRoot: '/api',
      nodesDir: [ROOT], telemetry: { enabled: false }, editorTheme: { tours: false },
      adminAuth: { type: 'credentials', users: [{ username: 'admin', password: hash, permissions: '*' }, { username: 'viewer', password: hash, permissions: 'read' }] },
    })};\n`);
    fs.writeFileSync(path.join(dir, 'flows.json'), JSON.stringify([
      { id: 'c0ffee0000000001', type: 'ems-partner-config', name: 'sandbox', simulator: true },
      { id: 'c0ffee0000000002', type: 'ems-partner-config', name: 'remote', simulator: false, baseUrl: 'http://ems.example.com/v1' },
    ]));
    red = start(process.execPath, [path.join(nodeRedDir, 'red.js'), '-p', '0', '-u', dir, '-s', path.join(dir, 'settings.js')], { cwd: dir, env: { ...process.env } });
    base = (await red.waitFor(/Server now running at (http:\/\/127\.0\.0\.1:\d+)\//, 60_000))[1];
    await red.waitFor(/Started flows/, 30_000);
  });

  after(async () => {
    await red?.stop('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a request without a token', async () => {
    const r = await post('devices', { server: 'c0ffee0000000001' });
    assert.equal(r.status, 401);
  });

  it('lists devices and sites under /admin for a user who may read', async () => {
    const t = await token('viewer');
    const devices = await post('devices', { server: 'c0ffee0000000001' }, t);
    assert.equal(devices.status, 200);
    const list = (await devices.json()) as Array<{ deviceReference: string; properties: unknown[] }>;
    // The built-in simulator: the default sites and the steering examples' own, three devices each.
    assert.equal(list.length, 3 * BUILT_IN_SITES.length);
    assert.ok(list.every((d) => /^dvc_/.test(d.deviceReference) && d.properties.length > 0));
    const sites = (await (await post('sites', { server: 'c0ffee0000000001' }, t)).json()) as unknown[];
    assert.equal(sites.length, BUILT_IN_SITES.length);
  });

  it('keeps "test connection" to users who may write', async () => {
    assert.ok([401, 403].includes((await post('test', { server: 'c0ffee0000000001' }, await token('viewer'))).status));
    const r = await post('test', { server: 'c0ffee0000000001' }, await token('admin'));
    assert.equal(r.status, 200);
    assert.deepEqual(((await r.json()) as { ok: boolean }).ok, true);
  });

  it('warns in the log that a remote http:// base URL sends keys in clear text', () => {
    assert.match(red.output(), /\[ems-partner-config:remote\] baseUrl uses http:\/\/ to a remote host: keys and steering travel in clear text/);
  });
});
