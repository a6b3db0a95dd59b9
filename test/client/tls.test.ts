/**
 * Transport safety: TLS verification is on unless turned off, and custom CA certificates can
 * be given (as PEM text, or as a file path through the config node's caCert).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { ApiError, EmsClient } from '../../src/client';
import { isInsecureRemote } from '../../src/runtime/runtime';

const dir = path.join(__dirname, '..', 'fixtures', 'tls');
const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');

describe('client: TLS', () => {
  let server: https.Server;
  let url: string;
  before(async () => {
    server = https.createServer({ key: read('server-key.pem'), cert: read('server.pem') }, (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ devices: [{ deviceReference: 'dvc_19RnB3Lyjv2T', properties: { soc: '%' } }] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('refuses a certificate it cannot verify', async () => {
    const client = new EmsClient({ baseUrl: url, retries: 0 });
    await assert.rejects(
      client.listDevices(),
      (e: unknown) =>
        e instanceof ApiError &&
        /connection to 127\.0\.0\.1:\d+ failed \((SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO)/.test(e.message),
    );
    client.close();
  });

  it('trusts a custom CA', async () => {
    const client = new EmsClient({ baseUrl: url, ca: read('ca.pem') });
    assert.equal((await client.listDevices())[0].deviceReference, 'dvc_19RnB3Lyjv2T');
    client.close();
  });

  it('skips verification only when told to', async () => {
    const client = new EmsClient({ baseUrl: url, rejectUnauthorized: false });
    assert.equal((await client.listDevices()).length, 1);
    client.close();
  });

  it('knows which base URLs would send keys in clear text', () => {
    assert.equal(isInsecureRemote('http://api.example.com/v1'), true);
    assert.equal(isInsecureRemote('http://10.0.0.5:8080'), true);
    for (const ok of ['https://api.example.com', 'http://127.0.0.1:8787', 'http://localhost:1880', 'http://[::1]:80'])
      assert.equal(isInsecureRemote(ok), false, ok);
  });
});
