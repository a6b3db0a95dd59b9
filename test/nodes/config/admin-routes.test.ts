/**
 * The editor's admin endpoints in a real Node-RED with `httpAdminRoot` and `adminAuth`:
 * they live under the admin root, refuse requests without a token, honour read/write
 * permissions, and answer with data when allowed. The config node's clear-text warning for a
 * remote http:// base URL reaches the log.
 */
import assert from 'node:assert/strict';
import { BUILT_IN_SITES } from '../../../src/simulator/index';
import { startAdminRed, type AdminRed } from '../../helpers/admin-red';

describe('admin routes under httpAdminRoot and adminAuth (real Node-RED)', function () {
  this.timeout(60_000);
  let nr: AdminRed;
  const token = (username: string) => nr.token(username);
  const post = (route: string, body: object, bearer?: string) =>
    fetch(`${nr.base}/admin/ems-partner/${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(bearer && { authorization: `Bearer ${bearer}` }) },
      body: JSON.stringify(body),
    });

  before(async () => {
    nr = await startAdminRed('admin', {
      credentialSecret: 'test',
      users: { admin: '*', viewer: 'read' },
      flows: [
        { id: 'c0ffee0000000001', type: 'ems-partner-config', name: 'sandbox', simulator: true },
        {
          id: 'c0ffee0000000002',
          type: 'ems-partner-config',
          name: 'remote',
          simulator: false,
          baseUrl: 'http://ems.example.com/v1',
        },
      ],
    });
  });

  after(async () => {
    await nr?.stop();
  });

  it('refuses a request without a token', async () => {
    const response = await post('devices', { server: 'c0ffee0000000001' });
    assert.equal(response.status, 401);
  });

  it('lists devices and sites under /admin for a user who may read', async () => {
    const viewerToken = await token('viewer');
    const devices = await post('devices', { server: 'c0ffee0000000001' }, viewerToken);
    assert.equal(devices.status, 200);
    const list = (await devices.json()) as Array<{ deviceReference: string; properties: unknown[] }>;
    // The built-in simulator: the default sites and the steering examples' own, three devices each.
    assert.equal(list.length, 3 * BUILT_IN_SITES.length);
    assert.ok(list.every((d) => /^dvc_/.test(d.deviceReference) && d.properties.length > 0));
    const sites = (await (await post('sites', { server: 'c0ffee0000000001' }, viewerToken)).json()) as unknown[];
    assert.equal(sites.length, BUILT_IN_SITES.length);
  });

  it('keeps "test connection" to users who may write', async () => {
    assert.ok([401, 403].includes((await post('test', { server: 'c0ffee0000000001' }, await token('viewer'))).status));
    const response = await post('test', { server: 'c0ffee0000000001' }, await token('admin'));
    assert.equal(response.status, 200);
    assert.deepEqual(((await response.json()) as { ok: boolean }).ok, true);
  });

  it('warns in the log that a remote http:// base URL sends keys in clear text', () => {
    assert.match(
      nr.red.output(),
      /\[ems-partner-config:remote\] baseUrl uses http:\/\/ to a remote host: keys and steering travel in clear text/,
    );
  });
});
