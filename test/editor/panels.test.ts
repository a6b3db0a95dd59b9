/**
 * Each node's panel code (resources/<node>-panel.js, built from src/nodes/<node>/panel.ts) as Node-RED loads
 * it: a package's <script src> tags in any order, then the panels' inline definitions. A panel's script that
 * loads before the scripts it reads (editor.js, limits.js, paths.js, ...) still gives its definition the
 * validators and functions it names.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { nodeFolder, nodeTypes, panelFile } from '../helpers/node-files';

const RESOURCES = path.join(__dirname, '..', '..', 'resources');
/** The resources/ scripts a panel's definition names, panel scripts first (the order a slow editor.js gives). */
const SCRIPTS = fs
  .readdirSync(RESOURCES)
  .filter((f) => f.endsWith('.js'))
  .sort((a, b) => Number(b.endsWith('-panel.js')) - Number(a.endsWith('-panel.js')) || a.localeCompare(b));

function browser(): any {
  const $: any = () => ({ length: 0 });
  $.extend = (_deep: boolean, _to: object, from: object) => JSON.parse(JSON.stringify(from));
  $.ajax = () => ({ fail: () => undefined });
  const ctx: any = {
    $,
    RED: {
      events: { on: () => undefined },
      nodes: { getType: () => ({ _: (k: string) => k }), node: () => undefined },
      settings: {},
      utils: {},
    },
  };
  ctx.window = ctx;
  vm.createContext(ctx);
  for (const f of SCRIPTS) vm.runInContext(fs.readFileSync(path.join(RESOURCES, f), 'utf8'), ctx, { filename: f });
  return ctx;
}

describe("editor: each node's panel code, loaded in any order", () => {
  it('every node with a panel.ts has its script, named by its panel', () => {
    for (const type of nodeTypes()) {
      const folder = path.basename(nodeFolder(type));
      assert.ok(fs.existsSync(path.join(nodeFolder(type), 'panel.ts')), `src/nodes/${folder}/panel.ts`);
      assert.ok(SCRIPTS.includes(`${folder}-panel.js`), `resources/${folder}-panel.js (npm run build)`);
      assert.match(
        fs.readFileSync(panelFile(type), 'utf8'),
        new RegExp(`src="resources/@ems-partner/node-red/${folder}-panel\\.js"`),
      );
    }
  });

  it("runs each panel's code when its definition reads it, with every script loaded: validators and functions", () => {
    const ctx = browser();
    for (const type of nodeTypes()) {
      const html = fs.readFileSync(panelFile(type), 'utf8');
      const global = /var P = window\.(EmsPartner\w+Panel)/.exec(html)?.[1];
      assert.ok(global, `${type}: its definition reads its panel's code`);
      const panel = ctx[global];
      assert.equal(typeof panel.oneditprepare, 'function', `${global}.oneditprepare`);
      assert.equal(typeof panel.label, 'function', `${global}.label`);
      for (const [, name] of html.matchAll(/validate: v\.(\w+)/g))
        assert.equal(typeof panel.validate[name], 'function', `${global}.validate.${name}`);
    }
  });
});
