/**
 * Browser: example 10 ("Home Assistant - steer the battery") imported through Menu ▸
 * Import ▸ Examples, its MQTT broker node pointed at an in-process aedes broker (as npm start
 * tells a user to set the port), deployed. The flow announces its Home Assistant entities, the
 * device read's status shows the SOC, a command from "Home Assistant" (ems/<site>/ess_power/set)
 * goes through the site steer node, whose status says what was sent; no node shows an unknown
 * type or a red status. The picture is the whole flow at zoom 1 (palette and sidebar hidden).
 * Uses the shared Node-RED of the browser suite; the simulator's steering is reset afterwards.
 */
import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { SteeringState } from '../../src/protocol/types';
import { TestBroker, readExample, builtInSite } from '../helpers/examples';
import { useEditor, type Session } from '../helpers/browser';
import { VIEWPORT } from './lib/browser';
import { canvasNode, deploy, notificationsGone } from './lib/editor';
import { conflictNotification, importExample } from './lib/import';
import { getJson, setFlows } from './lib/node-red';
import { SCREENSHOT_DIR } from './lib/screenshots';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { until } from './lib/wait';

const MODULE = '@ems-partner/node-red';
const FILE = '10 Home Assistant - steer the battery.json';
const EXAMPLE = readExample(FILE);
/** The example's own site on the built-in simulator. */
const HOME = builtInSite('Home (example 10)');

const one = (test: (n: any) => boolean, what: string): any => {
  const found = EXAMPLE.filter(test);
  assert.equal(found.length, 1, `one ${what} in example 10`);
  return found[0];
};
const steer = one((n) => n.type === 'ems-site-steer', 'site steer node');
const read = one((n) => n.type === 'ems-device-read', 'device read node');
const brokerNode = one((n) => n.type === 'mqtt-broker', 'MQTT broker node');
const mqttNodes = EXAMPLE.filter((n) => n.type === 'mqtt in' || n.type === 'mqtt out');

describe('browser: example 10 (Home Assistant steers the battery) imported, deployed and commanded over MQTT', function () {
  this.timeout(60000);
  let editorSession: Session;
  let page: Page;
  const broker = new TestBroker();
  const status = (id: string) =>
    canvasNode(page, id)
      .locator('.red-ui-flow-node-status-label')
      .textContent()
      .then((t) => (t ?? '').trim());
  const dot = (id: string) => canvasNode(page, id).locator('.red-ui-flow-node-status').getAttribute('class');

  before(async function () {
    assert.equal(steer.site, HOME.siteReference);
    assert.equal(read.device, HOME.battery.deviceReference);
    await broker.start();
  });
  useEditor((session) => {
    editorSession = session;
    page = session.browser.page;
  });
  after(async function () {
    await page?.setViewportSize(VIEWPORT).catch(() => undefined);
    await page
      ?.evaluate(() => {
        RED.menu.setSelected('menu-item-palette', true);
        RED.menu.setSelected('menu-item-sidebar', true);
      })
      .catch(() => undefined);
    if (editorSession) {
      await setFlows(editorSession.nr, []); // disconnects the MQTT nodes before the broker goes
      await fetch(`${editorSession.nr.simUrl}/sim/reset`, { method: 'POST' }).catch(() => undefined);
    }
    await broker.stop();
  });

  it('imports example 10 (Menu ▸ Import ▸ Examples), points its broker node at the broker and deploys without a prompt', async function () {
    const outcome = await importExample(
      page,
      MODULE,
      FILE.replace(/\.json$/, ''),
      EXAMPLE.map((n) => n.id),
    );
    assert.equal(outcome, 'imported');
    assert.equal(await conflictNotification(page).count(), 0);
    // What npm start says when its broker is not on 1883: set the port in the broker node.
    await page.evaluate(
      ([id, port]) => {
        const node = RED.nodes.node(id);
        node.broker = '127.0.0.1';
        node.port = String(port);
        node.changed = true;
        RED.nodes.dirty(true);
      },
      [brokerNode.id, broker.port] as const,
    );
    // The import was placed at the canvas' left edge (importExample clicks near it): 60 px of margin for the picture.
    await page.evaluate(
      (ids) => {
        for (const id of ids) {
          const node = RED.nodes.node(id);
          if (node && node.x !== undefined) {
            node.x += 60;
            node.dirty = true;
          }
        }
        RED.nodes.dirty(true);
        RED.view.redraw(true);
      },
      EXAMPLE.map((n) => n.id),
    );
    const subscribed = broker.subscribed(`ems/${HOME.siteReference}/+/set`);
    await deploy(page);
    const deployed = new Set((await getJson<any[]>(new URL('flows', editorSession.nr.url))).map((n) => n.id));
    for (const n of EXAMPLE) assert.ok(deployed.has(n.id), `${n.name || n.type} (${n.id}) deployed`);
    await subscribed;
    for (const n of mqttNodes) {
      await until(
        () => status(n.id),
        (t) => t === 'connected',
        `${n.name || n.type}: connected`,
      );
    }
  });

  it('announces the entities, shows the SOC, and a command from Home Assistant is sent by the site steer node', async function () {
    // Discovery: one retained config per entity (number, select, switch, three sensors).
    // (announced on deploy and as the broker node connects: each config once or twice)
    const configs = await broker.await((p) => /^homeassistant\/\w+\/[\w]+\/config$/.test(p.topic), 6);
    const topics = [...new Set(configs.map((c) => c.topic))];
    assert.deepEqual(topics.map((t) => t.split('/')[1]).sort(), [
      'number',
      'select',
      'sensor',
      'sensor',
      'sensor',
      'switch',
    ]);
    assert.ok(configs.every((c) => c.retain));
    // The device read (every minute, first at start) shows the SOC, and the flow says it is online.
    const soc = await until(
      () => status(read.id),
      (t) => /soc/.test(t),
      "the device read's status",
    );
    assert.match(soc, /^soc [\d.]+ % · \d\d:\d\d$/);
    await broker.await((p) => p.topic === `ems/${HOME.siteReference}/availability` && p.payload === 'online');

    // Home Assistant sets the number "Battery power" to 3 kW (discharge).
    await broker.publish(`ems/${HOME.siteReference}/ess_power/set`, '3');
    const sent = await until(
      () => status(steer.id),
      (t) => t.startsWith('sent'),
      "the site steer node's status",
    );
    const state = await getJson<SteeringState>(`${editorSession.nr.simUrl}/sites/${HOME.siteReference}/steering`);
    const ess = state.components.energyStorageSetting!;
    assert.deepEqual([ess.value, ess.unit], [3, 'kW']);
    assert.equal(sent, `sent ESS 3 kW until ${new Date(ess.validUntil).toISOString().slice(11, 16)}`); // Node-RED runs in UTC here
    assert.match((await dot(steer.id)) ?? '', /status-dot-green/);
    // The states Home Assistant shows: what the service accepted.
    await broker.await((p) => p.topic === `ems/${HOME.siteReference}/ess_power/state` && p.payload === '3');
    await broker.await((p) => p.topic === `ems/${HOME.siteReference}/mode/state` && p.payload === 'discharge');

    // No node of an unknown type, no red status.
    assert.equal(
      await page.locator('#red-ui-workspace-chart .red-ui-flow-node-unknown').count(),
      0,
      'no unknown node type',
    );
    const red = await page
      .locator('#red-ui-workspace-chart .red-ui-flow-node-status')
      .evaluateAll(
        (els) =>
          els.filter(
            (e) =>
              /status-(dot|ring)-red/.test(e.getAttribute('class') ?? '') &&
              (e as SVGElement).getBoundingClientRect().width > 0,
          ).length,
      );
    assert.equal(red, 0, 'no red status');
    assert.doesNotMatch(editorSession.nr.log(), /Uncaught|unhandled/i);

    // The picture: the whole flow at zoom 1, palette and sidebar hidden, nothing selected.
    await page.setViewportSize({ width: 1600, height: 900 });
    await page.evaluate(() => {
      RED.menu.setSelected('menu-item-palette', false);
      RED.menu.setSelected('menu-item-sidebar', false);
      RED.view.select('');
    });
    const fits = async () => {
      const flow = await page.evaluate(() => {
        const groupBoxes = Array.from(
          document.querySelectorAll('#red-ui-workspace-chart g.red-ui-flow-node-group'),
        ).map((e) => e.getBoundingClientRect());
        return {
          left: Math.min(...groupBoxes.map((b) => b.left)),
          top: Math.min(...groupBoxes.map((b) => b.top)),
          right: Math.max(...groupBoxes.map((b) => b.right)),
          bottom: Math.max(...groupBoxes.map((b) => b.bottom)),
        };
      });
      const chart = (await page.locator('#red-ui-workspace-chart').boundingBox())!;
      return {
        flow,
        chart,
        ok:
          flow.left >= chart.x &&
          flow.top >= chart.y &&
          flow.right <= chart.x + chart.width &&
          flow.bottom <= chart.y + chart.height,
      };
    };
    await until(fits, (f) => f.ok, 'the whole flow on the canvas at zoom 1');
    await notificationsGone(page);
    fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
    // The workspace (its tabs and the canvas) down to the flow's last node, not the empty rest.
    const { flow } = await fits();
    const top = (await page.locator('#red-ui-workspace').boundingBox())!.y;
    await page.screenshot({
      path: path.join(SCREENSHOT_DIR, 'flow-ha-control.png'),
      animations: 'disabled',
      clip: { x: 0, y: top, width: Math.ceil(flow.right + 60), height: Math.ceil(flow.bottom + 40 - top) },
      style: '#red-ui-notifications { display: none !important; }',
    });

    // Over the limit (10 kW): refused by the node, nothing sent, the reason to Home Assistant.
    await broker.publish(`ems/${HOME.siteReference}/ess_power/set`, '12');
    const refused = await broker.await((p) => p.topic === `ems/${HOME.siteReference}/error`);
    assert.match(refused[0].payload, /10000 W|10 kW/);
    await until(
      () => status(steer.id),
      (t) => t.startsWith('bad energyStorage'),
      "the site steer node's refusal on its status",
    );
    assert.equal(
      (await getJson<SteeringState>(`${editorSession.nr.simUrl}/sites/${HOME.siteReference}/steering`)).components
        .energyStorageSetting!.value,
      3,
    );

    assert.deepEqual(editorSession.browser.errors, []);
  });
});
