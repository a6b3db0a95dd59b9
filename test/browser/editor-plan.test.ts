/**
 * Browser: the `ems-plan` node ("price plan") in the editor: in the palette with its
 * icon; its panel shows every setting with its default; a value the planner refuses is marked,
 * with the planner's own words (src/plan/price-input.ts, the same text the runtime logs at
 * deploy); a price unit after a currency (EUR/MWh) is kept. Needs `npm run build`.
 */
import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { ValidationError } from '../../src/protocol';
import { parsePlanInput } from '../../src/plan/price-input';
import { checkSetting } from '../../src/nodes/plan/check';
import { useEditor, type Session } from '../helpers/browser';
import { closeTray, dropNode, openNode, editNode, paletteNode } from './lib/editor';
import { setFlows } from './lib/node-red';
import { catalogue, labelFor } from './lib/panels';
import { until } from './lib/wait';

declare const RED: any;
const NODE_TYPE = 'ems-plan';
const labels = catalogue(NODE_TYPE).label;

/** The planner's refusal of a battery, without the field's name, as the editor shows it (no `battery.` prefixes). */
function plannerSays(battery: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  try {
    parsePlanInput({
      prices: [{ start: 0, end: 900_000, price: 0 }],
      battery: { capacityKWh: 1, maxChargeKW: 1, soc: 50, ...battery },
      ...extra,
    });
  } catch (e) {
    assert.ok(e instanceof ValidationError);
    return e.message.slice(e.field.length + 1).replace(/\bbattery\./g, '');
  }
  throw new Error('accepted');
}

describe('browser: the price plan node', function () {
  this.timeout(120000);
  let editorSession: Session;
  let page: Page;

  useEditor((session) => {
    editorSession = session;
    page = session.browser.page;
  });

  it("in the palette with its icon; its panel shows every setting, with the defaults; a refused value is marked with the planner's words", async () => {
    const entry = paletteNode(page, NODE_TYPE);
    assert.equal((await entry.innerText()).trim(), 'price plan');
    assert.match(
      await entry.locator('.red-ui-palette-icon').evaluate((e) => (e as HTMLElement).style.backgroundImage),
      /icons\/@ems-partner\/node-red\/ems-plan\.svg/,
    );
    const id = await dropNode(page, NODE_TYPE, 300, 150);
    await openNode(page, id);
    for (const k of [
      'capacityKWh',
      'maxChargeKW',
      'maxDischargeKW',
      'socMin',
      'efficiency',
      'socEnd',
      'priceUnit',
      'steps',
      'name',
    ]) {
      assert.equal(await labelFor(page, k), labels[k], `label of ${k}`);
    }
    const values = await page.evaluate(() =>
      [
        'capacityKWh',
        'maxChargeKW',
        'maxDischargeKW',
        'socMin',
        'socMax',
        'efficiency',
        'socEnd',
        'priceUnit',
        'steps',
      ].map((k) => [k, $(`#node-input-${k}`).val()]),
    );
    assert.deepEqual(Object.fromEntries(values), {
      capacityKWh: '',
      maxChargeKW: '',
      maxDischargeKW: '',
      socMin: '5',
      socMax: '95',
      efficiency: '0.9',
      socEnd: '',
      priceUnit: 'kWh',
      steps: '',
    });
    const text = await page.locator('.red-ui-tray').last().locator('.red-ui-tray-body').innerText();
    assert.doesNotMatch(text, /ems-plan\.[a-zA-Z]+\.[a-zA-Z]/, 'no raw message key');
    for (const [k, v, bad] of [
      ['efficiency', '90', true],
      ['efficiency', '0.95', false],
      ['capacityKWh', '0', true],
      ['capacityKWh', '100', false],
      ['socMax', '3', true],
      ['socMax', '90', false],
      ['socEnd', '99', true],
      ['socEnd', '50', false],
      ['steps', '2.5', true],
      ['steps', '', false],
    ] as const) {
      const input = page.locator(`#node-input-${k}`);
      await input.fill(v);
      await input.press('Tab');
      assert.equal(await input.evaluate((e) => e.classList.contains('input-error')), bad, `${k} = "${v}"`);
    }
    await page.locator('#node-input-efficiency').fill('90');
    await page.locator('#node-input-socEnd').fill('99');
    await closeTray(page, 'ok');
    const errors = await page.evaluate((nodeId) => RED.nodes.node(nodeId).validationErrors ?? [], id);
    assert.deepEqual(
      [...errors].sort(),
      [
        `${labels.efficiency}: ${plannerSays({ efficiency: '90' })}`,
        `${labels.socEnd}: ${plannerSays({ socMin: '5', socMax: '90' }, { socEnd: '99' })}`,
      ].sort(),
    );
    assert.deepEqual(editorSession.browser.errors, []);
  });

  it("a flow's bad setting: the editor marks it with the words the runtime logs at deploy; a price unit after a currency is kept", async () => {
    await setFlows(editorSession.nr, [
      { id: 'tab', type: 'tab', label: 'plan' },
      {
        id: 'p1',
        type: NODE_TYPE,
        z: 'tab',
        x: 200,
        y: 80,
        capacityKWh: '20',
        maxChargeKW: '10',
        socMin: '20',
        socMax: '10',
        efficiency: '0.9',
        priceUnit: 'EUR/MWh',
        wires: [],
      },
    ]);
    await page.reload();
    await page.waitForFunction(() => typeof RED !== 'undefined' && RED.nodes?.node?.('p1'));
    const shown = await page.evaluate(() => RED.nodes.node('p1').validationErrors ?? []);
    const words = plannerSays({ socMin: '20', socMax: '10' });
    assert.deepEqual(shown, [`${labels.socMax}: ${words}`]);
    await until(
      async () => editorSession.nr.log(),
      (l) => /socMax must be above socMin/.test(l),
      "the runtime's refusal in the log",
    );
    assert.ok(editorSession.nr.log().includes(`socMax ${words}`), 'the same words');
    await editNode(page, 'p1');
    assert.equal(await page.locator('#node-input-priceUnit').inputValue(), 'EUR/MWh');
    await page.locator('#node-input-socMax').fill('90');
    await closeTray(page, 'ok');
    const saved = await page.evaluate(() => {
      const node = RED.nodes.node('p1');
      return { priceUnit: node.priceUnit, valid: node.valid };
    });
    assert.deepEqual(saved, { priceUnit: 'EUR/MWh', valid: true });
    assert.deepEqual(editorSession.browser.errors, []);
  });

  it("versions 2 to 4: the site model's settings and Re-plan, empty and off for a new node; a refused value is marked with the runtime's words", async () => {
    const id = await dropNode(page, NODE_TYPE, 300, 260);
    await openNode(page, id);
    const keys = [
      'chargeEfficiency',
      'cycleCost',
      'socTarget',
      'endValue',
      'importMultiplier',
      'exportMultiplier',
      'importLimitKW',
      'peakCost',
      'replan',
    ];
    for (const k of keys) assert.equal(await labelFor(page, k), labels[k], `label of ${k}`);
    const values = await page.evaluate(() =>
      [
        'chargeEfficiency',
        'dischargeEfficiency',
        'cycleCost',
        'endValue',
        'socTarget',
        'socTargetTime',
        'importMultiplier',
        'importFee',
        'importVat',
        'exportMultiplier',
        'exportFee',
        'exportVat',
        'importLimitKW',
        'exportLimitKW',
        'peakCost',
      ].map((k) => [k, $(`#node-input-${k}`).val()]),
    );
    assert.ok(
      values.every(([, v]) => v === ''),
      JSON.stringify(values),
    );
    assert.equal(await page.locator('#node-input-replan').isChecked(), false);
    assert.equal(await page.locator('#node-input-gridCharge').isChecked(), true);
    assert.equal(await page.locator('#node-input-gridDischarge').isChecked(), true);
    for (const [k, v, bad] of [
      ['importVat', '0', true],
      ['importVat', '1.19', false],
      ['exportLimitKW', '-3', true],
      ['exportLimitKW', '7', false],
      ['socTargetTime', '7 am', true],
      ['socTargetTime', '07:00', false],
      ['chargeEfficiency', '95', true],
      ['chargeEfficiency', '0.95', false],
      ['cycleCost', '-1', true],
      ['cycleCost', '0.02', false],
    ] as const) {
      const input = page.locator(`#node-input-${k}`);
      await input.fill(v);
      await input.press('Tab');
      assert.equal(await input.evaluate((e) => e.classList.contains('input-error')), bad, `${k} = "${v}"`);
    }
    await page.locator('#node-input-importVat').fill('0');
    await page.locator('#node-input-socTarget').fill('99');
    await page.locator('#node-input-replan').check();
    await closeTray(page, 'ok');
    const node = await page.evaluate((nodeId) => {
      const editorNode = RED.nodes.node(nodeId);
      return {
        errors: editorNode.validationErrors ?? [],
        replan: editorNode.replan,
        idle: editorNode.idle,
        gridCharge: editorNode.gridCharge,
        gridDischarge: editorNode.gridDischarge,
        version: editorNode.version,
      };
    }, id);
    assert.deepEqual(
      [node.replan, node.idle, node.version],
      [true, 'self-consumption', 4],
      'a new node leaves the slots without grid exchange to the site (version 3)',
    );
    assert.deepEqual(
      [node.gridCharge, node.gridDischarge],
      [true, true],
      'a new node may charge from the grid and discharge into it (version 4)',
    );
    const words = (config: Record<string, unknown>, key: string) => checkSetting(config, key) as string;
    assert.deepEqual(
      [...node.errors].sort(),
      [
        `${labels.importVat}: ${words({ importVat: '0' }, 'importVat')}`,
        `${labels.socTarget}: ${words({ socMin: '5', socMax: '95', socTarget: '99', socTargetTime: '07:00' }, 'socTarget')}`,
      ].sort(),
    );
    assert.deepEqual(editorSession.browser.errors, []);
  });
});
