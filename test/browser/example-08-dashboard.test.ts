/**
 * Browser, "tried as a new user would": `npm start` (the demo flow and its dashboard
 * on the built-in simulator), then example 08 imported through Menu ▸ Import ▸ Examples and
 * deployed next to the demo. The example's button "Commercial: export at least 100 kW"
 * (`{upperLimit: -100}` kW), pressed on the canvas, sends grid limits; the simulator holds
 * them (battery first, then PV), and the demo's dashboard shows the Commercial site exporting
 * at least 100 kW, and its "In force on the site" names the limits. Both flows use the same
 * built-in simulator (one per Node-RED process), so the demo's reads see what the example steers. Its own demo process: nothing is left behind
 * for the other browser suites.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { DEFAULT_SITES } from '../../src/simulator';
import type { SiteState, SteeringState } from '../../src/protocol/types';
import { readExample } from '../helpers/examples';
import { colourPixels, useDemo } from '../helpers/browser';
import type { BrowserSession } from './lib/browser';
import type { Demo } from './lib/demo';
import { canvasNode, closeTray, deploy, notificationsGone, openNode, showSidebar, trayAtRest } from './lib/editor';
import { conflictNotification, importExample } from './lib/import';
import { REPO, getJson } from './lib/node-red';
import { screenshot, screenshotTray } from './lib/screenshots';
import { until } from './lib/wait';

const MODULE = '@ems-partner/node-red';
const FILE = '08 Grid limits - hold the grid power within bounds.json';
const EXAMPLE = readExample(FILE);
const DEMO = JSON.parse(fs.readFileSync(path.join(REPO, 'demo', 'flow.json'), 'utf8')) as any[];
const site = DEFAULT_SITES[0];
/** "always export at least 100 kW": the grid power stays at or below −100 kW. */
const UPPER_W = -100_000;
/** The chart's first series colour in demo/flow.json. */
const CHART_COLOUR = [0x00, 0x95, 0xff];

/** The example's node by name (exactly one). */
function exampleNode(name: string): any {
  const found = EXAMPLE.filter((n) => n.name === name);
  assert.equal(found.length, 1, `one node named "${name}" in example 08`);
  return found[0];
}

/** The id of the demo's ui-text with this label in a dashboard group, by the group's name. */
function demoText(group: string, label: string): string {
  const groupId = DEMO.find((n) => n.type === 'ui-group' && n.name === group)?.id;
  const found = DEMO.filter((n) => n.type === 'ui-text' && n.group === groupId && n.label === label);
  assert.equal(found.length, 1, `one "${label}" text in the ${group} group of demo/flow.json`);
  return found[0].id;
}

/** A dashboard text "123.4 kW export" / "5 kW import" / "0 kW" as signed W (+ import, − export). */
function gridShown(text: string): number | undefined {
  const match = /(-?[\d,]+(?:\.\d+)?) kW\s*(import|export)?\s*$/.exec(text.trim());
  if (!match) return undefined;
  const kw = Number(match[1].replace(/,/g, ''));
  return (match[2] === 'export' ? -kw : kw) * 1000;
}

describe("browser: example 08 imported into npm start holds the Commercial site's grid power within the limits", function () {
  this.timeout(180000);
  let demo: Demo | undefined;
  let browser: BrowserSession | undefined;
  let page: Page;
  const button = exampleNode('Commercial: export at least 100 kW');
  const steer = exampleNode('Commercial grid limits (5 min)');
  const check = exampleNode('within the limits?');
  const steering = () => getJson<SteeringState>(`${demo!.simUrl}/sites/${site.siteReference}/steering`);
  const state = () => getJson<SiteState>(`${demo!.simUrl}/sites/${site.siteReference}/state`);
  const status = (id: string) =>
    canvasNode(page, id)
      .locator('.red-ui-flow-node-status-label')
      .textContent()
      .then((t) => (t ?? '').trim());

  before(async function () {
    // The example steers the site the demo reads: they must agree on it.
    assert.equal(steer.site, site.siteReference);
    assert.equal(exampleNode('Commercial grid power').device, site.meter.deviceReference);
  });
  useDemo((d) => {
    demo = d.demo;
    browser = d.browser;
    page = d.page;
  });

  it('imports example 08 next to the demo flow (Menu ▸ Import ▸ Examples) and deploys it without a prompt', async function () {
    const outcome = await importExample(
      page,
      MODULE,
      FILE.replace(/\.json$/, ''),
      EXAMPLE.map((n) => n.id),
    );
    assert.equal(outcome, 'imported');
    assert.equal(await conflictNotification(page).count(), 0);
    await deploy(page);
    const deployed = new Set((await getJson<any[]>(`${demo!.base}/flows`)).map((n) => n.id));
    for (const n of [...DEMO, ...EXAMPLE]) assert.ok(deployed.has(n.id), `${n.name || n.type} (${n.id}) deployed`);
    // Nothing sent yet: the minute tick has no limits chosen until a button is pressed.
    assert.equal((await steering()).components.gridLimits ?? null, null);
  });

  it('the button "export at least 100 kW" sends {upperLimit: -100} kW; the simulator holds the limits in force', async function () {
    await canvasNode(page, button.id).locator('.red-ui-flow-node-button-button').click();
    const limits = await until(
      async () => (await steering()).components.gridLimits ?? null,
      (l) => l !== null,
      "grid limits in the simulator's steering state",
    );
    assert.deepEqual(limits!.requested, { upperLimit: { value: -100, unit: 'kW' } });
    assert.equal(limits!.upperW, UPPER_W, 'upper limit in force, W');
    assert.equal(limits!.lowerW, -site.grid!.maxExportW, 'lower limit in force: the contractual export limit');
    assert.ok(
      limits!.validUntil > Date.now() && limits!.validUntil <= Date.now() + 5 * 60_000 + 1000,
      'valid at most 5 minutes',
    );
    // The status says what was sent, never that it is in force.
    const sent = await until(
      () => status(steer.id),
      (t) => t.startsWith('sent'),
      "the site steer node's status",
    );
    assert.match(sent, /^sent grid ≤ [−-]100 kW until \d\d:\d\d$/);

    // The physics holds the site at or below −100 kW (W are rounded in the state).
    const held = await until(
      state,
      (x) => x.gridW <= UPPER_W + 1,
      "the Commercial site's grid power at or below -100 kW",
      20000,
    );
    assert.ok(
      Math.abs(held.loadW - held.pvW - held.batteryW - held.gridW) <= 2,
      `load - PV - battery = grid (${JSON.stringify(held)})`,
    );
    // Storage first: where the PV alone cannot make the export, the battery supplies the rest.
    if (held.pvW < held.loadW - UPPER_W)
      assert.ok(
        held.batteryW >= held.loadW - held.pvW - UPPER_W - 2,
        `the battery discharges for the export (${JSON.stringify(held)})`,
      );
    console.log(
      `    (Commercial site with the limits: load ${kw(held.loadW)}, PV ${kw(held.pvW)}, battery ${kw(held.batteryW)} (+ discharges), grid ${kw(held.gridW)}, SOC ${held.soc} %)`,
    );

    // The example's own check (grid meter every 10 s against the limits sent) turns green.
    const checked = await until(
      () => status(check.id),
      (t) => / within /.test(t),
      'the "within the limits?" status',
      30000,
    );
    const match = /^grid (-\d+) kW within – … -100 kW$/.exec(checked);
    assert.ok(match && Number(match[1]) <= -100, `status "${checked}"`);
    assert.equal(
      await canvasNode(page, check.id).locator('.red-ui-flow-node-status').getAttribute('class'),
      'red-ui-flow-node-status red-ui-flow-node-status-dot-green',
    );
    // The picture of the flow: the debug sidebar open, zoomed out (the zoom button) so the whole
    // flow fits, nothing selected (a click on the empty canvas), the notifications gone.
    await showSidebar(page, 'debug');
    await page
      .locator('#red-ui-sidebar-content .red-ui-debug-msg', { hasText: 'within' })
      .first()
      .waitFor({ state: 'visible' });
    for (let i = 0; i < 3; i++) await page.locator('#red-ui-view-zoom-out').click();
    const canvas = (await page.locator('#red-ui-workspace-chart').boundingBox())!;
    await page.mouse.click(canvas.x + canvas.width - 40, canvas.y + canvas.height - 40);
    await until(
      () => page.evaluate(() => RED.view.selection().nodes?.length ?? 0),
      (n) => n === 0,
      'nothing selected',
    );
    await notificationsGone(page);
    await screenshot(page, 'flow-grid-limits');

    // The example's site steer node as a user opens it: mode grid limits, the limits from msg.payload.
    await openNode(page, steer.id);
    assert.equal(await page.locator('#node-input-mode').inputValue(), 'grid-limits');
    assert.equal(await page.locator('#node-input-maxGridLimit').inputValue(), '1000000');
    await trayAtRest(page);
    await screenshotTray(page, 'panel-site-steer-grid-limits');
    await closeTray(page, 'cancel');
    assert.equal(await page.evaluate(() => RED.nodes.dirty()), false, 'nothing changed in the editor');
  });

  it('the dashboard shows the Commercial site exporting at least 100 kW, as the simulator measures it', async function () {
    const gridText = page.locator(`#nrdb-ui-widget-${demoText('Commercial site', 'Grid')} .nrdb-ui-text-value`);
    const batteryText = page.locator(`#nrdb-ui-widget-${demoText('Commercial site', 'Battery')} .nrdb-ui-text-value`);
    await page.goto(`${demo!.base}/dashboard`);
    await page.locator('.nrdb-ui-gauge').first().waitFor({ state: 'visible', timeout: 30000 });
    // The demo polls the battery and the grid meter every 5 s (separate reads): the values shown
    // when the page loads may predate the limits. Wait until both show what the simulator
    // measures with the limits in force (the load moves a little between two reads).
    const seen = await until(
      async () => ({ grid: await gridText.innerText(), battery: await batteryText.innerText(), sim: await state() }),
      (x) => {
        const grid = gridShown(x.grid);
        const battery = batteryShown(x.battery);
        return (
          grid !== undefined &&
          battery !== undefined &&
          grid <= UPPER_W + 50 &&
          x.sim.gridW <= UPPER_W + 1 &&
          Math.abs(grid - x.sim.gridW) <= 10_000 &&
          Math.abs(battery - x.sim.batteryW) <= 10_000
        );
      },
      "the dashboard's Commercial grid power at an export of at least 100 kW and the battery as the simulator has them",
      30000,
    );
    assert.match(seen.grid, /^[\d,.]+ kW export$/);
    assert.match(seen.battery, /^[\d,.]+ kW \(discharging\)$/);
    // The steering in force on the site, not only what the demo's own controls sent: the grid limits.
    const inForce = page.locator(
      `#nrdb-ui-widget-${demoText('Steering: Commercial site', 'In force on the site')} .nrdb-ui-text-value`,
    );
    const said = await until(
      () => inForce.innerText(),
      (t) => /grid limits -800 kW … -100 kW/.test(t),
      'the dashboard\'s "In force on the site" showing the grid limits',
      30000,
    );
    assert.match(
      said,
      /(^|· )grid limits -800 kW … -100 kW \(\+ import, − export; they win over ESS\) until \d\d:\d\d$/,
    );
    // The ten site texts (battery, PV, grid, battery energy, grid energy of each site) all have a value.
    await until(
      () => page.locator('.nrdb-ui-text-value').allInnerTexts(),
      (texts) => texts.filter((t) => t.trim() !== '').length >= 10,
      'a value in the ten site texts',
      30000,
    );
    // Still in force while the page shows it.
    assert.equal((await steering()).components.gridLimits?.upperW, UPPER_W);

    // The picture: the 7-day chart drawn too (pixels in its first series' colour, as dashboard.test.ts checks).
    const chart = DEMO.find((n) => n.type === 'ui-chart').id;
    await page.locator(`#nrdb-ui-widget-${chart}`).scrollIntoViewIfNeeded();
    await until(
      () => colourPixels(page, `#nrdb-ui-widget-${chart}`, CHART_COLOUR),
      (n) => n > 1000,
      'the 7-day series drawn on the chart',
      45000,
    );
    await page.evaluate(() => window.scrollTo(0, 0));
    // The gauges' needles swing in from 0 (a D3 transition): wait until they stand still.
    let needles = '';
    await until(
      () =>
        page
          .locator('.nrdb-ui-gauge [style*="rotate("]')
          .evaluateAll((els) => els.map((e) => (e as HTMLElement).style.transform).join('|')),
      (t) => {
        const still = t !== '' && t === needles;
        needles = t;
        return still;
      },
      "the gauges' needles at rest",
    );
    await screenshot(page, 'dashboard-grid-limits', { fullPage: true });
    // Dashboard 2's gauge may draw once before its box has a size (see dashboard.test.ts).
    const firstPaint = /^console: Error: <rect> attribute (width|height): A negative value is not valid/;
    assert.deepEqual(
      browser!.errors.filter((e) => !firstPaint.test(e)),
      [],
    );
    assert.doesNotMatch(demo!.output(), /Uncaught|unhandled/i);
  });
});

/** A dashboard text "345.7 kW (discharging)" as signed W (+ discharges, − charges). */
function batteryShown(text: string): number | undefined {
  const match = /^(-?[\d,]+(?:\.\d+)?) kW \(/.exec(text.trim());
  return match ? Number(match[1].replace(/,/g, '')) * 1000 : undefined;
}

function kw(w: number): string {
  return `${(w / 1000).toFixed(1)} kW`;
}
