/**
 * Screenshots of the steps the browser tests check. With EMS_SCREENSHOTS=1 (scripts/screenshots.js)
 * they go to docs/images/, where the README links them; otherwise to .test-tmp/browser-screenshots/,
 * so a normal test run never changes tracked files.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { REPO, TMP } from './node-red';
import { trayAtRest } from './editor';

export const SCREENSHOT_DIR =
  process.env.EMS_SCREENSHOTS === '1' ? path.join(REPO, 'docs', 'images') : path.join(TMP, 'browser-screenshots');

/** Saves a PNG of a page or an element as <name>.png; returns its path. */
export async function screenshot(
  target: Page | Locator,
  name: string,
  opts: { fullPage?: boolean } = {},
): Promise<string> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  // Transient notifications ("Successfully deployed") would cover the top of the picture.
  const style = '#red-ui-notifications { display: none !important; }';
  if ('goto' in target) await target.screenshot({ path: file, animations: 'disabled', style, fullPage: opts.fullPage });
  else await target.screenshot({ path: file, animations: 'disabled', style });
  return file;
}

/** Saves the open edit tray, cut below its last visible form row (the tray itself fills the window height). */
export async function screenshotTray(page: Page, name: string): Promise<string> {
  await trayAtRest(page); // the tray slides in: a picture taken mid-slide is cut at its left edge
  const tray = page.locator('.red-ui-tray').last();
  const box = await tray.boundingBox();
  // The last row shown whole: a form taller than the tray scrolls, and a row cut by the tray's footer is left out.
  const bottom = await tray.locator('.red-ui-tray-body .form-row, .red-ui-tray-body .form-tips').evaluateAll((els) => {
    const content = els[0]?.closest('.red-ui-tray-content') ?? els[0]?.closest('.red-ui-tray-body-wrapper');
    const visible = content ? content.getBoundingClientRect().bottom : Infinity;
    return Math.max(
      0,
      ...els
        .filter((e) => (e as HTMLElement).offsetParent)
        .map((e) => e.getBoundingClientRect().bottom)
        .filter((b) => b <= visible + 1),
    );
  });
  if (!box || !bottom) return screenshot(tray, name);
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  const height = Math.min(box.height, bottom - box.y + 16);
  await page.screenshot({
    path: file,
    animations: 'disabled',
    clip: { x: box.x, y: box.y, width: box.width, height },
    style: '#red-ui-notifications { display: none !important; }',
  });
  return file;
}
