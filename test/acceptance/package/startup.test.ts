/**
 * What loading the package costs Node-RED's start-up: requiring its node files (as Node-RED does,
 * every file of package.json's "node-red".nodes, in a fresh process) registers the node types and
 * the admin routes and loads nothing else of the package: not the runtime, the client, the protocol
 * or the nodes' controllers (with the first node made, or the first admin request), nor the HTTP
 * stack (axios, axios-retry, undici, our adapter on undici: on the first request), nor the simulator
 * (when a config node names no server), nor the planner (on the first plan of an ems-plan node).
 * Each is loaded when used, and a flow that never uses it never pays for it. The time itself is measured by the bench
 * (bench/footprint.js, paired starts of a real Node-RED).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

/** The modules a fresh process has loaded after requiring `files`, relative to the package root. */
function loadedBy(files: string[]): string[] {
  const code = `for (const f of ${JSON.stringify(files)}) require(f);
process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const loaded = JSON.parse(execFileSync(process.execPath, ['-e', code], { cwd: ROOT, encoding: 'utf8' })) as string[];
  return loaded.map((f) => path.relative(ROOT, f).split(path.sep).join('/'));
}

describe('package: what requiring the node files loads', function () {
  this.timeout(30_000);
  let loaded: string[] = [];

  before(() => {
    assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'nodes', 'ems-plan.js')), 'dist/ is built (npm test builds first)');
    loaded = loadedBy(Object.values(PKG['node-red'].nodes as Record<string, string>).map((f) => path.join(ROOT, f)));
  });

  it('every node file, and none of the runtime, client, protocol or controllers: they load with the first node', () => {
    for (const f of Object.values(PKG['node-red'].nodes as Record<string, string>)) assert.ok(loaded.includes(f), f);
    assert.deepEqual(
      loaded.filter((f) => /^dist\/(runtime|client|protocol|plan|simulator)\//.test(f)),
      [],
    );
    assert.deepEqual(
      loaded.filter((f) => /^dist\/nodes\/[a-z-]+\/controller\.js$/.test(f) || f === 'dist/nodes/shared/index.js'),
      [],
    );
    // Registration: the entries, each node's index.js, the admin routes' registration and the credentials' declaration.
    assert.ok(loaded.filter((f) => f.startsWith('dist/')).length <= 20, loaded.join(', '));
  });

  it('no HTTP stack: axios, axios-retry and undici load on the first request', () => {
    const http = loaded.filter((f) => /node_modules\/(axios|axios-retry|undici)\//.test(f));
    assert.deepEqual(http, []);
    // Nor our axios adapter on undici, nor the HTTP library's loader.
    assert.deepEqual(
      loaded.filter((f) => /^dist\/client\/(undici-[a-z-]+|http-lib|http-pool|transport)\.js$/.test(f)),
      [],
    );
  });

  it('no simulator and no planner: the built-in simulator starts with a config node that names no server, the planner with the first plan', () => {
    assert.deepEqual(
      loaded.filter((f) => f.startsWith('dist/simulator/')),
      [],
    );
    // What the node's settings are checked with (the planner's input checks) is loaded; the planner is not.
    for (const planner of ['index', 'battery-plan', 'price-plan', 'site-plan', 'site-solve', 'replan'])
      assert.ok(!loaded.includes(`dist/plan/${planner}.js`), `dist/plan/${planner}.js`);
  });
});
