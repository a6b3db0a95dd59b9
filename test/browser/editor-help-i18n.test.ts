/**
 * Browser, case 7: the help sidebar shows each node's help (the config node's too); with the
 * browser's language set to German (a second Chromium context, locale de-DE), the palette,
 * the panels' labels and the help are German.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { launch, type BrowserSession } from './lib/browser';
import { useEditor, type Session } from '../helpers/browser';
import { session } from './lib/session';
import { TYPES, cancelTrays, closeTray, dropNode, openEditor, openNode, paletteNode, showSidebar } from './lib/editor';
import { REPO } from './lib/node-red';
import { PANELS, catalogue, controlVisible, labelFor } from './lib/panels';
import { screenshot, screenshotTray } from './lib/screenshots';
import { until } from './lib/wait';
import { localeFile } from '../helpers/node-files';

const ALL = Object.keys(JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'))['node-red'].nodes);
const text = (html: string) =>
  html
    .replace(/<\/?(i|b|code|a|span)\b[^>]*>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

/** Markdown inline marks (code, bold, italics, links) and the help's guarded colons, as the text shown. */
const plain = (markdown: string) =>
  markdown
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .replace(/&#58;/g, ':')
    .replace(/\s+/g, ' ')
    .trim();

/** The first paragraph and the headings of a node's help, as text (the en-US help is markdown, made from docs/nodes/). */
function help(type: string, lang: string): { first: string; headings: string[] } {
  // the en-US help is built from docs/nodes/<node>.md into dist/ (npm run build); the German is kept in the node's folder
  const file =
    lang === 'en-US'
      ? path.join(REPO, 'dist', 'nodes', 'locales', lang, `${type}.html`)
      : localeFile(lang, type, 'html');
  const html = fs.readFileSync(file, 'utf8');
  if (/^<script type="text\/markdown"/.test(html)) {
    const blocks = html.replace(/^<script[^>]*>\n/, '').split(/\n\n+/);
    return {
      first: plain(blocks.find((block) => !/^[#<]/.test(block))!),
      headings: [...html.matchAll(/^### (.*)$/gm)].map((match) => plain(match[1])),
    };
  }
  return {
    first: text(/<p>([\s\S]*?)<\/p>/.exec(html)![1]),
    headings: [...html.matchAll(/<h3>([\s\S]*?)<\/h3>/g)].map((m) => text(m[1])),
  };
}

/** Opens a node type's help from the help sidebar's list of nodes; returns the title and the text shown. */
async function openHelp(
  page: Page,
  type: string,
  entry: string,
): Promise<{ title: string; body: string; html: string }> {
  const sidebar = await showSidebar(page, 'help');
  const label = (t: string) =>
    sidebar.locator('.red-ui-sidebar-help-toc .red-ui-treeList-label', { hasText: new RegExp(`^\\s*${t}\\s*$`) });
  const item = label(entry);
  if (!(await item.first().isVisible())) await label('@ems-partner/node-red').first().click(); // opens the package's entries
  await item.first().click();
  const title = sidebar.locator('h1.red-ui-help-title');
  await until(
    () => title.innerText(),
    (t) => t.trim() === entry,
    `the help of ${type}`,
  );
  const shown = sidebar.locator('.red-ui-help').last();
  const body = (await shown.innerText()).replace(/\s+/g, ' ');
  return { title: (await title.innerText()).trim(), body, html: await shown.innerHTML() };
}

/** A palette entry's label as one line (long labels wrap). */
async function paletteText(page: Page, type: string): Promise<string> {
  return (await paletteNode(page, type).innerText()).replace(/\s+/g, ' ').trim();
}

function entryFor(type: string, lang: string): string {
  return type === 'ems-partner-config' ? type : catalogue(type, lang).paletteLabel;
}

function assertHelp(shown: { body: string }, type: string, lang: string) {
  const helpText = help(type, lang);
  assert.ok(
    shown.body.includes(helpText.first),
    `${lang} help of ${type} shows its first paragraph "${helpText.first}"; got "${shown.body.slice(0, 200)}"`,
  );
  for (const heading of helpText.headings)
    assert.ok(shown.body.includes(heading), `${lang} help of ${type} shows the heading ${heading}`);
}

describe('browser: help and German', function () {
  this.timeout(120000);
  let editorSession: Session;
  let de: BrowserSession | undefined;

  useEditor((session) => {
    editorSession = session;
  });
  after(async function () {
    await de?.close();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && de) await cancelTrays(de.page);
  });

  for (const type of ALL) {
    it(`the help sidebar shows the help of ${type}`, async function () {
      const page = editorSession.browser.page;
      const shown = await openHelp(page, type, entryFor(type, 'en-US'));
      assertHelp(shown, type, 'en-US');
      // the property lists made from the page render as Node-RED's own, an output's inside its numbered port
      const source = fs.readFileSync(path.join(REPO, 'dist', 'nodes', 'locales', 'en-US', `${type}.html`), 'utf8');
      const lists = (html: string) => html.match(/<dl class="message-properties">/g)?.length ?? 0;
      assert.ok(lists(source) > 0, `${type}: the help lists properties`);
      assert.equal(lists(shown.html), lists(source), `${type}: every property list is shown as one`);
      assert.equal(
        /<ol class="node-ports">/.test(shown.html),
        /^1\. .*\n\n {3}<dl class="message-properties">/m.test(source),
        `${type}: outputs as numbered ports`,
      );
      assert.doesNotMatch(shown.body, /&#58;/, `${type}: colons shown as colons`);
      if (type === 'ems-site-steer') await screenshot(page.locator('#red-ui-sidebar'), 'help-ems-site-steer');
    });
  }

  it('in a German browser, the palette, the panels and the help are German', async function () {
    const nr = (await session()).nr;
    de = await launch('de-DE');
    const page = de.page;
    await openEditor(page, nr.url);
    assert.equal(await page.evaluate(() => navigator.language), 'de-DE');
    for (const type of TYPES) {
      const expected = catalogue(type, 'de').paletteLabel;
      assert.notEqual(expected, catalogue(type, 'en-US').paletteLabel);
      assert.equal(await paletteText(page, type), expected, `German palette label of ${type}`);
    }
    assert.equal(await paletteText(page, 'ems-site-steer'), 'Standort steuern');

    for (const type of TYPES) {
      const id = await dropNode(page, type, 300, 120 + 80 * TYPES.indexOf(type));
      await openNode(page, id);
      const labels = catalogue(type, 'de').label as Record<string, string>;
      const view = PANELS[type][0];
      for (const [sel, value] of Object.entries(view.set)) await page.selectOption(`#node-input-${sel}`, value);
      for (const [field, key] of view.visible) {
        assert.ok(await controlVisible(page, field), `${type}: ${field} is shown`);
        assert.equal(await labelFor(page, field), labels[key], `${type}: German label of ${field}`);
      }
      const modes = await page.locator('#node-input-mode option, #node-input-range option').allInnerTexts();
      const group = catalogue(type, 'de')[type === 'ems-time-series' ? 'range' : 'mode'] as Record<string, string>;
      assert.deepEqual(
        modes.map((m) => m.trim()),
        Object.values(group),
        `${type}: German options`,
      );
      assert.equal(
        await page.locator(`#node-input-${type === 'ems-site-steer' ? 'site' : 'device'}-status`).innerText(),
        catalogue('ems-partner-config', 'de').picker.noServer,
      );
      if (type === 'ems-site-steer') await screenshotTray(page, 'panel-ems-site-steer-de');
      await closeTray(page, 'cancel');
    }

    for (const type of ALL) assertHelp(await openHelp(page, type, entryFor(type, 'de')), type, 'de');
    assert.equal(help('ems-site-steer', 'de').headings[0], 'Eingänge');
    await screenshot(page.locator('#red-ui-sidebar'), 'help-ems-site-steer-de');
    assert.deepEqual(de.errors, []);
    assert.deepEqual(editorSession.browser.errors, []);
  });
});
