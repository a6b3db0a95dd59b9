/**
 * Browser, cases 5 and 6: a flow built in the editor (inject -> site steer -> debug) deploys;
 * the inject button changes the simulator's steering state, the node's status shows what is
 * in force, and the debug sidebar shows the response with its requestId. Bad values are
 * marked in the panel; bad messages give a clear error in the debug sidebar and Node-RED
 * keeps running.
 */
import * as assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { DEFAULT_SITES } from '../../src/simulator';
import { useEditor, type Session } from '../helpers/browser';
import {
  canvasNode,
  chooseType,
  closeTray,
  deploy,
  dropNode,
  openNode,
  openServerAdd,
  options,
  setInjectPayload,
  showSidebar,
  typedContainer,
  typedText,
  wire,
} from './lib/editor';
import { getJson } from './lib/node-red';
import { screenshot, screenshotTray } from './lib/screenshots';
import { until } from './lib/wait';

const site = DEFAULT_SITES[0];

interface Component {
  value: number;
  unit?: string;
  validUntil: string | number;
}
interface Steering {
  components: { energyStorageSetting: Component | null };
}

const hasError = (l: Locator) => l.evaluate((e) => e.classList.contains('input-error'));

describe('browser: a steering flow built in the editor', function () {
  this.timeout(120000);
  let editorSession: Session;
  let page: Page;
  const id: Record<string, string> = {};

  const ess = () =>
    getJson<Steering>(`${editorSession.nr.simUrl}/sites/${site.siteReference}/steering`).then(
      (r) => r.components.energyStorageSetting,
    );
  const status = (node: string) =>
    canvasNode(page, node)
      .locator('.red-ui-flow-node-status-label')
      .textContent()
      .then((t) => (t ?? '').trim());
  const debugMessages = () => page.locator('#red-ui-sidebar-content .red-ui-debug-msg');
  async function inject(node: string) {
    await canvasNode(page, node).locator('.red-ui-flow-node-button-button').click();
  }

  useEditor((session) => {
    editorSession = session;
    page = session.browser.page;
  });

  it('builds inject -> site steer -> debug, deploys, and the inject button steers the simulated battery', async function () {
    id.inject = await dropNode(page, 'inject', 140, 100);
    id.steer = await dropNode(page, 'ems-site-steer', 380, 100);
    id.debug = await dropNode(page, 'debug', 640, 100);
    await wire(page, id.inject, id.steer);
    await wire(page, id.steer, id.debug);

    await openNode(page, id.steer);
    await openServerAdd(page);
    await closeTray(page, 'ok');
    await until(
      () => options(page, '#node-input-site-picker'),
      (o) => o.length > DEFAULT_SITES.length,
      'the site list',
    );
    await page.selectOption('#node-input-site-picker', site.siteReference);
    // Limits are on from the start: the ESS limit is empty, and its placeholder says what that is for this site.
    assert.equal(await page.locator('#node-input-maxEssPower').inputValue(), '');
    await until(
      () => page.locator('#node-input-maxEssPower').getAttribute('placeholder'),
      (p) => p === `site's rating: \u00b1${site.battery.maxPowerW} W`,
      "the ESS limit's placeholder",
    );
    assert.equal(
      await page.locator('#node-input-maxGridPower').getAttribute('placeholder'),
      `site's rating: ${-site.grid!.maxExportW} \u2026 ${site.grid!.maxImportW} W`,
    );
    assert.equal(await page.locator('#node-input-mode').inputValue(), 'ess');
    assert.equal(await typedText(page, 'node-input-essValue').inputValue(), 'payload');
    assert.equal(await page.locator('#node-input-essUnit').inputValue(), 'kW');
    await closeTray(page, 'ok');

    await openNode(page, id.inject);
    await setInjectPayload(page, 'number', '5');
    await closeTray(page, 'ok');

    assert.equal(await ess(), null, 'nothing steered before the inject');
    await deploy(page);
    await showSidebar(page, 'debug');
    await inject(id.inject);

    const stored = await until(ess, (c) => c !== null, 'the steering state of the simulator');
    assert.deepEqual([stored!.value, stored!.unit], [5, 'kW']);
    const until$ = new Date(stored!.validUntil).toISOString().slice(11, 16); // Node-RED runs in UTC here
    await until(
      () => status(id.steer),
      (t) => t.startsWith('sent ESS'),
      'the steer node status',
    );
    assert.equal(await status(id.steer), `sent ESS 5 kW until ${until$}`);
    assert.equal(
      await canvasNode(page, id.steer).locator('.red-ui-flow-node-status').getAttribute('class'),
      'red-ui-flow-node-status red-ui-flow-node-status-dot-green',
    );

    const msg = debugMessages().filter({ hasText: 'requestId' });
    await msg.first().waitFor({ state: 'visible' });
    const text = await msg.first().innerText();
    assert.match(text, /msg\.payload : Object/);
    assert.match(text, /requestId: "[^"]+"/);
    await screenshot(page, 'flow-steer-debug');
  });

  it('marks a letter in a number field and a unit the API lacks as invalid in the panel', async function () {
    await openNode(page, id.steer);
    await chooseType(page, 'node-input-essValue', 'number');
    const essText = typedText(page, 'node-input-essValue');
    await essText.fill('5a');
    await essText.press('Tab');
    assert.equal(await hasError(typedContainer(page, 'node-input-essValue')), true, 'ESS power "5a" is marked');
    await essText.fill('-3.5');
    await essText.press('Tab');
    assert.equal(await hasError(typedContainer(page, 'node-input-essValue')), false, 'ESS power -3.5 is fine');
    await page.locator('#node-input-maxEssPower').fill('1e');
    await page.locator('#node-input-maxEssPower').press('Tab');
    assert.equal(await hasError(page.locator('#node-input-maxEssPower')), true, 'ESS limit "1e" is marked');
    // 0 no longer means "no limit" (limits are on by default): refused; empty (the site's rating) and "none" are fine.
    await page.locator('#node-input-maxEssPower').fill('0');
    await page.locator('#node-input-maxEssPower').press('Tab');
    assert.equal(await hasError(page.locator('#node-input-maxEssPower')), true, 'ESS limit 0 is marked');
    for (const v of ['', 'none', '500000']) {
      await page.locator('#node-input-maxEssPower').fill(v);
      await page.locator('#node-input-maxEssPower').press('Tab');
      assert.equal(await hasError(page.locator('#node-input-maxEssPower')), false, `ESS limit "${v}" is fine`);
    }
    await page.selectOption('#node-input-validity', 'duration');
    await page.locator('#node-input-duration').fill('abc');
    await page.locator('#node-input-duration').press('Tab');
    assert.equal(await hasError(page.locator('#node-input-duration')), true, 'duration "abc" is marked');
    await essText.fill('5a');
    await essText.press('Tab');
    await screenshotTray(page, 'steer-invalid-values');
    await closeTray(page, 'cancel');

    // A flow whose node holds a unit the API does not have (hand-written JSON), imported with Menu > Import.
    const flow = [
      {
        id: 'badunit00000001',
        type: 'ems-site-steer',
        name: 'bad unit',
        server: '',
        site: site.siteReference,
        siteType: 'str',
        mode: 'ess',
        essValue: '5',
        essValueType: 'num',
        essUnit: 'GW',
        x: 380,
        y: 300,
        wires: [[]],
      },
    ];
    await page.locator('#red-ui-header-button-sidemenu').click();
    await page.locator('#menu-item-import').click();
    await page.locator('#red-ui-clipboard-dialog-import-text').fill(JSON.stringify(flow));
    await page.locator('#red-ui-clipboard-dialog-import-text').press('End'); // the dialog checks the JSON on keyup
    await page.locator('#red-ui-clipboard-dialog-ok').click();
    await page.mouse.click(560, 420); // imported nodes follow the mouse until placed
    const node = canvasNode(page, 'badunit00000001');
    await node.waitFor({ state: 'visible' });
    assert.equal(await node.locator('.red-ui-flow-node-error').isVisible(), true, 'the canvas marks the node invalid');
    await openNode(page, 'badunit00000001');
    const unit = page.locator('#node-input-essUnit');
    assert.equal(await hasError(unit), true, 'the unit dropdown is marked');
    assert.deepEqual(
      (await options(page, '#node-input-essUnit')).map((o) => o.value),
      ['W', 'kW', 'MW'],
    );
    const errs = await page.evaluate(() => RED.nodes.node('badunit00000001').validationErrors);
    assert.ok(
      errs.includes('ESS power: must be one of W, kW, MW'),
      `validation errors ${JSON.stringify(errs)} name the unit field`,
    );
    await page.selectOption('#node-input-essUnit', 'MW');
    assert.equal(await hasError(unit), false, 'a listed unit clears the mark');
    await closeTray(page, 'cancel');
    await canvasNode(page, 'badunit00000001').locator('rect.red-ui-flow-node').click();
    await page.keyboard.press('Delete');
    await until(
      () => node.count(),
      (n) => n === 0,
      'the imported node to be deleted',
    );
  });

  it('shows a clear error in the debug sidebar for bad messages, and Node-RED keeps running', async function () {
    id.badUnit = await dropNode(page, 'inject', 140, 180);
    id.badNumber = await dropNode(page, 'inject', 140, 260);
    await wire(page, id.badUnit, id.steer);
    await wire(page, id.badNumber, id.steer);
    await openNode(page, id.badUnit);
    await setInjectPayload(page, 'JSON', JSON.stringify({ energyStorage: { value: 5, unit: 'GW' } }));
    await closeTray(page, 'ok');
    await openNode(page, id.badNumber);
    await setInjectPayload(page, 'string', '5a');
    await closeTray(page, 'ok');
    await deploy(page);
    await page.locator('#red-ui-sidebar-debug-clear').click();

    const errorMsgs = debugMessages().and(page.locator('.red-ui-debug-msg-level-20'));
    await inject(id.badUnit);
    await until(
      () => errorMsgs.count(),
      (n) => n === 1,
      'an error in the debug sidebar',
    );
    // Node-RED shows an Error as an object; opened, it reads in full.
    await errorMsgs.first().locator('.red-ui-debug-msg-expandable').first().click();
    const unitErr = await errorMsgs.first().innerText();
    assert.match(unitErr, /msg : error/);
    assert.match(unitErr, /message: "energyStorage\.unit must be one of W, kW, MW; got .GW."/);
    await until(
      () => status(id.steer),
      (t) => t === 'bad energyStorage.unit',
      'the error status',
    );

    await inject(id.badNumber);
    await until(
      () => errorMsgs.count(),
      (n) => n === 2,
      'a second error in the debug sidebar',
    );
    await errorMsgs.nth(1).locator('.red-ui-debug-msg-expandable').first().click();
    assert.match(
      await errorMsgs.nth(1).innerText(),
      /message: "energyStorage must be a finite number \(or numeric string\); got .5a."/,
    );
    await screenshot(page, 'flow-bad-message');

    // Still running: the good inject steers again and the status is green.
    assert.equal(editorSession.nr.alive(), true);
    await inject(id.inject);
    await until(
      () => status(id.steer),
      (t) => t.startsWith('sent ESS 5 kW until'),
      'the status after a good message',
    );
    await until(
      () => debugMessages().filter({ hasText: 'requestId' }).count(),
      (n) => n === 1,
      'the response in the debug sidebar',
    );
    assert.equal((await ess())?.value, 5);
    assert.doesNotMatch(editorSession.nr.log(), /Uncaught|unhandled|TypeError/i);
    assert.deepEqual(editorSession.browser.errors, []);
  });
});
