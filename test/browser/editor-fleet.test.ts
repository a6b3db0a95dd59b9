/**
 * Browser, fleets: the site steer panel's Sites field (`sites`) takes a list of
 * references or a JSON array of {site, maxPowerW, soc}; a site twice or bad JSON marks the field
 * and says why; mode portfolio shows the split (rating / soc); a fleet needs no single site. The
 * portfolio node deploys and, in a dry run, splits a total over the listed sites. The runtime
 * refuses at deploy what the editor marks. The device read panel takes a JSON list of devices
 * (a fleet read) and marks a list that is not one. Needs `npm run build`.
 */
import * as assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { DEFAULT_SITES } from '../../src/simulator';
import { parseSiteList } from '../../src/protocol/portfolio';
import { SERVICE } from '../../src/protocol/limits';
import { useEditor, type Session } from '../helpers/browser';
import {
  canvasNode,
  chooseType,
  closeTray,
  configId,
  deploy,
  dropNode,
  nodeProps,
  openNode,
  openServerAdd,
  options,
  setInjectPayload,
  typedContainer,
  typedText,
  wire,
} from './lib/editor';
import { setFlows } from './lib/node-red';
import { catalogue, controlVisible } from './lib/panels';
import { screenshotTray } from './lib/screenshots';
import { until } from './lib/wait';

const STEER = catalogue('ems-site-steer');
const READ = catalogue('ems-device-read');
const [commercial, home] = DEFAULT_SITES;
/** The portfolio of the picture: both simulator sites with their battery ratings. */
const FLEET_JSON = `[{"site": "${commercial.siteReference}", "maxPowerW": ${commercial.battery.maxPowerW}},\n {"site": "${home.siteReference}", "maxPowerW": ${home.battery.maxPowerW}}]`;

const hasError = (l: Locator) => l.evaluate((e) => e.classList.contains('input-error'));
const errorsOf = (page: Page, id: string) =>
  page.evaluate((id) => (RED.nodes.node(id).validationErrors ?? []) as string[], id);
/** The tooltip Node-RED gives an invalid field (its validator's message), as a hover shows it; null when it has none. */
const tooltip = (page: Page, id: string) =>
  page.evaluate((id) => {
    const tip = $(`#${id}`).data('tooltip');
    if (!tip) return null;
    tip.open(true);
    const text = $(tip.element).text().trim();
    tip.close(true);
    return text;
  }, id);
/**
 * The open tray widened by its resize handle (so a JSON site list fits on its lines), scrolled to
 * its top, nothing focused, as a picture. Node-RED keeps the width per node type until the page reloads.
 */
async function pictureOfWideTray(page: Page, name: string): Promise<void> {
  const handle = page.locator('.red-ui-tray').last().locator('.red-ui-tray-resize-handle');
  const box = (await handle.boundingBox())!;
  const before = (await page.locator('.red-ui-tray').last().boundingBox())!.width;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x - 130, box.y + box.height / 2, { steps: 4 });
  await page.mouse.move(box.x - 260, box.y + box.height / 2, { steps: 4 });
  await page.mouse.up();
  await until(
    async () => (await page.locator('.red-ui-tray').last().boundingBox())!.width,
    (w) => w >= before + 200,
    'the tray widened',
  );
  await page.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    $('.red-ui-tray').last().find('.red-ui-tray-body-wrapper, .red-ui-tray-body, .red-ui-tray-content').scrollTop(0);
  });
  await screenshotTray(page, name);
}
const tr = (text: string, vars: Record<string, string | number>) =>
  text.replace(/__(\w+)__/g, (_, k) => String(vars[k]));

/** The runtime's refusal of a site list (ValidationError: "<field> <text>"). */
function runtimeRefusal(text: string): string {
  try {
    parseSiteList(text, 'sites');
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`the runtime accepts ${text}`);
}
/** The editor's reason for a site list: the runtime's refusal, without the field's name (the label comes first) and "; nothing was sent". */
const editorReason = (text: string) =>
  runtimeRefusal(text)
    .replace(/^sites /, '')
    .replace(/; nothing was sent$/, '');

describe('browser: fleets in the site steer and device read panels', function () {
  this.timeout(60000);
  let editorSession: Session;
  let page: Page;

  useEditor((session) => {
    editorSession = session;
    page = session.browser.page;
  });

  it('site steer: Sites takes a list or a JSON array; a site twice or bad JSON is marked with the reason', async function () {
    const id = await dropNode(page, 'ems-site-steer', 320, 120);
    await openNode(page, id);
    await openServerAdd(page);
    await closeTray(page, 'ok');
    assert.equal(await controlVisible(page, 'sites'), true);
    const sites = page.locator('#node-input-sites');
    assert.equal(await sites.getAttribute('placeholder'), STEER.placeholder.sites);
    // The editor checks with the runtime's parseSiteList (resources/steer-rules.js) and gives its reason.
    const cases: Array<[value: string, valid: boolean]> = [
      ['ste_a, ste_b', true],
      ['ste_a\nste_b; ste_c', true],
      ['[{"site": "ste_a", "maxPowerW": 5000}, {"site": "ste_b", "soc": 40}, "ste_c"]', true],
      ['ste_a, ste_b, ste_a', false],
      ['[{"site": "ste_a", "maxPowerW": 5000},', false],
      ['[{"site": "ste_a", "maxPowerW": -1}]', false],
      ['[{"site": "ste_a", "power": 5000}]', false],
      ['ste_a, b@d', false],
      ['[]', false],
      ['[{"site": "ste_a", "maxPowerW": "5000", "soc": "40"}]', true],
      ['[{"site": "ste_a", "maxPowerW": true}]', false],
      ['[{"site": "ste_a", "maxPowerW": 1e999}]', false],
      ['[{"site": "ste_a", "soc": 101}]', false],
      [' , ; ', false],
    ];
    for (const [value, valid] of cases) {
      await sites.fill(value);
      await sites.press('Tab');
      assert.equal(await hasError(sites), !valid, `Sites "${value}" ${valid ? 'accepted' : 'marked'}`);
      if (valid) {
        assert.ok(parseSiteList(value, 'sites').length > 0, `the runtime accepts "${value}"`);
        continue;
      }
      assert.equal(
        await tooltip(page, 'node-input-sites'),
        `${STEER.label.sites}: ${editorReason(value)}`,
        `the reason for "${value}"`,
      );
    }
    // More sites than one message may steer.
    const tooMany = Array.from({ length: SERVICE.maxFleetSites + 1 }, (_, i) => `ste_${i}`).join(',');
    await sites.fill(tooMany);
    await sites.press('Tab');
    assert.equal(await hasError(sites), true, 'a list over SERVICE.maxFleetSites is marked');
    assert.equal(await tooltip(page, 'node-input-sites'), `${STEER.label.sites}: ${editorReason(tooMany)}`);
    // Saved with a site twice: the node is invalid, with that reason.
    await sites.fill('ste_a, ste_b, ste_a');
    await closeTray(page, 'ok');
    assert.deepEqual(await errorsOf(page, id), [`${STEER.label.sites}: ${editorReason('ste_a, ste_b, ste_a')}`]);
    // With a list, the single site may be empty; without one (and not portfolio) it may not.
    await openNode(page, id);
    await sites.fill('ste_a, ste_b');
    assert.equal(await typedText(page, 'node-input-site').inputValue(), '');
    await closeTray(page, 'ok');
    assert.deepEqual(await errorsOf(page, id), []);
    assert.equal((await nodeProps(page, id)).valid, true);
    await openNode(page, id);
    await sites.fill('');
    await closeTray(page, 'ok');
    assert.equal((await nodeProps(page, id)).valid, false, 'no site and no list');
    await page.evaluate((id) => {
      RED.nodes.remove(id);
      RED.view.redraw(true);
    }, id);
  });

  it('site steer, mode portfolio: the split select (rating / soc), no single site needed; deploys and splits a total in a dry run', async function () {
    const steer = await dropNode(page, 'ems-site-steer', 420, 120);
    const inject = await dropNode(page, 'inject', 160, 120);
    await openNode(page, steer);
    if (
      await configId(page).then(
        () => true,
        () => false,
      )
    )
      await page.selectOption('#node-input-server', await configId(page));
    else {
      await openServerAdd(page);
      await closeTray(page, 'ok');
    } // run alone (-g)
    assert.equal(await controlVisible(page, 'portfolioSplit'), false, 'no split outside portfolio mode');
    await page.selectOption('#node-input-mode', 'portfolio');
    assert.deepEqual(
      (await options(page, '#node-input-portfolioSplit')).map((o) => [o.value, o.label, o.selected]),
      [
        ['rating', STEER.portfolioSplit.rating, true],
        ['soc', STEER.portfolioSplit.soc, false],
      ],
    );
    for (const [control, shown] of [
      ['portfolioSplit', true],
      ['essValue', true],
      ['essUnit', true],
      ['curtailmentValue', false],
      ['gridTargetValue', false],
      ['upperLimitValue', false],
      ['maximizeGridImport', false],
    ] as const) {
      assert.equal(
        await controlVisible(page, control),
        shown,
        `${control} ${shown ? 'shown' : 'hidden'} in portfolio mode`,
      );
    }
    assert.equal(await typedText(page, 'node-input-essValue').inputValue(), 'payload', 'the total from msg.payload');
    assert.equal(await typedText(page, 'node-input-site').inputValue(), '', 'no single site');
    await page.locator('#node-input-sites').fill(FLEET_JSON);
    await page.locator('#node-input-sites').press('Tab');
    assert.equal(await hasError(page.locator('#node-input-sites')), false);
    await page.selectOption('#node-input-portfolioSplit', 'rating');
    await page.locator('#node-input-dryRun').check();
    await page.locator('#node-input-name').fill('Portfolio by rating');
    await pictureOfWideTray(page, 'panel-site-steer-fleet');
    await closeTray(page, 'ok');
    const saved = await nodeProps(page, steer);
    assert.deepEqual(
      [saved.mode, saved.portfolioSplit, saved.sites, saved.site, saved.valid],
      ['portfolio', 'rating', FLEET_JSON, '', true],
    );
    // Split by SOC is kept too.
    await openNode(page, steer);
    await page.selectOption('#node-input-portfolioSplit', 'soc');
    await closeTray(page, 'ok');
    assert.equal((await nodeProps(page, steer)).portfolioSplit, 'soc');
    await openNode(page, steer);
    await page.selectOption('#node-input-portfolioSplit', 'rating');
    await closeTray(page, 'ok');

    await openNode(page, inject);
    await setInjectPayload(page, 'number', '102');
    await closeTray(page, 'ok');
    await wire(page, inject, steer);
    await deploy(page); // throws if Node-RED asked to confirm (a node not properly configured)
    const flows = (await (await page.request.get(new URL('flows', editorSession.nr.url).href)).json()) as any[];
    const deployed = flows.find((n) => n.id === steer);
    assert.deepEqual([deployed.mode, deployed.portfolioSplit, deployed.sites], ['portfolio', 'rating', FLEET_JSON]);
    // 102 kW over 500 kW + 10 kW of ratings (the split itself: test/protocol/portfolio.test.ts); nothing sent (dry run).
    await canvasNode(page, inject).locator('.red-ui-flow-node-button-button').click();
    const status = () =>
      canvasNode(page, steer)
        .locator('.red-ui-flow-node-status-label')
        .textContent()
        .then((t) => (t ?? '').trim());
    assert.equal(
      await until(status, (t) => t !== '', "the portfolio node's status"),
      tr(STEER.status.fleetDryRun, { total: 2 }),
    );
    assert.doesNotMatch(editorSession.nr.log(), new RegExp(`\\[error\\] \\[ems-site-steer:${steer}\\]`));
    assert.deepEqual(editorSession.browser.errors, []);
  });

  it('a flow with a bad site list: the runtime refuses it at deploy, the editor marks the same node', async function () {
    const bad = { twice: 'ste_a, ste_b, ste_a', json: '[{"site": "ste_a"},', empty: '[]' };
    await setFlows(editorSession.nr, [
      { id: 'tab', type: 'tab', label: 'fleet' },
      { id: 'cfg', type: 'ems-partner-config', simulator: true, version: 4 },
      ...Object.entries(bad).map(([k, v], i) => ({
        id: `steer-${k}`,
        type: 'ems-site-steer',
        z: 'tab',
        x: 200,
        y: 60 + i * 60,
        server: 'cfg',
        site: '',
        siteType: 'str',
        sites: v,
        mode: 'ess',
        essValue: 'payload',
        essValueType: 'msg',
        essUnit: 'kW',
        validity: 'quarter-hour',
        dryRun: true,
        version: 5,
        wires: [],
      })),
      {
        id: 'steer-ok',
        type: 'ems-site-steer',
        z: 'tab',
        x: 200,
        y: 200,
        server: 'cfg',
        site: '',
        siteType: 'str',
        sites: 'ste_a ste_b',
        mode: 'portfolio',
        portfolioSplit: 'soc',
        essValue: 'payload',
        essValueType: 'msg',
        essUnit: 'kW',
        validity: 'quarter-hour',
        dryRun: true,
        version: 6,
        wires: [],
      },
    ]);
    for (const [k, v] of Object.entries(bad)) {
      const refusal = runtimeRefusal(v);
      await until(
        () => editorSession.nr.log(),
        (l) => l.includes(`[ems-site-steer:steer-${k}]`) && l.includes(refusal),
        `the runtime's refusal of ${k}: ${refusal}`,
      );
    }
    assert.doesNotMatch(editorSession.nr.log(), /\[ems-site-steer:steer-ok\]/);
    await page.reload();
    await page.waitForFunction(() => typeof RED !== 'undefined' && RED.nodes?.node?.('steer-ok'));
    for (const [k, v] of Object.entries(bad))
      assert.deepEqual(await errorsOf(page, `steer-${k}`), [`${STEER.label.sites}: ${editorReason(v)}`], k);
    assert.deepEqual(await errorsOf(page, 'steer-ok'), []);
    assert.equal(await page.evaluate(() => RED.nodes.node('steer-ok').valid), true);
  });

  it('device read: device as a JSON list is a fleet read; a list that is not one is marked', async function () {
    await setFlows(editorSession.nr, []);
    await page.reload();
    await page.waitForFunction(() => typeof RED !== 'undefined' && RED.workspaces?.active());
    const id = await dropNode(page, 'ems-device-read', 320, 120);
    await openNode(page, id);
    await openServerAdd(page);
    await closeTray(page, 'ok');
    await chooseType(page, 'node-input-device', 'JSON');
    const text = typedText(page, 'node-input-device');
    const box = typedContainer(page, 'node-input-device');
    const refs = DEFAULT_SITES.map((x) => x.battery.deviceReference);
    const cases: Array<[value: string, error: string | null]> = [
      [JSON.stringify(refs), null],
      [JSON.stringify(refs[0]), null],
      ['[]', READ.errors.deviceJson],
      ['{"device": "dvc_a"}', READ.errors.deviceJson],
      ['["dvc_a", 3]', READ.errors.deviceJson],
      ['["dvc_a", ""]', READ.errors.deviceJson],
      ['["dvc_a",', READ.errors.deviceJson],
      [
        JSON.stringify(Array.from({ length: SERVICE.maxFleetDevices + 1 }, (_, i) => `dvc_${i}`)),
        tr(READ.errors.fleetSize, { max: SERVICE.maxFleetDevices }),
      ],
    ];
    for (const [value, error] of cases) {
      await text.fill(value);
      await text.press('Tab');
      assert.equal(
        await hasError(box),
        error !== null,
        `device ${value.slice(0, 40)} ${error ? 'marked' : 'accepted'}`,
      );
      if (error !== null)
        assert.equal(
          await tooltip(page, 'node-input-device'),
          `${READ.label.device}: ${error}`,
          `the reason for ${value.slice(0, 40)}`,
        );
    }
    await text.fill('["dvc_a", 3]');
    await closeTray(page, 'ok');
    assert.deepEqual(await errorsOf(page, id), [`${READ.label.device}: ${READ.errors.deviceJson}`]);
    await openNode(page, id);
    await text.fill(JSON.stringify(refs));
    await text.press('Tab');
    await closeTray(page, 'ok');
    const saved = await nodeProps(page, id);
    assert.deepEqual([saved.device, saved.deviceType, saved.valid], [JSON.stringify(refs), 'json', true]);
    await deploy(page);
    assert.doesNotMatch(editorSession.nr.log(), new RegExp(`\\[error\\] \\[ems-device-read:${id}\\]`));
    assert.deepEqual(editorSession.browser.errors, []);
  });
});
