/**
 * The import rules of src/ (docs/architecture.md), read from the files as text
 * (test/helpers/import-graph.ts; TypeScript 7 has no compiler API):
 * - layers: protocol imports nothing of ours; client only protocol; runtime only protocol and
 *   client; plan and simulator only protocol; nodes anything below; in src/nodes a node's folder
 *   imports src/nodes/shared, never another node's folder, and shared imports no node's folder;
 * - barrels: an import from another folder goes through that folder's index.ts, except the
 *   imports listed in BARREL_EXCEPTIONS, each with its reason (mostly modules that
 *   scripts/copy-editor.js bundles for the editor: its bundles follow file requires only, and a
 *   barrel would pull the whole folder, Node modules included, into the browser);
 * - no import circle of any length (type-only imports included);
 * - a node's panel source (src/nodes/<node>/panel.ts, and panel-*.ts beside it) is editor code, compiled by tsconfig.editor.json for
 *   the browser: it imports type-only, from protocol and src/editor, and no module imports it.
 * Folders: src/protocol, src/client, src/runtime, src/plan, src/simulator, each src/nodes/<node>
 * and src/nodes/shared; src/index.ts (the package entry). Node-RED's entries are built (scripts/assemble-nodes.js).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { circles, folderOf, importGraph, layerOf, type ImportEdge } from '../../helpers/import-graph';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** What each layer may import besides itself. */
const LAYERS: Record<string, readonly string[]> = {
  protocol: [],
  client: ['protocol'],
  runtime: ['protocol', 'client'],
  plan: ['protocol'],
  simulator: ['protocol'],
  nodes: ['protocol', 'client', 'runtime', 'plan', 'simulator'],
  // browser code of the node panels (bundled by scripts/copy-editor.js): the rules it shares with the runtime
  editor: ['protocol', 'plan', 'nodes'],
  // src/index.ts, the package entry: the curated public surface (the nodes are loaded from package.json)
  entry: ['protocol', 'client', 'runtime', 'plan', 'simulator'],
};

interface Exception {
  from: string;
  to: string;
  reason: string;
}

const BUNDLED =
  'bundled for the editor by scripts/copy-editor.js, whose bundles follow file requires only: a barrel is a folder ' +
  '(no such file in the bundle) and would pull its whole folder, Node modules included, into the browser';
const leaf = (from: string, targets: string[], reason: string): Exception[] =>
  targets.map((to) => ({ from, to, reason }));

/** The node folders with upgrade steps (src/nodes/<node>/migrations.ts), assembled into one table by shared/migrations.ts. */
const MIGRATION_FOLDERS = ['config', 'device-read', 'time-series', 'site-steer', 'request', 'plan', 'schedule'];
const MIGRATIONS_TABLE =
  "the one migration table is assembled from each node's steps (src/nodes/<node>/migrations.ts): " +
  'the runtime and the editor (resources/migrations.js) upgrade every node type with it';

/** Layer rule exceptions: [from, to, reason]. */
const LAYER_EXCEPTIONS: readonly Exception[] = [
  ...MIGRATION_FOLDERS.map((node) => ({
    from: 'src/nodes/shared/migrations.ts',
    to: `src/nodes/${node}/migrations.ts`,
    reason: MIGRATIONS_TABLE,
  })),
  {
    from: 'src/runtime/builtin-simulator.ts',
    to: 'src/simulator/index.ts',
    reason:
      'the built-in simulator: the runtime starts it in the Node-RED process for a config node set to it, ' +
      'required lazily on first use (a type-only import besides)',
  },
];

/** Cross-folder imports that skip the target folder's index.ts on purpose. */
const BARREL_EXCEPTIONS: readonly Exception[] = [
  ...MIGRATION_FOLDERS.map((node) => ({
    from: 'src/nodes/shared/migrations.ts',
    to: `src/nodes/${node}/migrations.ts`,
    reason: `${MIGRATIONS_TABLE}; resources/migrations.js is ${BUNDLED}`,
  })),
  ...MIGRATION_FOLDERS.map((node) => ({
    from: `src/nodes/${node}/migrations.ts`,
    to: 'src/nodes/shared/migration-step.ts',
    reason: `the leaf every node's steps import (withDefaults, the step type), pulled into resources/migrations.js, ${BUNDLED}`,
  })),
  ...leaf(
    'src/client/request-path.ts',
    ['src/protocol/errors.ts', 'src/protocol/units.ts'],
    `resources/request-path.js is ${BUNDLED}`,
  ),
  ...leaf(
    'src/nodes/plan/check.ts',
    ['src/protocol/errors.ts', 'src/plan/price-input.ts', 'src/plan/site-input.ts'],
    `the entry of resources/plan-input.js, ${BUNDLED}`,
  ),
  ...leaf(
    'src/nodes/plan/message.ts',
    ['src/protocol/errors.ts', 'src/protocol/units.ts', 'src/plan/keys.ts'],
    `pulled into resources/plan-input.js by src/nodes/plan/check.ts, ${BUNDLED}`,
  ),
  ...leaf(
    'src/nodes/plan/forecasts.ts',
    ['src/protocol/errors.ts', 'src/protocol/limits.ts', 'src/plan/price-feed.ts', 'src/plan/forecast.ts'],
    `pulled into resources/plan-input.js by src/nodes/plan/check.ts, ${BUNDLED}`,
  ),
  ...leaf(
    'src/nodes/plan/located.ts',
    ['src/protocol/errors.ts'],
    `pulled into resources/plan-input.js by src/nodes/plan/check.ts, ${BUNDLED}`,
  ),
  ...['src/plan/price-input.ts', 'src/plan/site-input.ts', 'src/plan/price-feed.ts', 'src/plan/forecast.ts'].flatMap(
    (from) =>
      leaf(
        from,
        ['src/protocol/errors.ts', 'src/protocol/limits.ts', 'src/protocol/time.ts', 'src/protocol/units.ts'],
        `pulled into resources/plan-input.js by src/nodes/plan/check.ts, ${BUNDLED}`,
      ),
  ),
  ...leaf(
    'src/plan/keys.ts',
    ['src/protocol/errors.ts'],
    `pulled into resources/plan-input.js by src/nodes/plan/check.ts, ${BUNDLED}`,
  ),
  {
    from: 'src/nodes/config/index.ts',
    to: 'src/nodes/shared/config-node.ts',
    reason:
      "the config node's credentials, declared at registration: the barrel would load the runtime, client and " +
      'protocol at Node-RED start-up; they load with the first node made (src/nodes/config/code.ts)',
  },
  {
    from: 'src/index.ts',
    to: 'src/protocol/types.ts',
    reason:
      'the package entry publishes every type of protocol/types.ts (`export type *`); through the barrel it would publish ' +
      'all of protocol, whose tables and helpers stay internal',
  },
];

/** Folders whose imports may all skip barrels, with the reason. */
const FOLDER_EXCEPTIONS: Readonly<Record<string, string>> = {
  'src/editor': `browser code of the node panels, ${BUNDLED}`,
};

const { files, edges } = importGraph(ROOT);
const resolved = edges.filter((e): e is ImportEdge & { to: string } => e.to !== null);
/** A node's panel source: editor code in its node's folder (checked by its own rule below, not by the layers). */
const isPanel = (file: string) => /^src\/nodes\/[a-z-]+\/panel(-[a-z-]+)?\.ts$/.test(file);
const cross = resolved.filter((e) => folderOf(e.from) !== folderOf(e.to) && !isPanel(e.from));
const show = (e: ImportEdge) => `${e.from}: '${e.spec}'${e.typeOnly ? ' (type)' : ''}`;
const listed = (list: readonly Exception[], e: { from: string; to: string }) =>
  list.some((x) => x.from === e.from && x.to === e.to);

/** Whether `from` may import `to` (both folders), by the layers and the rules within src/nodes. */
function allowed(from: string, to: string): boolean {
  const fromLayer = layerOf(from);
  const toLayer = layerOf(to);
  if (!(fromLayer in LAYERS)) return false;
  if (fromLayer !== toLayer) return LAYERS[fromLayer].includes(toLayer);
  if (fromLayer !== 'nodes') return true;
  // within src/nodes: a node's folder imports shared
  return to === 'src/nodes/shared' && from !== 'src/nodes/shared';
}

describe('architecture: imports in src/', () => {
  it('reads the imports of src/ (and every relative import names a file)', () => {
    assert.ok(files.length > 100 && edges.length > 300, `${files.length} files, ${edges.length} imports`);
    assert.deepEqual(edges.filter((e) => e.to === null).map(show), []);
  });

  it('every folder belongs to a layer', () => {
    const unknown = [...new Set(files.map(folderOf))].filter((f) => !(layerOf(f) in LAYERS));
    assert.deepEqual(unknown, [], 'add the folder to LAYERS in test/acceptance/architecture/imports.test.ts');
  });

  it('no import runs upward against the layers', () => {
    const upward = cross.filter((e) => !allowed(folderOf(e.from), folderOf(e.to)) && !listed(LAYER_EXCEPTIONS, e));
    assert.deepEqual(
      upward.map((e) => `${show(e)} (${folderOf(e.from)} → ${folderOf(e.to)})`),
      [],
    );
  });

  it('an import from another folder goes through its index.ts, or is a listed exception', () => {
    const skipping = cross.filter(
      (e) =>
        e.to !== `${folderOf(e.to)}/index.ts` &&
        !listed(BARREL_EXCEPTIONS, e) &&
        !(folderOf(e.from) in FOLDER_EXCEPTIONS),
    );
    assert.deepEqual(
      skipping.map(show),
      [],
      "import from the folder's index.ts (add the name to its exports), " +
        'or list the import in BARREL_EXCEPTIONS with its reason',
    );
  });

  it('every listed exception has a reason and is still an import of the code', () => {
    for (const x of [...LAYER_EXCEPTIONS, ...BARREL_EXCEPTIONS]) {
      assert.ok(x.reason.length > 20, `${x.from} → ${x.to}: reason`);
      assert.ok(
        resolved.some((e) => e.from === x.from && e.to === x.to),
        `${x.from} → ${x.to} is no import any more: drop the exception`,
      );
    }
  });

  it("a node's panel.ts (editor code) imports type-only, from protocol and src/editor only, and nothing but its own panel files imports it", () => {
    const panels = files.filter(isPanel);
    assert.ok(panels.includes('src/nodes/site-steer/panel.ts'), 'the site steer panel');
    const wrong = resolved.filter(
      (e) =>
        isPanel(e.from) &&
        !(isPanel(e.to) && folderOf(e.to) === folderOf(e.from)) &&
        (!e.typeOnly || !['protocol', 'editor'].includes(layerOf(folderOf(e.to)))),
    );
    assert.deepEqual(
      wrong.map(show),
      [],
      "a panel reaches the runtime's rules through window.EmsPartner*, importing their types only",
    );
    assert.deepEqual(
      resolved.filter((e) => isPanel(e.to) && !(isPanel(e.from) && folderOf(e.from) === folderOf(e.to))).map(show),
      [],
      'a panel is browser code: no module imports it (but its own panel-*.ts)',
    );
  });

  it('there is no import circle in src/, of any length, type-only imports included', () => {
    assert.deepEqual(
      circles(files, resolved).map((c) => c.join(' → ')),
      [],
    );
  });
});
