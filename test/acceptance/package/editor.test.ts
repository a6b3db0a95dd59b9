/**
 * In the Node-RED editor (a real browser on the `npm start` demo): the demo flow and every
 * example, imported as Import ▸ Examples does, have no invalid node (red triangle) and no
 * node drawn over another.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { exampleFiles, readExample } from '../../helpers/examples';
import { start, type Spawned } from '../../helpers/spawned';

const ROOT = path.resolve(__dirname, '..', '..', '..');
declare const RED: any;

/** Invalid nodes and overlapping pairs on the editor's active tab (runs in the page). */
function problemsOnActiveTab(): string[] {
  const nodes: any[] = [];
  RED.nodes.eachNode((n: any) => {
    if (n.z === RED.workspaces.active()) nodes.push(n);
  });
  const out: string[] = [];
  for (const n of nodes)
    if (!n.valid) out.push(`invalid ${n.type} "${n.name}": ${JSON.stringify(n.validationErrors ?? [])}`);
  RED.nodes.eachConfig((n: any) => {
    if (n.valid === false) out.push(`invalid config ${n.type} "${n.name}"`);
  });
  for (const a of nodes) {
    for (const b of nodes) {
      if (a === b || a.type === 'comment' || b.type === 'comment' || a.x > b.x) continue;
      if (Math.abs(a.y - b.y) < (a.h + b.h) / 2 && a.x + a.w / 2 + 10 > b.x - b.w / 2)
        out.push(`"${a.name || a.label}" overlaps "${b.name || b.label}"`);
    }
  }
  return out;
}

describe('editor: the demo flow and the examples import cleanly', function () {
  this.timeout(90_000);
  const userDir = path.join(ROOT, '.test-tmp', `editor-demo-${process.pid}`);
  const profile = path.join(ROOT, '.test-tmp', `editor-chrome-${process.pid}`);
  let demo: Spawned;
  let ctx: any;
  let page: any;

  before(async () => {
    fs.rmSync(userDir, { recursive: true, force: true });
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', EMS_DEMO_USERDIR: userDir };
    delete env.NODE_RED_PATH;
    demo = start(process.execPath, [path.join(ROOT, 'scripts', 'start-demo.js')], { cwd: ROOT, env });
    const base = (await demo.waitFor(/Editor: {4}(http:\/\/127\.0\.0\.1:\d+)\/\n/, 45_000))[1];
    const { chromium } = require('playwright-core');
    const executablePath = fs.existsSync('/usr/bin/chromium')
      ? '/usr/bin/chromium'
      : await require('@sparticuz/chromium').executablePath();
    ctx = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      viewport: { width: 1400, height: 1000 },
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    });
    page = await ctx.newPage();
    await page.goto(`${base}/`);
    await page.waitForFunction(
      () =>
        typeof RED !== 'undefined' &&
        RED.nodes?.getType?.('ems-site-steer') &&
        RED.workspaces?.active?.() &&
        RED.nodes.workspace(RED.workspaces.active()),
      null,
      { timeout: 45_000 },
    );
  });

  after(async () => {
    await ctx?.close();
    await demo?.stop('SIGTERM');
    fs.rmSync(userDir, { recursive: true, force: true });
    fs.rmSync(profile, { recursive: true, force: true });
  });

  /** The problems on the active tab once the editor has drawn it (node widths are set on draw). */
  async function problems(): Promise<string[]> {
    await page.waitForFunction(
      () => {
        const ns: any[] = [];
        RED.nodes.eachNode((n: any) => {
          if (n.z === RED.workspaces.active()) ns.push(n);
        });
        return ns.length > 0 && ns.every((n) => !n.resize && n.w > 0 && document.getElementById(n.id));
      },
      null,
      { timeout: 15_000 },
    );
    return page.evaluate(problemsOnActiveTab);
  }

  it('the demo flow', async () => {
    const tab = await page.evaluate(() => RED.nodes.workspace(RED.workspaces.active()).label);
    assert.equal(tab, 'EMS demo');
    assert.deepEqual(await problems(), []);
  });

  for (const file of exampleFiles()) {
    it(file, async () => {
      await page.evaluate((flow: any[]) => {
        // Each example brings its tab: the import adds it (with a new id here), and it is shown.
        const before = new Set<string>();
        RED.nodes.eachWorkspace((w: any) => {
          before.add(w.id);
        });
        RED.view.importNodes(flow, { generateIds: true, touchImport: true });
        RED.nodes.eachWorkspace((w: any) => {
          if (!before.has(w.id)) RED.workspaces.show(w.id);
        });
      }, readExample(file));
      assert.deepEqual(await problems(), []);
    });
  }
});
