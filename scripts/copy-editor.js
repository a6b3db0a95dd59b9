#!/usr/bin/env node
// Copies the editor files (panels, help and labels, icons) next to the compiled node JavaScript,
// where Node-RED looks for them: dist/nodes/<type>.html, dist/nodes/locales/, dist/nodes/icons/.
// Then serves the runtime's own tables to the editor: each compiled module below (it imports
// nothing) is wrapped into a browser script in resources/ (git-ignored, packed), which sets a
// global the panels read. The editor thus checks and upgrades with the very code the runtime runs.
'use strict';
const fs = require('fs');
const path = require('path');
const root = path.resolve(__dirname, '..');
const out = path.join(root, 'dist', 'nodes');
fs.mkdirSync(out, { recursive: true });
const copies = [
  [path.join(root, 'nodes'), out],
  [path.join(root, 'icons'), path.join(out, 'icons')],
];
for (const [from, to] of copies) {
  if (fs.existsSync(from)) fs.cpSync(from, to, { recursive: true });
}
const cli = path.join(root, 'dist', 'simulator', 'cli.js');
if (fs.existsSync(cli)) fs.chmodSync(cli, 0o755);

/** [compiled module, script in resources/, global it sets, whether the build fails without it]. */
const browserModules = [
  ['dist/protocol/limits.js', 'resources/limits.js', 'EmsPartnerLimits', true],
  ['dist/nodes/migrations.js', 'resources/migrations.js', 'EmsPartnerMigrations', false],
];
for (const [from, to, global, required] of browserModules) {
  const file = path.join(root, from);
  if (!fs.existsSync(file)) {
    if (required) throw new Error(`${from} is missing: it is built from src by tsc`);
    continue;
  }
  const code = fs.readFileSync(file, 'utf8').replace(/^\/\/# sourceMappingURL=.*$/m, '').trimEnd();
  if (/\brequire\s*\(/.test(code)) throw new Error(`${from} imports another module; the editor gets it as a single script, so it must import nothing`);
  const script = `// Built by scripts/copy-editor.js from ${from} (do not edit): window.${global} for the editor.\n`
    + '(function () {\n'
    + '    var module = { exports: {} }, exports = module.exports;\n'
    + `${code}\n`
    + `    window.${global} = module.exports;\n`
    + '})();\n';
  fs.writeFileSync(path.join(root, to), script);
}
