/**
 * Browser: the config node's "Endpoints" section (collapsed unless a setting differs
 * from its default; the defaults as placeholders; a bad path marked with the runtime's own
 * message) and the `ems-request` node's panel (in the palette with its icon; method GET by
 * default; a path that could leave the base URL marked with the runtime's message). A flow
 * with bad paths deployed to a real Node-RED: the runtime refuses with the message the editor
 * shows. Needs `npm run build` (resources/paths.js, resources/request-path.js).
 */
import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { validatePath } from '../../src/protocol/paths';
import { checkRequestPath } from '../../src/client/request-path';
import { useEditor, type Session } from '../helpers/browser';
import { closeTray, dropNode, openNode, editNode, openServerEdit, paletteNode } from './lib/editor';
import { setFlows } from './lib/node-red';
import { catalogue } from './lib/panels';
import { until } from './lib/wait';
import { screenshotTray } from './lib/screenshots';

const CONFIG = 'ems-partner-config';
const configLabels = catalogue(CONFIG).label;
const requestLabels = catalogue('ems-request').label;

/** The runtime's refusal of a value, without the field's name (the editor puts the label first). */
function refusal(fn: () => unknown, field: string): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message.slice(field.length + 1);
  }
  throw new Error('accepted');
}

describe('browser: config node endpoints and the ems-request node', function () {
  this.timeout(120000);
  let editorSession: Session;
  let page: Page;

  useEditor((session) => {
    editorSession = session;
    page = session.browser.page;
  });

  it("ems-request is in the palette with its icon; its panel: method GET, a path that leaves the base URL is marked with the runtime's text", async () => {
    const entry = paletteNode(page, 'ems-request');
    assert.equal((await entry.innerText()).trim(), catalogue('ems-request').paletteLabel);
    assert.match(
      await entry.locator('.red-ui-palette-icon').evaluate((e) => (e as HTMLElement).style.backgroundImage),
      /icons\/@ems-partner\/node-red\/ems-request\.svg/,
    );
    const id = await dropNode(page, 'ems-request', 300, 150);
    await openNode(page, id);
    assert.equal(await page.locator('#node-input-method').inputValue(), 'GET');
    const input = page.locator('#node-input-path');
    for (const [v, bad] of [
      ['//evil.example/x', true],
      ['/devices?x=1', false],
      ['/%2e%2e/admin', true],
      ['', false],
    ] as const) {
      await input.fill(v);
      await input.press('Tab');
      assert.equal(await input.evaluate((e) => e.classList.contains('input-error')), bad, `"${v}"`);
    }
    await input.fill('/devices/dvc_19RnB3Lyjv2T/measurement?property=soc');
    await screenshotTray(page, 'request-panel');
    await input.fill('/a/../b');
    await closeTray(page, 'ok');
    const errors = await page.evaluate((id) => RED.nodes.node(id).validationErrors ?? [], id);
    assert.ok(
      errors.includes(`${requestLabels.path}: ${refusal(() => checkRequestPath('/a/../b', 'path'), 'path')}`),
      JSON.stringify(errors),
    );
  });

  it("Endpoints: collapsed by default, the defaults as placeholders, a bad path marked with the runtime's message; opens by itself when set", async () => {
    await setFlows(editorSession.nr, [
      { id: 'tab', type: 'tab', label: 'paths' },
      { id: 'cfg-ok', type: CONFIG, simulator: true, version: 3, percentCurtailment: 'convert' },
      {
        id: 'cfg-bad',
        type: CONFIG,
        simulator: true,
        version: 3,
        percentCurtailment: 'convert',
        pathCurtailment: '/sites/x/curtail',
      },
      {
        id: 'r1',
        type: 'ems-request',
        z: 'tab',
        x: 200,
        y: 80,
        server: 'cfg-ok',
        method: 'GET',
        path: '/devices',
        wires: [],
      },
      {
        id: 'r2',
        type: 'ems-request',
        z: 'tab',
        x: 200,
        y: 160,
        server: 'cfg-bad',
        method: 'GET',
        path: '/devices',
        wires: [],
      },
    ]);
    await page.reload();
    await page.waitForFunction(() => typeof RED !== 'undefined' && RED.nodes?.node?.('cfg-bad'));
    const bad = await page.evaluate(() => RED.nodes.node('cfg-bad').validationErrors ?? []);
    assert.deepEqual(bad, [
      `${configLabels.pathCurtailment}: ${refusal(() => validatePath('curtailment', '/sites/x/curtail'), 'pathCurtailment')}`,
    ]);
    // The runtime refused the same value at deploy, with the same words.
    await until(
      async () => editorSession.nr.log(),
      (l) => /pathCurtailment must be /.test(l),
      "the runtime's refusal in the log",
    );
    assert.ok(
      editorSession.nr
        .log()
        .includes(
          `pathCurtailment ${refusal(() => validatePath('curtailment', '/sites/x/curtail'), 'pathCurtailment')}`,
        ),
    );

    for (const [user, cfg, open] of [
      ['r1', 'cfg-ok', false],
      ['r2', 'cfg-bad', true],
    ] as const) {
      await editNode(page, user);
      await openServerEdit(page);
      assert.equal(
        await page.locator('#node-config-endpoints').isVisible(),
        open,
        `${cfg}: Endpoints ${open ? 'open' : 'collapsed'}`,
      );
      if (!open) {
        await page.locator('#node-config-endpoints-toggle').click();
        assert.equal(await page.locator('#node-config-endpoints').isVisible(), true);
        assert.deepEqual(
          await page.evaluate(() =>
            ['pathDevices', 'pathSites', 'pathCurtailment', 'pathGridLimits'].map((p) =>
              $(`#node-config-input-${p}`).attr('placeholder'),
            ),
          ),
          ['/devices', '/sites', '/sites/<site>/steering/curtailment', '/sites/<site>/steering/grid-limits'],
        );
        assert.equal(await page.locator('#node-config-input-percentCurtailment').inputValue(), 'convert');
        const devices = page.locator('#node-config-input-pathDevices');
        await devices.fill('http://evil.example/devices');
        await devices.press('Tab');
        assert.equal(await devices.evaluate((e) => e.classList.contains('input-error')), true);
        await devices.fill('/inventory/devices');
        await devices.press('Tab');
        assert.equal(await devices.evaluate((e) => e.classList.contains('input-error')), false);
        await page.locator('#node-config-endpoints').scrollIntoViewIfNeeded();
        await screenshotTray(page, 'config-endpoints');
      }
      await closeTray(page, 'cancel');
      await closeTray(page, 'cancel');
      assert.ok(cfg);
    }
    assert.deepEqual(editorSession.browser.errors, []);
  });
});
