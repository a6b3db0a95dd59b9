/**
 * In the editor, the device read and time series panels have a maxSplit
 * field, shown only when the output is split, defaulting to 1000, and marked invalid outside
 * the runtime's range (a whole number from 1 to 100000). Needs `npm run build` (npm test does).
 */
import * as assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { useEditor } from '../helpers/browser';
import { closeTray, dropNode, openNode } from './lib/editor';

const hasError = (l: Locator) => l.evaluate((e) => e.classList.contains('input-error'));

/** Fills maxSplit with each value and checks whether the field is marked invalid. */
async function check(page: Page, cases: Array<[string, boolean]>): Promise<void> {
  const field = page.locator('#node-input-maxSplit');
  for (const [value, invalid] of cases) {
    await field.fill(value);
    await field.press('Tab');
    assert.equal(await hasError(field), invalid, `maxSplit "${value}" ${invalid ? 'is' : 'is not'} marked`);
  }
}

const RANGE: Array<[string, boolean]> = [
  ['0', true],
  ['100001', true],
  ['2.5', true],
  ['lots', true],
  ['1', false],
  ['100000', false],
  ['1000', false],
];

describe('editor: maxSplit on the read panels', function () {
  this.timeout(120_000);
  let page: Page;
  useEditor((session) => {
    page = session.browser.page;
  });

  it('device read: shown with split in map or list mode, 1000 by default, 1..100000', async () => {
    const id = await dropNode(page, 'ems-device-read', 200, 100);
    await openNode(page, id);
    const row = page.locator('#node-input-maxSplit-row');
    await page.selectOption('#node-input-mode', 'map');
    assert.equal(await page.locator('#node-input-split').isChecked(), false);
    assert.equal(await row.isVisible(), false, 'hidden without split');
    await page.locator('#node-input-split').check();
    assert.equal(await row.isVisible(), true, 'shown with split');
    assert.equal(await page.locator('#node-input-maxSplit').inputValue(), '1000');
    await check(page, RANGE);
    await page.selectOption('#node-input-mode', 'single');
    assert.equal(await row.isVisible(), false, 'hidden in mode single');
    await closeTray(page, 'cancel');
  });

  it('time series: shown with output "one message per point", 1000 by default, 1..100000', async () => {
    const id = await dropNode(page, 'ems-time-series', 200, 220);
    await openNode(page, id);
    const row = page.locator('#node-input-maxSplit-row');
    assert.equal(await page.locator('#node-input-output').inputValue(), 'points');
    assert.equal(await row.isVisible(), false, 'hidden for points');
    await page.selectOption('#node-input-output', 'split');
    assert.equal(await row.isVisible(), true, 'shown for split');
    assert.equal(await page.locator('#node-input-maxSplit').inputValue(), '1000');
    await check(page, RANGE);
    await check(page, [['0', true]]);
    await page.selectOption('#node-input-output', 'arrays');
    assert.equal(await row.isVisible(), false, 'hidden for arrays');
    await closeTray(page, 'cancel');
  });
});
