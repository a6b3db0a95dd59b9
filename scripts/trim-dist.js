#!/usr/bin/env node
// The last step of `npm run build`: makes the shipped files smaller without changing what they do
// (the installed package with its dependencies must stay under 6 MB, axios and undici being most of it).
//  - dist/**/*.d.ts: only the declarations the public entry (dist/index.d.ts) reaches are kept; the
//    others describe internal modules no import of the package's types can reach. The kept ones lose
//    their doc comments (types and names stay; the prose is the API reference's, `npm run docs`).
//  - dist/**/*.js (what Node-RED and a user's require load), Node-RED's entry files aside: whitespace
//    removed by esbuild, names and strings kept, nothing else changed (no identifier renamed, no syntax
//    lowered). A stack trace points at a column of the built file of the same version. The modules the
//    editor's bundles are made of were read before (scripts/copy-editor.js runs first).
//  - dist/nodes/locales/*/*.json (labels and messages, read with JSON.parse): printed without indentation.
//  - resources/*.js (the scripts the editor loads in the browser): whitespace removed, names kept (shortened
//    local names broke the panels' pickers in the editor), their first line (how the file is built) kept.
'use strict';
const fs = require('fs');
const path = require('path');
const esbuild = require('esbuild');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');

/** Every file below `dir` whose name ends with `suffix`. */
function filesOf(dir, suffix) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesOf(file, suffix);
    return entry.name.endsWith(suffix) ? [file] : [];
  });
}

/** The declaration files dist/index.d.ts reaches through relative imports and re-exports. */
function reachedDeclarations() {
  const reached = new Set();
  const queue = [path.join(dist, 'index.d.ts')];
  while (queue.length) {
    const file = queue.pop();
    if (reached.has(file)) continue;
    reached.add(file);
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)['"](\.{1,2}\/[^'"]*)['"]/gm)) {
      const base = path.resolve(path.dirname(file), match[1].replace(/\.js$/, ''));
      const found = [`${base}.d.ts`, path.join(base, 'index.d.ts')].find((f) => fs.existsSync(f));
      if (!found) throw new Error(`${path.relative(root, file)} imports ${match[1]}, which has no declaration file`);
      queue.push(found);
    }
  }
  return reached;
}

/** Code without whitespace: esbuild's print, names and syntax as they are (a hashbang and 'use strict' kept). */
function withoutWhitespace(code) {
  return esbuild.transformSync(code, { minifyWhitespace: true, target: 'esnext', loader: 'js' }).code;
}

/**
 * A declaration file without its doc comments (`/** … *\/` blocks, each on lines of its own as tsc prints
 * them) and the blank lines they leave.
 */
function withoutDocComments(text) {
  return text.replace(/^[ \t]*\/\*\*(?:(?!\*\/)[\s\S])*\*\/[ \t]*\n/gm, '');
}

const reached = reachedDeclarations();
let declarationsRemoved = 0;
let declarationsKept = 0;
for (const file of filesOf(dist, '.d.ts')) {
  if (!reached.has(file)) {
    fs.rmSync(file);
    declarationsRemoved++;
    continue;
  }
  fs.writeFileSync(file, withoutDocComments(fs.readFileSync(file, 'utf8')));
  declarationsKept++;
}

// Node-RED's entry files (dist/nodes/<type>.js, one require each, written by assemble-nodes.js) stay as they are:
// tools that check a node package (node-red-dev's scorecard) read them as text.
const entries = new Set(
  Object.values(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))['node-red'].nodes).map((file) =>
    path.join(root, file),
  ),
);
let minifiedDist = 0;
for (const file of filesOf(dist, '.js')) {
  if (entries.has(file)) continue;
  fs.writeFileSync(file, withoutWhitespace(fs.readFileSync(file, 'utf8')));
  minifiedDist++;
}

let compacted = 0;
for (const file of filesOf(path.join(dist, 'nodes', 'locales'), '.json')) {
  fs.writeFileSync(file, JSON.stringify(JSON.parse(fs.readFileSync(file, 'utf8'))));
  compacted++;
}

let minified = 0;
for (const file of filesOf(path.join(root, 'resources'), '.js')) {
  const code = fs.readFileSync(file, 'utf8');
  const firstLine = code.startsWith('//') ? code.slice(0, code.indexOf('\n') + 1) : '';
  const small = esbuild.transformSync(code, {
    minifyWhitespace: true,
    minifyIdentifiers: false,
    keepNames: true,
    target: 'esnext',
    loader: 'js',
  }).code;
  fs.writeFileSync(file, firstLine + small);
  minified++;
}

// On stderr: `npm pack --json` runs the build (prepare) and its stdout must stay JSON.
console.error(
  `trim-dist: ${declarationsRemoved} internal declaration files removed, ${declarationsKept} without doc comments, ` +
    `${minifiedDist} files of dist/ and ${minified} editor scripts without whitespace, ${compacted} message catalogues compacted`,
);
