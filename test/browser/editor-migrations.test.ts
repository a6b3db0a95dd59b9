/**
 * Migrations in the editor: the runtime's table (src/nodes/shared/migrations.ts), served as
 * resources/migrations.js, upgrades a flow saved by 0.1.0 when the editor loads it from the
 * runtime and when it is imported; the edit dialog then shows the new properties' defaults.
 * Needs `npm run build` (npm test does).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { useEditor, type Session } from '../helpers/browser';
import { closeTray, nodeProps, openEditor, openNode } from './lib/editor';
import { setFlows, REPO } from './lib/node-red';
import { until } from './lib/wait';

const SAVED: any[] = JSON.parse(fs.readFileSync(path.join(REPO, 'test', 'fixtures', 'flows-0.1.0.json'), 'utf8'));
const ADDED: Record<string, Record<string, unknown>> = {
  'ems-partner-config': {
    maxBodyMB: 10,
    maxValidity: 1440,
    pathDevices: '',
    pathSites: '',
    pathCurtailment: '',
    pathGridLimits: '',
    percentCurtailment: 'send',
    maxPerMinute: 0,
    maxPerDay: 0,
    budgetMode: 'refuse',
    maxWaiting: 10_000,
  },
  'ems-device-read': { maxSplit: 1000 },
  'ems-time-series': { maxSplit: 1000 },
  'ems-site-steer': {
    maxGridPower: '',
    allowMaximizeGridImport: true,
    stopAction: 'expire',
    pvPeakPower: '',
    upperLimitValue: '',
    upperLimitValueType: 'num',
    upperLimitUnit: 'kW',
    lowerLimitValue: '',
    lowerLimitValueType: 'num',
    lowerLimitUnit: 'kW',
    maxGridLimit: '',
    verify: false,
    batteryDevice: '',
    batteryDeviceType: 'str',
    pvDevice: '',
    pvDeviceType: 'str',
    meterDevice: '',
    meterDeviceType: 'str',
    verifyEvery: 0,
    tolerance: 10,
    toleranceMin: 1000,
    sites: '',
    portfolioSplit: 'rating',
  },
};
/** The version each type is at now; its migrations (src/nodes/<node>/migrations.ts) bring a flow saved earlier up to it. */
const VERSION: Record<string, number> = {
  'ems-partner-config': 6,
  'ems-device-read': 2,
  'ems-time-series': 2,
  'ems-site-steer': 6,
};
/** Version 6 of site steer: power limits on by default; a limit a saved flow had off (0, empty or not set) stays off as "none". */
const LIMIT_KEYS = ['maxEssPower', 'maxCurtailment', 'maxGridPower', 'maxGridLimit'];
const expectedOf = (n: any, k: string, v: unknown) =>
  n.type === 'ems-site-steer' && LIMIT_KEYS.includes(k) && (v === undefined || v === '' || v === 0) ? 'none' : v;

/** Each node of the 0.1.0 flow, as the editor holds it under `idOf(saved id)`, is at the current version with the defaults. */
async function assertUpgraded(page: Page, idOf: (id: string) => string): Promise<void> {
  for (const n of SAVED.filter((x) => ADDED[x.type])) {
    const props = await nodeProps(page, idOf(n.id));
    assert.equal(props.version, VERSION[n.type], `${n.id} version`);
    for (const [k, v] of Object.entries(ADDED[n.type])) assert.deepEqual(props[k], expectedOf(n, k, v), `${n.id} ${k}`);
    for (const k of ['name', 'mode', 'device', 'site', 'duration', 'maxEssPower', 'timeout']) {
      if (k in n)
        assert.deepEqual(props[k], expectedOf(n, k, n[k]), `${n.id} ${k} unchanged (a limit that was off: "none")`);
    }
  }
}

describe('editor: migrations of flows saved by 0.1.0', function () {
  this.timeout(120_000);
  let editorSession: Session;
  let page: Page;
  useEditor((session) => {
    editorSession = session;
    page = session.browser.page;
  });

  it("serves the runtime's table to the editor", async () => {
    const value = await page.evaluate(() => {
      const migrations = (window as any).EmsPartnerMigrations;
      return (
        migrations &&
        ['ems-partner-config', 'ems-device-read', 'ems-time-series', 'ems-site-steer'].map((t: string) =>
          migrations.currentVersion(t),
        )
      );
    });
    assert.deepEqual(value, [6, 2, 2, 6]);
  });

  it('a deployed 0.1.0 flow is upgraded as the editor loads it; the dialog shows the defaults', async () => {
    await setFlows(editorSession.nr, SAVED);
    await openEditor(page, editorSession.nr.url);
    await until(
      () => page.evaluate((id) => !!RED.nodes.node(id), 'f010steer00000001'),
      Boolean,
      'the flow in the editor',
    );
    await assertUpgraded(page, (id) => id);
    await page.evaluate((z) => RED.workspaces.show(z), 'f010tab0000000001');
    await openNode(page, 'f010steer00000002');
    assert.equal(await page.locator('#node-input-stopAction').inputValue(), 'expire');
    assert.equal(await page.locator('#node-input-allowMaximizeGridImport').isChecked(), true);
    await closeTray(page, 'cancel');
  });

  it('an imported 0.1.0 flow is upgraded (new ids)', async () => {
    await setFlows(editorSession.nr, []);
    await openEditor(page, editorSession.nr.url);
    const imported: any[] = await page.evaluate((flow) => {
      const before = new Set<string>();
      const each = (fn: (n: any) => void) => {
        RED.nodes.eachNode(fn);
        RED.nodes.eachConfig(fn);
      };
      each((n: any) => {
        before.add(n.id);
      });
      RED.view.importNodes(flow, { generateIds: true, addFlow: true });
      const out: any[] = [];
      each((n: any) => {
        if (before.has(n.id) || !/^ems-/.test(n.type)) return;
        const saved: Record<string, unknown> = { id: n.id, type: n.type };
        for (const k of Object.keys(n._def.defaults)) saved[k] = n[k];
        out.push(saved);
      });
      return out;
    }, SAVED);
    assert.deepEqual(
      imported.map((n) => n.type).sort(),
      SAVED.filter((n) => ADDED[n.type])
        .map((n) => n.type)
        .sort(),
    );
    for (const n of imported) {
      assert.ok(!SAVED.some((x) => x.id === n.id), 'a new id');
      assert.equal(n.version, VERSION[n.type], `${n.type} version`);
      for (const [k, v] of Object.entries(ADDED[n.type])) assert.deepEqual(n[k], expectedOf(n, k, v), `${n.type} ${k}`);
    }
  });
});
