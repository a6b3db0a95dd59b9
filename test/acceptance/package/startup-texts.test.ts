/**
 * The node files register their types without loading the shared node code (the status texts among
 * it): it loads with the first node made. The texts every node shares come from the config node's
 * catalog, bound when flows that hold a node of the package start, so a flow without any config node
 * shows them in the runtime's language too (here `lang: 'de'`). The Node-RED tests need the build (dist/nodes).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, makeUserDir } from '../../browser/lib/node-red';
import { start, type Spawned } from '../../helpers/spawned';
import { nodeRedDir } from '../../helpers/node-red-path';

describe('package: shared status texts without a config node', function () {
  this.timeout(90_000);
  let red: Spawned | undefined;
  let dir = '';

  before(() => {
    if (!fs.existsSync(path.join(REPO, 'dist', 'nodes', 'ems-device-read.js')))
      assert.fail('dist/ is built (run `npm run build` first; npm test does)');
  });

  after(async () => {
    await red?.stop('SIGTERM', 10_000);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('de: a device read without a server, in a flow without config node, shows the German shared text', async () => {
    dir = makeUserDir('startup-texts-');
    fs.writeFileSync(
      path.join(dir, 'settings.js'),
      "module.exports = { uiHost: '127.0.0.1', flowFile: 'flows.json', lang: 'de', telemetry: { enabled: false }, editorTheme: { tours: false } };\n",
    );
    const flows = [
      { id: 'tab1', type: 'tab', label: 'texts' },
      { id: 'st', type: 'status', z: 'tab1', scope: null, wires: [['log']] },
      {
        id: 'log',
        type: 'function',
        z: 'tab1',
        name: 'status',
        func: 'node.warn(JSON.stringify({ id: msg.status.source.id, text: msg.status.text })); return null;',
        outputs: 1,
        wires: [[]],
      },
      { id: 'fire', type: 'inject', z: 'tab1', once: true, onceDelay: 0.2, repeat: '', props: [], wires: [['orphan']] },
      { id: 'orphan', type: 'ems-device-read', z: 'tab1', server: '', mode: 'devices', version: 1, wires: [[]] },
    ];
    fs.writeFileSync(path.join(dir, 'flows.json'), JSON.stringify(flows));
    red = start(
      process.execPath,
      [path.join(nodeRedDir, 'red.js'), '-p', '0', '-u', dir, '-s', path.join(dir, 'settings.js')],
      { cwd: dir, env: { ...process.env } },
    );
    await red.waitFor(/\[function:status\] \{"id":"orphan","text":"ungültig: server"\}$/m, 60_000);
  });
});
