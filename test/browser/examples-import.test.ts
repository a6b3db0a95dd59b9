/**
 * Browser: every shipped example, imported one after another into `npm start`'s Node-RED (the
 * demo flow deployed) through Menu ▸ Import ▸ Examples, imports without Node-RED asking to
 * resolve conflicts ("Some of the nodes you are importing already exist…"), except for the MQTT
 * broker node that examples 03, 04, 05 and 10 share: from the second of them on, Node-RED lists
 * that node alone, and *View nodes…* ▸ *Import selected* keeps the one there (as the README says).
 * The same example imported twice raises the prompt, so the check can fail. All then deploy
 * without a "not properly configured" prompt, the one broker node set to npm start's broker as
 * npm start says. Dashboard 2 keeps one ui-base: its editor drops the one example 09 brings
 * and puts the example's page on the demo's dashboard.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { exampleFiles, readExample } from '../helpers/examples';
import { useDemo } from '../helpers/browser';
import type { BrowserSession } from './lib/browser';
import type { Demo } from './lib/demo';
import { deploy } from './lib/editor';
import { conflictNotification, importExample, importKeepingExisting, inWorkspace } from './lib/import';
import { REPO, getJson } from './lib/node-red';
import { until } from './lib/wait';

const MODULE = '@ems-partner/node-red';
const DEMO = JSON.parse(fs.readFileSync(path.join(REPO, 'demo', 'flow.json'), 'utf8')) as any[];
const titleOf = (file: string) => file.replace(/\.json$/, '');
/** The example's nodes that stay in the workspace: all but its ui-base (the demo's is kept). */
const kept = (file: string) => readExample(file).filter((n) => n.type !== 'ui-base');
/** Config nodes the examples share (the MQTT broker node of 03, 04, 05 and 10). */
const SHARED = /^e3a5c0f1b2d400a\d$/;

describe("browser: importing every example into npm start's Node-RED", function () {
  this.timeout(180000);
  let demo: Demo | undefined;
  let browser: BrowserSession | undefined;
  let page: Page;
  const files = exampleFiles();

  useDemo((d) => {
    demo = d.demo;
    browser = d.browser;
    page = d.page;
  });

  it('starts from the deployed demo flow', async function () {
    assert.deepEqual(
      await inWorkspace(
        page,
        DEMO.map((n) => n.id),
      ),
      DEMO.map(() => true),
    );
  });

  it('imports every example in a row with no conflict prompt but for the shared broker node, kept once', async function () {
    assert.ok(files.length >= 9);
    const imported = new Set<string>();
    for (const file of files) {
      const ids = kept(file).map((n) => n.id);
      const shared = ids.filter((id) => SHARED.test(id));
      const there = shared.filter((id) => imported.has(id));
      const outcome = await importExample(page, MODULE, titleOf(file), ids);
      if (there.length) {
        assert.equal(outcome, 'conflict', `${file}: the shared node is there already`);
        assert.deepEqual(
          await importKeepingExisting(page, ids),
          there,
          `${file}: Node-RED lists the shared node alone, kept as it is`,
        );
      } else {
        assert.equal(outcome, 'imported', `${file}: Node-RED asked to resolve conflicts`);
      }
      assert.equal(await conflictNotification(page).count(), 0, `${file}: no conflict notification left`);
      for (const id of shared) imported.add(id);
    }
    assert.equal(
      await page.evaluate(
        (id) => {
          let count = 0;
          RED.nodes.eachConfig((c: any) => {
            if (c.id === id) count++;
          });
          return count;
        },
        [...imported][0],
      ),
      1,
      'one broker node',
    );
    // Each example on a tab of its own, the demo's tab still there: 1 + one per example.
    const tabs = await page.evaluate(() => {
      const lines: string[] = [];
      RED.nodes.eachWorkspace((w: { id: string }) => {
        lines.push(w.id);
      });
      return lines;
    });
    assert.equal(tabs.length, 1 + files.length, `tabs ${tabs}`);
  });

  it('importing an example a second time does raise the conflict prompt (the check above can fail)', async function () {
    const file = files[0];
    const outcome = await importExample(
      page,
      MODULE,
      titleOf(file),
      readExample(file).map((n) => n.id),
    );
    assert.equal(outcome, 'conflict');
    const note = conflictNotification(page);
    assert.match(await note.innerText(), /Some of the nodes you are importing already exist in your workspace/);
    await note.locator('button', { hasText: /^Cancel$/ }).click();
    await until(
      () => note.count(),
      (n) => n === 0,
      'the conflict notification to close',
    );
    const tabs = await page.evaluate(() => {
      let count = 0;
      RED.nodes.eachWorkspace(() => {
        count++;
      });
      return count;
    });
    assert.equal(tabs, 1 + files.length, 'nothing imported');
  });

  it("deploys the demo and every example without a prompt, on npm start's MQTT broker; one dashboard", async function () {
    // What npm start prints when its broker is not on 1883: set Port in the broker nodes.
    const brokers = await page.evaluate((port) => {
      const ids: string[] = [];
      RED.nodes.eachConfig((c: any) => {
        if (c.type !== 'mqtt-broker') return;
        c.port = String(port);
        c.changed = true;
        ids.push(c.id);
      });
      RED.nodes.dirty(true);
      return ids;
    }, demo!.mqttPort);
    assert.equal(brokers.length, 1, 'examples 03, 04, 05 and 10 share one broker node');
    await deploy(page);
    const flows = await getJson<any[]>(`${demo!.base}/flows`);
    const deployed = new Set(flows.map((n) => n.id));
    for (const file of files) {
      for (const n of kept(file)) assert.ok(deployed.has(n.id), `${file}: ${n.name || n.type} (${n.id}) deployed`);
    }
    const demoBase = DEMO.find((n) => n.type === 'ui-base').id;
    assert.deepEqual(
      flows.filter((n) => n.type === 'ui-base').map((n) => n.id),
      [demoBase],
      "one ui-base: the demo's",
    );
    for (const p of flows.filter((n) => n.type === 'ui-page'))
      assert.equal(p.ui, demoBase, `page ${p.name} on the demo's dashboard`);
    for (const n of DEMO) assert.ok(deployed.has(n.id), `demo: ${n.id} still deployed`);
    assert.doesNotMatch(demo!.output(), /Uncaught|unhandled/i);
    assert.deepEqual(browser!.errors, []);
  });
});
