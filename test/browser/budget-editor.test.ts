/**
 * Browser, the request budget: the config panel's budget settings take their ranges from
 * the table of limits; before deploy the panel says the counts come with a deploy; after it the
 * panel shows the deployed node's counts (GET ems-partner/stats/:id), and Test connection shows
 * them next to its result, with the test's own request counted. The raw request panel hides
 * method and path in mode stats.
 */
import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { useEditor, type Session } from '../helpers/browser';
import {
  canvasNode,
  closeTray,
  configId,
  deploy,
  dropNode,
  openNode,
  openServerAdd,
  openServerEdit,
  trayAtRest,
  wire,
} from './lib/editor';
import { until } from './lib/wait';
import { catalogue } from './lib/panels';
import { SCREENSHOT_DIR } from './lib/screenshots';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LIMITS } from '../../src/protocol/limits';

const texts = catalogue('ems-partner-config');

describe('browser: request budget in the config panel', function () {
  this.timeout(120000);
  let editorSession: Session;
  let page: Page;
  let requestId: string;
  let injectId: string;

  useEditor((session) => {
    editorSession = session;
    page = session.browser.page;
  });

  it('budget settings: ranges from the table of limits, defaults no cap and refuse; counts wait for a deploy', async function () {
    requestId = await dropNode(page, 'ems-request', 300, 150);
    await openNode(page, requestId);
    await openServerAdd(page);
    for (const k of ['maxPerMinute', 'maxPerDay'] as const) {
      const input = page.locator(`#node-config-input-${k}`);
      assert.equal(await input.inputValue(), String(LIMITS[k].dflt));
      assert.equal(await input.getAttribute('min'), String(LIMITS[k].min));
      assert.equal(await input.getAttribute('max'), String(LIMITS[k].max));
    }
    assert.equal(await page.locator('#node-config-input-budgetMode').inputValue(), 'refuse');
    const counts = page.locator('#node-config-budget-counts');
    await until(
      () => counts.innerText(),
      (t) => t.trim() === texts.budget.notDeployed,
      'the not-deployed note',
    );
    await page.locator('#node-config-input-maxPerMinute').fill('100');
    await page.locator('#node-config-input-maxPerDay').fill('20000');
    await closeTray(page, 'ok');
    // The raw request's mode: stats hides method and path.
    assert.equal(await page.locator('#node-input-mode').inputValue(), 'request');
    await page.selectOption('#node-input-mode', 'stats');
    assert.equal(await page.locator('#node-input-path').isVisible(), false);
    assert.equal(await page.locator('#node-input-method').isVisible(), false);
    await page.selectOption('#node-input-mode', 'request');
    assert.equal(await page.locator('#node-input-path').isVisible(), true);
    await page.locator('#node-input-path').fill('/devices');
    await closeTray(page, 'ok');
    // An inject to send a few requests through the deployed node.
    injectId = await dropNode(page, 'inject', 120, 250);
    await wire(page, injectId, requestId);
  });

  it('after deploy the panel shows the counts, and Test connection shows them with its own request counted', async function () {
    await deploy(page);
    const id = await configId(page);
    const stats = async () =>
      (await (await page.request.get(new URL(`ems-partner/stats/${id}`, editorSession.nr.url).href)).json()) as {
        lastMinute: { sent: number };
        caps: { maxPerMinute: number; maxPerDay: number };
      };
    // A few requests through the deployed raw request node (GET /devices).
    const start = (await stats()).lastMinute.sent;
    for (let i = 0; i < 3; i++) await canvasNode(page, injectId).locator('.red-ui-flow-node-button-button').click();
    await until(stats, (x) => x.lastMinute.sent >= start + 3, 'three requests counted');
    const before = await stats();
    assert.equal(before.lastMinute.sent, start + 3);
    assert.equal(before.caps.maxPerMinute, 100);
    assert.equal(before.caps.maxPerDay, 20000);
    await openNode(page, requestId);
    await openServerEdit(page);
    const counts = page.locator('#node-config-budget-counts');
    await until(
      () => counts.innerText(),
      (t) => t.startsWith('Requests sent: '),
      'the counts under the settings',
    );
    assert.match(
      await counts.innerText(),
      new RegExp(
        `^Requests sent: ${before.lastMinute.sent} in the last minute, \\d+ in the last hour, \\d+ in the last 24 h \\(24 h: \\d+ retried, \\d+ × 429, \\d+ failed, \\d+ refused by the caps\\)$`,
      ),
    );
    await page.locator('#node-config-test-connection').click();
    const result = page.locator('#node-config-test-result');
    await until(
      () => result.innerText(),
      (t) => t.startsWith(texts.test.ok),
      'the test result',
    );
    const shown = page.locator('#node-config-test-budget');
    await until(
      () => shown.innerText(),
      (t) => t.startsWith(`Requests sent: ${before.lastMinute.sent + 1} in the last minute`),
      'the counts after the test',
    );
    assert.equal((await stats()).lastMinute.sent, before.lastMinute.sent + 1);
    await pictureOfBudget(page, 'config-budget');
    await closeTray(page, 'cancel');
    await closeTray(page, 'cancel');
    assert.deepEqual(editorSession.browser.errors, []);
  });
});

/**
 * The config tray from Test connection (its result and the counts after it) down to the budget
 * settings and their counts, as one picture: the tray scrolled so that the test row is at its top.
 */
async function pictureOfBudget(page: Page, name: string): Promise<string> {
  await trayAtRest(page);
  const tray = page.locator('.red-ui-tray').last();
  // The test row just below the top of the tray's scrolling body (not under its tab bar), the
  // counts under the budget settings above its bottom (not under the footer).
  const view = await page.locator('#node-config-test-connection').evaluate((e) => {
    let ancestor = e.parentElement;
    while (
      ancestor &&
      !(ancestor.scrollHeight > ancestor.clientHeight && /auto|scroll/.test(getComputedStyle(ancestor).overflowY))
    )
      ancestor = ancestor.parentElement;
    if (!ancestor) throw new Error('no scrolling body');
    const counts = document.getElementById('node-config-budget-counts')!;
    ancestor.scrollTop += e.getBoundingClientRect().top - ancestor.getBoundingClientRect().top - 16;
    const over = counts.getBoundingClientRect().bottom + 14 - ancestor.getBoundingClientRect().bottom;
    if (over > 0) ancestor.scrollTop += over;
    const rect = ancestor.getBoundingClientRect();
    return {
      top: Math.max(rect.top, e.getBoundingClientRect().top - 10),
      bottom: Math.min(rect.bottom, counts.getBoundingClientRect().bottom + 12),
    };
  });
  const box = (await tray.boundingBox())!;
  const testTop = (await page.locator('#node-config-test-connection').boundingBox())!.y;
  assert.ok(testTop >= view.top, 'the test row in the picture');
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({
    path: file,
    animations: 'disabled',
    clip: { x: box.x, y: view.top, width: box.width, height: view.bottom - view.top },
    style: '#red-ui-notifications { display: none !important; }',
  });
  return file;
}
