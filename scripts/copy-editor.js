#!/usr/bin/env node
// Copies the editor files (panels, help and labels, icons) next to the compiled node JavaScript,
// where Node-RED looks for them: dist/nodes/<type>.html, dist/nodes/locales/, dist/nodes/icons/.
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
