/**
 * A real Chromium for the browser tests: /usr/bin/chromium when the system has one,
 * otherwise the binary of the npm package @sparticuz/chromium (unpacked to the temp dir on
 * first use), driven by playwright-core. One persistent context per language.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { TMP } from './node-red';

export const VIEWPORT = { width: 1400, height: 900 };

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-dev-shm-usage',
];

export async function chromiumPath(): Promise<string> {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const p of ['/usr/bin/chromium', '/usr/bin/chromium-browser']) if (fs.existsSync(p)) return p;
  const mod = require('@sparticuz/chromium');
  const sparticuz = mod.default ?? mod;
  return sparticuz.executablePath();
}

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Page errors and console errors seen so far (network noise filtered). */
  errors: string[];
  close(): Promise<void>;
}

/** Launches Chromium with the given browser language and opens one page. */
export async function launch(locale = 'en-US'): Promise<BrowserSession> {
  fs.mkdirSync(TMP, { recursive: true });
  const profile = fs.mkdtempSync(path.join(TMP, 'browser-chrome-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: await chromiumPath(),
    headless: true,
    args: ARGS,
    viewport: VIEWPORT,
    locale,
    timezoneId: 'UTC',
  });
  context.setDefaultTimeout(15000);
  // tsx compiles the test files with esbuild's keepNames, which wraps named functions inside
  // page.evaluate() callbacks in __name(...); give the page that helper.
  await context.addInitScript('window.__name = function (f) { return f; };');
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}${process.env.EMS_DEBUG ? `\n${e.stack}` : ''}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
