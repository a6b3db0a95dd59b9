/**
 * Browser, case 4: the config node's API key and client secret are password fields, and a
 * flow exported from the editor's Export dialog (its text and its downloaded file) contains no
 * key, before and after deploy; the key never comes back to the browser.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { useEditor, type Session } from '../helpers/browser';
import {
  closeTray,
  configId,
  deploy,
  dropNode,
  openNode,
  openServerAdd,
  openServerEdit,
  typedText,
} from './lib/editor';
import { freePort } from './lib/node-red';
import { until } from './lib/wait';
import { catalogue } from './lib/panels';
import { screenshot, screenshotTray } from './lib/screenshots';

const KEY = 'sk-live-SECRET-4711-do-not-export';
const SECRET = 'oauth-client-SECRET-0815';
const DEVICE = 'dvc_aIcgt4KDesKb';
let BASE_URL = '';
const labels = catalogue('ems-partner-config').label;

/** Opens Menu > Export, all flows; returns the JSON shown and the downloaded file's text. */
async function exportAll(page: Page, shot?: string): Promise<{ shown: string; file: string }> {
  await page.locator('#red-ui-header-button-sidemenu').click();
  await page.locator('#menu-item-export').click();
  await page.locator('#red-ui-clipboard-dialog-export-rng-full').click();
  await page.locator('#red-ui-clipboard-dialog-export-fmt-full').click();
  await page.locator('a[href="#red-ui-clipboard-dialog-export-tab-clipboard-json"]').click();
  const shown = await page.locator('#red-ui-clipboard-dialog-export-text').inputValue();
  if (shot) await screenshot(page.locator('.ui-dialog', { has: page.locator('#red-ui-clipboard-dialog') }), shot);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.locator('#red-ui-clipboard-dialog-download').click(),
  ]);
  const file = fs.readFileSync(await download.path(), 'utf8');
  await download.delete();
  await page.locator('#red-ui-clipboard-dialog').waitFor({ state: 'hidden' });
  return { shown, file };
}

function assertNoSecrets(json: string, where: string) {
  assert.ok(!json.includes(KEY), `${where} contains the API key`);
  assert.ok(!json.includes(SECRET), `${where} contains the client secret`);
  const nodes = JSON.parse(json) as Array<Record<string, unknown>>;
  const config = nodes.find((n) => n.type === 'ems-partner-config');
  assert.ok(config, `${where} has the config node`);
  assert.equal(config.credentials, undefined, `${where}: no credentials on the config node`);
  assert.equal(config.authType, 'header');
  assert.equal(config.baseUrl, BASE_URL);
}

describe('browser: config node secrets', function () {
  this.timeout(120000);
  let editorSession: Session;
  let page: Page;
  let readId: string;

  useEditor(async (session) => {
    editorSession = session;
    page = session.browser.page;
    BASE_URL = `https://127.0.0.1:${await freePort()}/partner/v1`;
  });

  it('shows the API key, token and client secret as password fields, and warns about plain http', async function () {
    readId = await dropNode(page, 'ems-device-read', 300, 150);
    await openNode(page, readId);
    await openServerAdd(page);
    await page.locator('#node-config-input-simulator').uncheck();
    assert.equal(await page.locator('#node-config-service-rows').isVisible(), true);
    await page.locator('#node-config-input-baseUrl').fill('http://ems.example.com/partner/v1');
    assert.equal(
      await page.locator('#node-config-input-baseUrl-warning').isVisible(),
      true,
      'clear-text warning for a remote http URL',
    );
    await page.locator('#node-config-input-baseUrl').fill('https://ems.example.com/partner/v1');
    assert.equal(await page.locator('#node-config-input-baseUrl-warning').isVisible(), false);

    await page.selectOption('#node-config-input-authType', 'bearer');
    assert.equal((await page.locator('label[for="node-config-input-apiKey"]').innerText()).trim(), labels.token);
    assert.equal(await page.locator('#node-config-input-apiKey').getAttribute('type'), 'password');
    await page.selectOption('#node-config-input-authType', 'oauth2');
    assert.equal(await page.locator('#node-config-input-apiKey').isVisible(), false);
    assert.equal(await page.locator('#node-config-input-clientSecret').getAttribute('type'), 'password');
    await page.locator('#node-config-input-tokenUrl').fill('https://ems.example.com/oauth/token');
    await page.locator('#node-config-input-clientId').fill('partner-client');
    await page.locator('#node-config-input-clientSecret').fill(SECRET);

    await page.selectOption('#node-config-input-authType', 'header');
    assert.equal((await page.locator('label[for="node-config-input-apiKey"]').innerText()).trim(), labels.apiKey);
    const key = page.locator('#node-config-input-apiKey');
    assert.equal(await key.isVisible(), true);
    assert.equal(await key.getAttribute('type'), 'password');
    await key.fill(KEY);
    assert.equal(await page.locator('#node-config-input-apiKeyHeader').inputValue(), 'x-api-key');
    await screenshotTray(page, 'config-remote');
    // The service of this test is a closed loopback port: nothing leaves the machine.
    await page.locator('#node-config-input-baseUrl').fill(BASE_URL);
    await closeTray(page, 'ok');
    // The device picker cannot reach it, says so, and typing a reference still works.
    const status = page.locator('#node-input-device-status');
    await until(
      () => status.innerText(),
      (t) => t.startsWith('could not load devices: '),
      'the picker error',
    );
    assert.match(await status.innerText(), /\(you can still type a device reference\)$/);
    assert.equal(await status.getAttribute('class'), 'form-tips ems-partner-error');
    await typedText(page, 'node-input-device').fill(DEVICE);
    await closeTray(page, 'ok');
  });

  it('exports the flow without the key, before and after deploy', async function () {
    const before = await exportAll(page, 'export-no-key');
    assertNoSecrets(before.shown, 'the Export dialog');
    assertNoSecrets(before.file, 'the exported file');

    await deploy(page);
    const after = await exportAll(page);
    assertNoSecrets(after.shown, 'the Export dialog after deploy');
    assertNoSecrets(after.file, 'the exported file after deploy');

    // The deployed flow and the credentials route give the browser a placeholder, never the key.
    const flows = await (await page.request.get(new URL('flows', editorSession.nr.url).href)).text();
    assert.ok(!flows.includes(KEY) && !flows.includes(SECRET), 'GET /flows has no secret');
    const cid = await configId(page);
    const creds = await (
      await page.request.get(new URL(`credentials/ems-partner-config/${cid}`, editorSession.nr.url).href)
    ).json();
    assert.deepEqual(creds, { has_apiKey: true, has_clientSecret: true, has_redisPassword: false });
    // Reopened with the pencil beside Server, the key field holds no key.
    await openNode(page, readId);
    await openServerEdit(page);
    const shownKey = await page.locator('#node-config-input-apiKey').inputValue();
    assert.notEqual(shownKey, KEY);
    assert.equal(await page.locator('#node-config-input-apiKey').getAttribute('type'), 'password');
    await closeTray(page, 'cancel');
    await closeTray(page, 'cancel');
    const onDisk = fs
      .readdirSync(editorSession.nr.userDir)
      .filter((f) => f.startsWith('flows'))
      .map((f) => fs.readFileSync(`${editorSession.nr.userDir}/${f}`, 'utf8'))
      .join('\n');
    assert.ok(
      onDisk.length > 0 && !onDisk.includes(KEY) && !onDisk.includes(SECRET),
      'flows files on disk hold no secret in clear',
    );
    assert.deepEqual(editorSession.browser.errors, []);
  });

  it('Test connection: the stored key stays with its URL; an HTML 404 shows as its status, not the page', async function () {
    const hits: string[] = [];
    const server = http.createServer((req, res) => {
      hits.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end(
        '<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1><p>nginx</p></body></html>',
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const test = catalogue('ems-partner-config').test;
    const result = page.locator('#node-config-test-result');
    const run = async () => {
      await page.locator('#node-config-test-connection').click();
      await until(
        () => result.innerText(),
        (t) => t !== '' && t !== test.running,
        'the test result',
      );
      return result.innerText();
    };
    try {
      await openNode(page, readId);
      await openServerEdit(page);
      await page
        .locator('#node-config-input-baseUrl')
        .fill(`http://127.0.0.1:${(server.address() as AddressInfo).port}/partner/v1`);
      // Another URL without the key typed again: refused, nothing sent.
      assert.equal(
        await run(),
        test.failed.replace(
          '__error__',
          'the stored API key is used only with the deployed baseUrl; type it to try these settings',
        ),
      );
      assert.equal(hits.length, 0, 'nothing sent');
      await page.selectOption('#node-config-input-authType', 'none');
      assert.equal(await run(), test.failed.replace('__error__', 'GET /devices failed: HTTP 404 (Not Found)'));
      assert.equal(await result.getAttribute('class'), 'ems-partner-error');
      assert.equal(hits.length, 1);
      assert.ok(!hits[0].includes(KEY));
      await closeTray(page, 'cancel');
      await closeTray(page, 'cancel');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    assert.deepEqual(editorSession.browser.errors, []);
  });
});
