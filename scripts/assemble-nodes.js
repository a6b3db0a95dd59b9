#!/usr/bin/env node
// Assembles the files Node-RED loads for each node set from the node's own folder. A node lives in
// src/nodes/<node>/: its runtime (index.ts, compiled by tsc into dist/nodes/<node>/), its editor panel
// (<type>.html: the definition and the form; panel.ts: the panel's typed code, bundled by copy-editor.js
// into resources/<node>-panel.js), its messages and help (locales/<lang>/<type>.json and .html).
// Node-RED finds a node set's html and message catalog beside its entry file and names the catalog after
// the node set, so the build writes, in dist/nodes/ (git-ignored, packed):
//   <type>.js                 the entry package.json "node-red".nodes names: requires ./<node>
//   <type>.html               the panel, as written in the folder
//   locales/<lang>/<type>.*   the messages and help
//   icons/                    from icons/
// The node sets and types stay those of package.json: a folder's panel must match an entry there, one to one.
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const sources = path.join(root, 'src', 'nodes');
const out = path.join(root, 'dist', 'nodes');

/** Each node folder with an editor panel: [folder, node type], the type read from its panel's file name. */
function nodeFolders() {
  const found = [];
  for (const folder of fs.readdirSync(sources).sort()) {
    const dir = path.join(sources, folder);
    if (!fs.statSync(dir).isDirectory()) continue;
    const panels = fs.readdirSync(dir).filter((name) => /^ems-[a-z-]+\.html$/.test(name));
    if (panels.length > 1) throw new Error(`src/nodes/${folder} holds ${panels.length} panels; one node per folder`);
    if (panels.length === 1) found.push([folder, panels[0].replace(/\.html$/, '')]);
  }
  return found;
}

/** Throws unless package.json "node-red".nodes names each type once, at dist/nodes/<type>.js. */
function checkEntries(nodes) {
  const declared = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))['node-red'].nodes;
  const expected = Object.fromEntries(nodes.map(([, type]) => [type, `dist/nodes/${type}.js`]));
  const mismatch = (a, b) => Object.keys(a).filter((type) => a[type] !== b[type]);
  const wrong = [...new Set([...mismatch(declared, expected), ...mismatch(expected, declared)])];
  if (wrong.length > 0)
    throw new Error(
      `package.json "node-red".nodes and the panels in src/nodes/*/ disagree on ${wrong.join(', ')}: ` +
        'each node set is dist/nodes/<type>.js, built from the folder holding <type>.html',
    );
}

function assemble(folder, type) {
  const dir = path.join(sources, folder);
  fs.writeFileSync(
    path.join(out, `${type}.js`),
    "'use strict';\n" +
      `// Built by scripts/assemble-nodes.js (do not edit): Node-RED's entry for ${type}, whose panel and\n` +
      '// locales Node-RED finds beside this file; the node itself is the folder.\n' +
      `module.exports = require('./${folder}');\n`,
  );
  fs.copyFileSync(path.join(dir, `${type}.html`), path.join(out, `${type}.html`));
  const locales = path.join(dir, 'locales');
  for (const lang of fs.readdirSync(locales)) {
    const files = fs.readdirSync(path.join(locales, lang));
    const stray = files.filter((name) => !name.startsWith(`${type}.`));
    if (stray.length > 0) throw new Error(`src/nodes/${folder}/locales/${lang} holds ${stray.join(', ')}: not ${type}`);
    fs.mkdirSync(path.join(out, 'locales', lang), { recursive: true });
    for (const name of files) fs.copyFileSync(path.join(locales, lang, name), path.join(out, 'locales', lang, name));
  }
}

const nodes = nodeFolders();
checkEntries(nodes);
fs.mkdirSync(out, { recursive: true });
for (const [folder, type] of nodes) assemble(folder, type);
const icons = path.join(root, 'icons');
if (fs.existsSync(icons)) fs.cpSync(icons, path.join(out, 'icons'), { recursive: true });

module.exports = { nodes };
