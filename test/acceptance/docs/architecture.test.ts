/**
 * docs/architecture.md says what the code is: its folder list is src/'s folders,
 * and its table of migration versions is the code's (src/nodes/shared/migrations.ts). The README
 * stays one screen and a bit (at most 400 lines) and links every page of docs/.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { currentVersion } from '../../../src/nodes/shared/migrations';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const doc = fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');

describe('docs: architecture and README', () => {
  it("the folder list is src/'s folders", () => {
    const listed = [...doc.matchAll(/^src\/([a-z-]+)\/\s/gm)].map((m) => m[1]).sort();
    const actual = fs
      .readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    assert.deepEqual(listed, actual);
  });

  it("a node's folder as shown is the code's: every file it names exists, and the build scripts it names", () => {
    const block = /^src\/nodes\/([a-z-]+)\/\n([\s\S]*?)^```/m.exec(doc);
    assert.ok(block, "docs/architecture.md shows a node's folder");
    const names = block[2]
      .split('\n')
      .filter((line) => /^ {4}\S/.test(line)) // an entry; a deeper indent continues its description
      .map((line) => line.trim().split(/\s{2,}/)[0])
      .flatMap((entry) => entry.split(/,\s*/));
    assert.ok(names.some((n) => n.endsWith('.html')) && names.some((n) => n.startsWith('locales/de/')), names.join());
    for (const name of names)
      assert.ok(fs.existsSync(path.join(ROOT, 'src', 'nodes', block[1], name)), `src/nodes/${block[1]}/${name}`);
    const scripts = [...doc.matchAll(/`(scripts\/[\w-]+\.js)`/g)].map((m) => m[1]);
    assert.ok(scripts.includes('scripts/assemble-nodes.js'), "how the build assembles Node-RED's files");
    for (const script of scripts) assert.ok(fs.existsSync(path.join(ROOT, script)), script);
  });

  it("the migration versions are the code's, for every node of package.json", () => {
    const rows = new Map([...doc.matchAll(/^\| `(ems-[a-z-]+)` \| (\d+) \|$/gm)].map((m) => [m[1], Number(m[2])]));
    for (const type of Object.keys(PKG['node-red'].nodes))
      assert.equal(rows.get(type), currentVersion(type), `${type} in docs/architecture.md`);
    assert.equal(rows.size, Object.keys(PKG['node-red'].nodes).length);
  });

  it('the README is at most 400 lines, shows npm install, npm start and npm test in its first 40 lines, lists the seven nodes and links every page of docs/', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    assert.ok(readme.split('\n').length <= 400, `${readme.split('\n').length} lines`);
    assert.match(readme, /npm start/);
    assert.match(readme, /npm test/);
    const firstScreen = readme.split('\n').slice(0, 40).join('\n');
    for (const command of ['npm install', 'npm start', 'npm test'])
      assert.match(
        firstScreen,
        new RegExp(`^${command}\\b`, 'm'),
        `${command} in the first 40 lines, at the start of a line`,
      );
    for (const type of Object.keys(PKG['node-red'].nodes)) assert.ok(readme.includes(`\`${type}\``), type);
    for (const f of fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')))
      assert.ok(readme.includes(`](docs/${f})`), `docs/${f} linked`);
    for (const [, target] of readme.matchAll(/\]\(((?:docs\/)?[\w./-]+\.md)(?:#[\w-]+)?\)/g))
      assert.ok(fs.existsSync(path.join(ROOT, target)), `${target} exists`);
  });
});
