/**
 * Browser, case 3: with a config node on the built-in simulator (added from the panel, as a
 * user does), the device picker lists the simulator's devices from the admin endpoint, the
 * property picker follows the chosen device and shows units, the site picker lists the sites,
 * and a typed reference the service does not list is kept.
 */
import * as assert from 'node:assert/strict';
import type { Page, Request } from 'playwright-core';
import { BUILT_IN_SITES, DEFAULT_SITES } from '../../src/simulator';
import { useEditor, type Session } from '../helpers/browser';
import {
  closeTray,
  configId,
  deploy,
  dropNode,
  nodeProps,
  openNode,
  openServerAdd,
  options,
  openServerEdit,
  trayIdle,
  typedText,
} from './lib/editor';
import { catalogue } from './lib/panels';
import { screenshotTray } from './lib/screenshots';
import { until } from './lib/wait';

const picker = catalogue('ems-partner-config').picker;
const [commercial, home] = DEFAULT_SITES;
// The built-in simulator: the default sites, then one per steering example (simulator/sites.ts).
const DEVICES = BUILT_IN_SITES.flatMap((s) => [
  { ref: s.battery.deviceReference, name: s.battery.name, kind: 'battery' },
  { ref: s.pv.deviceReference, name: s.pv.name, kind: 'pv' },
  { ref: s.meter.deviceReference, name: s.meter.name, kind: 'meter' },
]);

/** Options of a picker once the service's list has arrived. */
function loaded(page: Page, sel: string, count: number) {
  return until(
    () => options(page, sel),
    (o) => o.length >= count,
    `${sel} to list ${count - 1} entries`,
  );
}

/** Label and checked state of the property checkboxes of a device read panel. */
function propertyBoxes(page: Page) {
  return page.locator('#node-input-properties-list label').evaluateAll((els) =>
    els.map((l) => ({
      label: (l as HTMLElement).innerText.trim(),
      checked: (l.querySelector('input') as HTMLInputElement).checked,
    })),
  );
}

describe('browser: pickers on the built-in simulator', function () {
  this.timeout(120000);
  let editorSession: Session;
  let page: Page;

  useEditor((session) => {
    editorSession = session;
    page = session.browser.page;
  });

  it('device read: adds a simulator server from the panel; devices and their properties with units', async function () {
    const id = await dropNode(page, 'ems-device-read', 300, 120);
    await openNode(page, id);
    await openServerAdd(page);
    assert.equal(await page.locator('#node-config-input-simulator').isChecked(), true, 'the simulator is the default');
    assert.equal(
      await page.locator('#node-config-service-rows').isVisible(),
      false,
      'no URL or auth fields for the simulator',
    );
    await page.locator('#node-config-test-connection').click();
    const result = page.locator('#node-config-test-result');
    await until(
      () => result.innerText(),
      (t) => t !== '' && t !== catalogue('ems-partner-config').test.running,
      'the test result',
    );
    const test = catalogue('ems-partner-config').test;
    assert.equal(await result.innerText(), `${test.ok} (${test.devices.replace('__n__', String(DEVICES.length))})`);
    assert.equal(await result.getAttribute('class'), 'ems-partner-ok');
    // The built-in simulator's address, for GET /sites/<site>/state in a browser or curl.
    const simText = catalogue('ems-partner-config').simulator.url.replace('__url__', editorSession.nr.simUrl);
    await until(
      () => page.locator('#node-config-simulator-url').innerText(),
      (t) => t === simText,
      'the simulator URL',
    );
    await screenshotTray(page, 'config-simulator');
    await closeTray(page, 'ok');

    // Back in the device read panel: the new server is chosen and its devices are listed.
    assert.equal(await page.locator('#node-input-server').inputValue(), await configId(page));
    const opts = await loaded(page, '#node-input-device-picker', DEVICES.length + 1);
    assert.deepEqual(
      opts.map((o) => o.label),
      [picker.choose.devices, ...DEVICES.map((d) => `${d.ref} \u2014 ${d.name} (${d.kind})`)],
    );
    assert.equal(await page.locator('#node-input-device-status').isVisible(), false, 'no loading or error note');

    await page.selectOption('#node-input-device-picker', commercial.battery.deviceReference);
    assert.equal(await typedText(page, 'node-input-device').inputValue(), commercial.battery.deviceReference);
    assert.deepEqual(await propertyBoxes(page), [
      { label: 'soc (%)', checked: true },
      { label: 'power (W)', checked: false },
      { label: 'totalEnergyConsumed (Wh)', checked: false },
      { label: 'totalEnergyProduced (Wh)', checked: false },
    ]);
    await page.locator('#node-input-properties-list label', { hasText: 'power (W)' }).locator('input').check();
    assert.equal(await typedText(page, 'node-input-properties').inputValue(), 'soc,power');
    await screenshotTray(page, 'picker-device-read');

    // Another device: the list follows it; chosen names it lacks stay, marked.
    await page.selectOption('#node-input-device-picker', commercial.pv.deviceReference);
    assert.deepEqual(await propertyBoxes(page), [
      { label: 'power (W)', checked: true },
      { label: 'totalEnergyProduced (Wh)', checked: false },
      { label: `soc ${picker.notListed}`, checked: true },
    ]);

    // A typed device reference the service does not list is kept, and marked in the picker.
    const typed = 'dvc_NotListed001';
    await typedText(page, 'node-input-device').fill(typed);
    await until(
      () => options(page, '#node-input-device-picker'),
      (o) => o.some((x) => x.selected && x.value === typed),
      'the typed device in the picker',
    );
    const sel = (await options(page, '#node-input-device-picker')).find((o) => o.selected)!;
    assert.equal(sel.label, `${typed} ${picker.notListed}`);
    await closeTray(page, 'ok');
    const saved = await nodeProps(page, id);
    assert.equal(saved.device, typed);
    assert.equal(saved.deviceType, 'str');
    assert.equal(saved.properties, 'soc,power');
    assert.equal(saved.valid, true);
  });

  it('time series: the property dropdown follows the device and shows units', async function () {
    const id = await dropNode(page, 'ems-time-series', 300, 200);
    await openNode(page, id);
    // A new node starts on "None" (Node-RED's own behaviour); choosing the server loads the lists.
    await page.selectOption('#node-input-server', await configId(page));
    await loaded(page, '#node-input-device-picker', DEVICES.length + 1);
    await page.selectOption('#node-input-device-picker', home.battery.deviceReference);
    assert.deepEqual(
      (await options(page, '#node-input-property-picker')).map((o) => [o.label, o.selected]),
      [
        [picker.choose.property, false],
        ['soc (%)', true],
        ['power (W)', false],
        ['totalEnergyConsumed (Wh)', false],
        ['totalEnergyProduced (Wh)', false],
      ],
    );
    await page.selectOption('#node-input-device-picker', home.meter.deviceReference);
    assert.deepEqual(
      (await options(page, '#node-input-property-picker')).map((o) => o.label),
      [
        picker.choose.property,
        'power (W)',
        'totalEnergyConsumed (Wh)',
        'totalEnergyProduced (Wh)',
        `soc ${picker.notListed}`,
      ],
    );
    await page.selectOption('#node-input-property-picker', 'totalEnergyConsumed');
    assert.equal(await typedText(page, 'node-input-property').inputValue(), 'totalEnergyConsumed');
    await screenshotTray(page, 'picker-time-series');
    await closeTray(page, 'ok');
    const saved = await nodeProps(page, id);
    assert.deepEqual(
      [saved.device, saved.property, saved.valid],
      [home.meter.deviceReference, 'totalEnergyConsumed', true],
    );
  });

  it('site steer: lists the sites; a typed site reference the service does not list is kept', async function () {
    const id = await dropNode(page, 'ems-site-steer', 300, 280);
    await openNode(page, id);
    await page.selectOption('#node-input-server', await configId(page));
    const opts = await loaded(page, '#node-input-site-picker', BUILT_IN_SITES.length + 1);
    assert.deepEqual(
      opts.map((o) => [o.value, o.label]),
      [
        ['', picker.choose.sites],
        ...BUILT_IN_SITES.map((x) => [x.siteReference, `${x.siteReference} \u2014 ${x.name}`]),
      ],
    );
    await page.selectOption('#node-input-site-picker', commercial.siteReference);
    assert.equal(await typedText(page, 'node-input-site').inputValue(), commercial.siteReference);
    await screenshotTray(page, 'picker-site-steer');

    const typed = 'ste_NotListed001';
    await typedText(page, 'node-input-site').fill(typed);
    await until(
      () => options(page, '#node-input-site-picker'),
      (o) => o.some((x) => x.selected && x.label === `${typed} ${picker.notListed}`),
      'the typed site, marked as not listed',
    );
    await closeTray(page, 'ok');
    assert.equal((await nodeProps(page, id)).site, typed);

    // Opened again, the reference is still there, next to the listed sites.
    await openNode(page, id);
    await loaded(page, '#node-input-site-picker', BUILT_IN_SITES.length + 2);
    assert.equal(await typedText(page, 'node-input-site').inputValue(), typed);
    const again = await options(page, '#node-input-site-picker');
    assert.deepEqual(
      again.filter((o) => o.selected).map((o) => o.label),
      [`${typed} ${picker.notListed}`],
    );
    assert.equal(again.length, BUILT_IN_SITES.length + 2);
    await trayIdle(page);
    await closeTray(page, 'cancel');
    assert.deepEqual(editorSession.browser.errors, []);
  });

  it('once deployed, the pickers and Test connection ask by id alone (JSON); edited settings go along', async function () {
    const cid = await configId(page);
    const sent: Array<{ route: string; type?: string; body: unknown }> = [];
    const record = (r: Request) => {
      const match = /\/ems-partner\/(devices|sites|test)$/.exec(r.url());
      if (match) sent.push({ route: match[1], type: r.headers()['content-type'], body: r.postDataJSON() });
    };
    page.on('request', record);
    try {
      // Not deployed yet, but taken for deployed (as after a failed deploy): asked by id, the runtime does not know it,
      // and the editor asks again with the settings.
      assert.equal(
        await page.evaluate((id) => RED.nodes.node(id).changed, cid),
        true,
        'a new config node is marked changed',
      );
      await page.evaluate((id) => {
        RED.nodes.node(id).changed = false;
      }, cid);
      const time = await dropNode(page, 'ems-time-series', 300, 440);
      await openNode(page, time);
      await page.selectOption('#node-input-server', cid);
      await loaded(page, '#node-input-device-picker', DEVICES.length + 1);
      assert.deepEqual(
        sent.map((x) => [x.route, Object.keys(x.body as object)]),
        [
          ['devices', ['server']],
          ['devices', ['server', 'config']],
        ],
      );
      await page.selectOption('#node-input-device-picker', home.battery.deviceReference);
      await closeTray(page, 'ok');
      assert.equal((await nodeProps(page, time)).valid, true);
      sent.length = 0;
      await deploy(page);
      const id = await dropNode(page, 'ems-site-steer', 300, 360);
      await openNode(page, id);
      await page.selectOption('#node-input-server', cid);
      await loaded(page, '#node-input-site-picker', BUILT_IN_SITES.length + 1);
      assert.deepEqual(sent, [{ route: 'sites', type: 'application/json', body: { server: cid } }]);
      // Test connection in the deployed, unchanged config node: by id; with an edited setting: with the settings.
      await openServerEdit(page);
      const result = page.locator('#node-config-test-result');
      const test = catalogue('ems-partner-config').test;
      const runTest = async () => {
        await page.locator('#node-config-test-connection').click();
        await until(
          () => result.innerText(),
          (t) => t.startsWith(test.ok),
          'the test result',
        );
        await until(
          () => page.locator('#node-config-test-connection').isDisabled(),
          (d) => !d,
          'the test to finish',
        );
      };
      await runTest();
      await page.locator('#node-config-input-timeout').fill('5000');
      await runTest();
      const tests = sent.filter((x) => x.route === 'test');
      assert.deepEqual(
        tests.map((x) => [x.type, Object.keys(x.body as object)]),
        [
          ['application/json', ['server']],
          ['application/json', ['server', 'config']],
        ],
      );
      assert.equal((tests[1].body as unknown as { config: { timeout: number } }).config.timeout, 5000);
      await closeTray(page, 'cancel');
      await closeTray(page, 'cancel');
    } finally {
      page.off('request', record);
    }
    assert.deepEqual(editorSession.browser.errors, []);
  });
});
