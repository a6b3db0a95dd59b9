#!/usr/bin/env node
// Builds what the editor runs. First the files Node-RED loads for each node (scripts/assemble-nodes.js:
// dist/nodes/<type>.{js,html}, locales/, icons/, from src/nodes/<node>/). Then serves the runtime's own
// tables to the editor: each compiled module below (it imports nothing) is wrapped into a browser script in
// resources/ (git-ignored, packed), which sets a global the panels read; modules that import others of dist/
// are bundled with them (`bundles`). The editor thus checks and upgrades with the very code the runtime runs.
// Last, the editor code itself (src/editor/ and each node's panel src/nodes/<node>/panel.ts, compiled by
// tsconfig.editor.json into dist/browser/, DOM types, ES2017) is bundled the same way into resources/editor.js
// and resources/<node>-panel.js, and dist/browser/ removed (it is not shipped: the package carries the bundles).
'use strict';
const fs = require('fs');
const path = require('path');
const root = path.resolve(__dirname, '..');
const { nodes } = require('./assemble-nodes');
// Every script in resources/ is built here (none is in git): a fresh clone has no resources/ yet.
fs.mkdirSync(path.join(root, 'resources'), { recursive: true });
const cli = path.join(root, 'dist', 'simulator', 'cli.js');
if (fs.existsSync(cli)) fs.chmodSync(cli, 0o755);

/** [compiled module, script in resources/, global it sets, whether the build fails without it]. */
const browserModules = [
  ['dist/protocol/limits.js', 'resources/limits.js', 'EmsPartnerLimits', true],
  // the config node's settings the editor sends to the admin routes, and those the routes accept
  ['dist/nodes/config/config-keys.js', 'resources/config-keys.js', 'EmsPartnerConfigKeys', true],
];
for (const [from, to, global, required] of browserModules) {
  const file = path.join(root, from);
  if (!fs.existsSync(file)) {
    if (required) throw new Error(`${from} is missing: it is built from src by tsc`);
    continue;
  }
  const code = fs
    .readFileSync(file, 'utf8')
    .replace(/^\/\/# sourceMappingURL=.*$/m, '')
    .trimEnd();
  if (/\brequire\s*\(/.test(code))
    throw new Error(`${from} imports another module; the editor gets it as a single script, so it must import nothing`);
  const script =
    `// Built by scripts/copy-editor.js from ${from} (do not edit): window.${global} for the editor.\n` +
    '(function () {\n' +
    '    var module = { exports: {} }, exports = module.exports;\n' +
    `${code}\n` +
    `    window.${global} = module.exports;\n` +
    '})();\n';
  fs.writeFileSync(path.join(root, to), script);
}

/**
 * Modules that import others of dist/ (relative requires only): bundled with those into one
 * browser script, each module in its own function, joined by a small `require` of the bundle.
 * [entry module, script in resources/, global it sets]. The editor checks with the runtime's code:
 * every node's migrations, the config node's paths (protocol/paths.ts), the ems-request node's path and method, the
 * price plan node's settings, and the site steer node's site list, rows and power limits.
 */
const bundles = [
  // each node type's current version (the panels' `version` default) and its upgrade steps: the machinery
  // (src/nodes/shared/migrations.ts) with each node's steps (src/nodes/<node>/migrations.ts, importing shared/migration-step.ts)
  ['dist/nodes/shared/migrations.js', 'resources/migrations.js', 'EmsPartnerMigrations'],
  ['dist/protocol/paths.js', 'resources/paths.js', 'EmsPartnerPaths'],
  ['dist/client/request-path.js', 'resources/request-path.js', 'EmsPartnerRequestPath'],
  // the price plan node's checks (src/nodes/plan/check.ts: the planner's input checks and how the node gathers its settings)
  ['dist/nodes/plan/check.js', 'resources/plan-input.js', 'EmsPartnerPlanInput'],
  // the site steer panel's rules (src/protocol/steer-rules.ts): the site list, each mode's rows, the node's power limits
  ['dist/protocol/steer-rules.js', 'resources/steer-rules.js', 'EmsPartnerSteerRules'],
];
/**
 * The modules an entry (a path from the package's root) needs, entry last: [id relative to `base`
 * (default dist/), code]. Throws on a require of a package or a Node module.
 */
function collect(entry, base = 'dist') {
  const dist = path.join(root, base);
  const out = new Map();
  const visit = (file) => {
    const id = path.relative(dist, file).split(path.sep).join('/');
    if (out.has(id)) return;
    if (!fs.existsSync(file)) throw new Error(`${id} is missing: it is built from src by tsc`);
    const code = fs
      .readFileSync(file, 'utf8')
      .replace(/^\/\/# sourceMappingURL=.*$/m, '')
      .trimEnd();
    out.set(id, null); // (a cycle ends here)
    for (const m of code.matchAll(/\brequire\s*\(\s*(['"])([^'"]+)\1\s*\)/g)) {
      if (!m[2].startsWith('.'))
        throw new Error(`${id} requires "${m[2]}"; a bundle for the editor may require only modules of dist/`);
      visit(path.resolve(path.dirname(file), `${m[2]}.js`));
    }
    out.delete(id);
    out.set(id, code);
  };
  visit(path.join(root, entry));
  return [...out.entries()];
}
/**
 * One browser script of `modules` (collect's), setting window[global] to the last one's exports; `from` names the
 * sources. `lazy`: the modules run when window[global] is first read, not when the script loads. Node-RED loads a
 * package's <script src> tags in any order, then runs its inline scripts: a panel's code, which reads the other
 * scripts' globals as it runs, thus runs when its definition (inline) reads it, all the scripts loaded.
 */
function bundle(modules, global, from, lazy = false) {
  const entryId = modules[modules.length - 1][0];
  const defs = modules
    .map(([id, code]) => `    defs[${JSON.stringify(id)}] = function (module, exports, require) {\n${code}\n    };`)
    .join('\n');
  return (
    `// Built by scripts/copy-editor.js from ${from} (do not edit): window.${global} for the editor.\n` +
    '(function () {\n' +
    '    var defs = {}, cache = {};\n' +
    `${defs}\n` +
    '    function load(id) {\n' +
    '        if (cache[id]) { return cache[id].exports; }\n' +
    '        var module = cache[id] = { exports: {} }, dir = id.split("/").slice(0, -1);\n' +
    '        defs[id](module, module.exports, function (rel) {\n' +
    '            var parts = dir.slice();\n' +
    '            rel.split("/").forEach(function (p) { if (p === "..") { parts.pop(); } else if (p !== ".") { parts.push(p); } });\n' +
    '            return load(parts.join("/") + ".js");\n' +
    '        });\n' +
    '        return module.exports;\n' +
    '    }\n' +
    (lazy
      ? `    Object.defineProperty(window, ${JSON.stringify(global)}, { configurable: true, enumerable: true, get: function () {\n` +
        `        var value = load(${JSON.stringify(entryId)});\n` +
        `        Object.defineProperty(window, ${JSON.stringify(global)}, { value: value, enumerable: true });\n` +
        '        return value;\n' +
        '    } });\n'
      : `    window.${global} = load(${JSON.stringify(entryId)});\n`) +
    '})();\n'
  );
}
for (const [from, to, global] of bundles) {
  const modules = collect(from);
  fs.writeFileSync(path.join(root, to), bundle(modules, global, modules.map(([id]) => `dist/${id}`).join(', ')));
}

/**
 * The editor code (src/editor/*.ts, src/nodes/<node>/panel.ts): [entry in dist/browser/, script in resources/, global it sets].
 * `npm run build` compiles it with tsconfig.editor.json (DOM, no Node types, ES2017) into dist/browser/;
 * each entry is bundled with the modules of src/editor/ (and node panels) it imports. It reaches the runtime's
 * rules only through the globals above (type-only imports), so a bundle that would carry a module from outside
 * src/editor/ and the panels src/nodes/<node>/panel.ts (a copy of a runtime rule) fails the build.
 */
/** `site-steer` -> `EmsPartnerSiteSteerPanel`: the global a node's panel code sets. */
const panelGlobal = (folder) =>
  `EmsPartner${folder.replace(/(^|-)([a-z])/g, (_, __, letter) => letter.toUpperCase())}Panel`;
const editorBundles = [
  // the shared editor code (field helpers, validators, admin-route calls, pickers): every panel
  ['dist/browser/editor/editor.js', 'resources/editor.js', 'EmsPartnerEditor'],
  // each node's panel code (src/nodes/<node>/panel.ts), which its <type>.html loads and names in its definition
  ...nodes
    .filter(([folder]) => fs.existsSync(path.join(root, 'src', 'nodes', folder, 'panel.ts')))
    .map(([folder]) => [`dist/browser/nodes/${folder}/panel.js`, `resources/${folder}-panel.js`, panelGlobal(folder)]),
];
const browserDir = path.join(root, 'dist', 'browser');
if (!fs.existsSync(path.join(browserDir, 'editor')))
  throw new Error('dist/browser/editor is missing: it is built from src/editor by tsc -p tsconfig.editor.json');
for (const [from, to, global] of editorBundles) {
  const modules = collect(from, 'dist/browser');
  for (const [id] of modules) {
    if (!id.startsWith('editor/') && !/^nodes\/[a-z-]+\/panel(-[a-z-]+)?\.js$/.test(id))
      throw new Error(
        `${from} imports dist/browser/${id}; the editor code reaches the runtime's modules through their scripts in resources/ (window.EmsPartner*), type-only`,
      );
  }
  fs.writeFileSync(
    path.join(root, to),
    bundle(
      modules,
      global,
      `${modules.map(([id]) => `src/${id.replace(/\.js$/, '.ts')}`).join(', ')}, compiled with tsconfig.editor.json`,
      global !== 'EmsPartnerEditor',
    ),
  );
}
fs.rmSync(browserDir, { recursive: true, force: true });
