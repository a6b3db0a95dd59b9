/**
 * Browser, cases 1 and 2: the palette shows the three flow nodes under "EMS partner" with
 * their icons and labels; dropping each one and opening it shows every field of its panel,
 * with the unit dropdowns the API accepts.
 */
import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { useEditor, type Session } from '../helpers/browser';
import { TYPES, closeTray, dropNode, openNode, options, paletteNode } from './lib/editor';
import { PANELS, catalogue, controlVisible, labelFor } from './lib/panels';
import { screenshot, screenshotTray } from './lib/screenshots';

/** The settings each panel is photographed with. */
const SHOWN: Record<string, Record<string, string>> = {
  'ems-device-read': { mode: 'map' },
  'ems-time-series': { range: 'last' },
  'ems-site-steer': { mode: 'combined', validity: 'quarter-hour' },
};

describe('browser: palette and edit panels', function () {
  this.timeout(120000);
  let editorSession: Session;
  let page: Page;

  useEditor((session) => {
    editorSession = session;
    page = session.browser.page;
  });

  it('lists device read, time series and site steer under "EMS partner", each with its icon', async function () {
    const category = page.locator('.red-ui-palette-category', { has: paletteNode(page, 'ems-site-steer') });
    assert.equal((await category.locator('.red-ui-palette-header').innerText()).trim(), 'EMS partner');
    const shown = await category.locator('.red-ui-palette-node').evaluateAll((els) =>
      els.map((e) => ({
        type: e.getAttribute('data-palette-type'),
        label: (e as HTMLElement).innerText.trim(),
        icon: (e.querySelector('.red-ui-palette-icon') as HTMLElement | null)?.style.backgroundImage ?? '',
      })),
    );
    assert.deepEqual(
      shown.map((n) => [n.type, n.label]),
      [
        ['ems-device-read', 'device read'],
        ['ems-time-series', 'time series'],
        ['ems-site-steer', 'site steer'],
        ['ems-schedule', 'schedule'],
        ['ems-plan', 'price plan'],
        ['ems-request', 'raw request'],
      ],
    );
    for (const n of shown) {
      const match = /url\("?([^")]+)"?\)/.exec(n.icon);
      assert.ok(match, `${n.type} has an icon: ${n.icon}`);
      assert.equal(match[1], `icons/@ems-partner/node-red/${n.type}.svg`);
      const res = await page.request.get(new URL(match[1], editorSession.nr.url).href);
      assert.equal(res.status(), 200, `${match[1]} is served`);
      assert.match(res.headers()['content-type'] ?? '', /image\/svg\+xml/);
      assert.match(await res.text(), /<svg[\s>]/);
    }
    // The config node is not in the palette.
    assert.equal(await paletteNode(page, 'ems-partner-config').count(), 0);
    await screenshot(category, 'palette');
  });

  for (const type of TYPES) {
    it(`${type}: dropped and opened, shows every field of its panel`, async function () {
      const id = await dropNode(page, type, 300, 120 + 80 * TYPES.indexOf(type));
      await openNode(page, id);
      const labels = catalogue(type).label as Record<string, string>;
      const tray = page.locator('.red-ui-tray').last();
      assert.equal(
        await tray.locator('.red-ui-tray-titlebar').innerText(),
        `Edit ${catalogue(type).paletteLabel} node`,
      );
      for (const view of PANELS[type]) {
        for (const [sel, value] of Object.entries(view.set)) await page.selectOption(`#node-input-${sel}`, value);
        for (const [field, key] of view.visible) {
          assert.ok(await controlVisible(page, field), `${type} ${JSON.stringify(view.set)}: ${field} is shown`);
          assert.equal(await labelFor(page, field), labels[key], `${type}: label of ${field}`);
        }
        for (const field of view.hidden ?? []) {
          assert.equal(
            await controlVisible(page, field),
            false,
            `${type} ${JSON.stringify(view.set)}: ${field} is hidden`,
          );
        }
      }
      // No raw message key anywhere in the panel.
      const text = await tray.locator('.red-ui-tray-body').innerText();
      assert.doesNotMatch(text, /ems-[a-z-]+\.[a-zA-Z]+\.[a-zA-Z]/);
      // With no server yet, the pickers say how to get their lists.
      const status = type === 'ems-site-steer' ? 'site' : 'device';
      assert.equal(
        await page.locator(`#node-input-${status}-status`).innerText(),
        catalogue('ems-partner-config').picker.noServer,
      );
      for (const [sel, value] of Object.entries(SHOWN[type])) await page.selectOption(`#node-input-${sel}`, value);
      await screenshotTray(page, `panel-${type}`);
      await closeTray(page, 'cancel');
    });
  }

  it('site steer: ESS and grid-target units are exactly W, kW, MW; curtailment W, kW, MW, %', async function () {
    const id = await dropNode(page, 'ems-site-steer', 500, 400);
    await openNode(page, id);
    const units = async (sel: string) => (await options(page, `#node-input-${sel}`)).map((o) => [o.value, o.label]);
    const power = [
      ['W', 'W'],
      ['kW', 'kW'],
      ['MW', 'MW'],
    ];
    await page.selectOption('#node-input-mode', 'combined');
    assert.deepEqual(await units('essUnit'), power);
    assert.deepEqual(await units('curtailmentUnit'), [...power, ['%', '%']]);
    await page.selectOption('#node-input-mode', 'grid-target');
    assert.deepEqual(await units('gridTargetUnit'), power);
    assert.deepEqual(await units('deadbandUnit'), power);
    // The default unit is kW, and the dropdown shows it.
    assert.equal(await page.locator('#node-input-gridTargetUnit').inputValue(), 'kW');
    await closeTray(page, 'cancel');
    assert.deepEqual(editorSession.browser.errors, []);
  });
});
