#!/usr/bin/env node
// The last step of `npm run build`: makes the shipped files smaller without changing what they do
// (the installed package with its dependencies must stay under 6 MB, axios and undici being most of it).
//  - dist/**/*.d.ts: only the declarations the public entry (dist/index.d.ts) reaches are kept; the
//    others describe internal modules no import of the package's types can reach.
//  - dist/**/*.js: tsc indents with four spaces; each level becomes one tab. Lines stay as they are
//    (a stack trace's line numbers still point at the same code), and a line that starts inside a
//    template literal is left alone. Each file is checked: esbuild's whitespace-free print of the
//    file must be the same before and after, or the file is kept as tsc wrote it.
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

/** Whether the code outside strings and templates has the same tokens: esbuild prints both without whitespace. */
function sameCode(before, after) {
  const print = (code) => esbuild.transformSync(code, { minifyWhitespace: true, target: 'esnext', loader: 'js' }).code;
  return print(before) === print(after);
}

/**
 * tsc's four-space indentation as tabs, line by line. A line that starts inside a template literal
 * (an odd number of unescaped backticks so far) keeps its spaces: they are part of the string.
 */
function tabIndent(code) {
  let inTemplate = false;
  return code
    .split('\n')
    .map((line) => {
      const out = inTemplate ? line : line.replace(/^(?: {4})+/, (spaces) => '\t'.repeat(spaces.length / 4));
      const backticks = (line.replace(/\\[\\`]/g, '').match(/`/g) || []).length;
      if (backticks % 2) inTemplate = !inTemplate;
      return out;
    })
    .join('\n');
}

const reached = reachedDeclarations();
let declarationsRemoved = 0;
for (const file of filesOf(dist, '.d.ts')) {
  if (reached.has(file)) continue;
  fs.rmSync(file);
  declarationsRemoved++;
}

let indented = 0;
const keptAsIs = [];
for (const file of filesOf(dist, '.js')) {
  const code = fs.readFileSync(file, 'utf8');
  const tabbed = tabIndent(code);
  if (tabbed === code) continue;
  if (!sameCode(code, tabbed)) {
    keptAsIs.push(path.relative(root, file));
    continue;
  }
  fs.writeFileSync(file, tabbed);
  indented++;
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
  `trim-dist: ${declarationsRemoved} internal declaration files removed, ${indented} files tab-indented` +
    `${keptAsIs.length ? ` (${keptAsIs.length} kept as tsc wrote them: ${keptAsIs.join(', ')})` : ''}, ${compacted} message catalogues compacted, ${minified} editor scripts minified`,
);
