/**
 * Static checks of the package beyond the Flows library's scorecard: the real tool,
 * `node-red-dev validate`, runs offline in test/acceptance/scorecard/validate.test.ts and judges what it
 * checks (licence field, repository or bugs, scoped name, the node-red keyword, Node-RED and
 * Node.js versions, the number of dependencies, parseable editor files, an example per node).
 * Here: what it does not look at (LICENSE file, README, the whole Node-RED and Node.js ranges,
 * dependencies used, the runtime's type names, core clashes, example node types) and the
 * editor definitions read as the tool reads them (its acorn, its <script> pattern, a literal
 * type and object) with what it silently drops checked too.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { exampleFiles, readExample } from '../../helpers/examples';
import { coreNodesDir } from '../../helpers/node-red-path';

const semver: any = require('semver');
// The parser node-red-dev itself uses (src/libs/checknodes.js), resolved from the tool.
const TOOL_DIR = path.dirname(require.resolve('node-red-dev/package.json'));
const acorn: any = require(require.resolve('acorn', { paths: [TOOL_DIR] }));
const walk: any = require(require.resolve('acorn-walk', { paths: [TOOL_DIR] }));
const ROOT = path.resolve(__dirname, '..', '..', '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const NODES: Record<string, string> = PKG['node-red']?.nodes ?? {};
const REGISTER = /RED\.nodes\.registerType\(\s*(['"])([^'"]+)\1/g;
/** The tool's pattern for the editor's scripts: <script ... type="text/javascript" ...> on one line. */
const SCRIPT = /<script.+?type=['"]text\/javascript['"].*?>([\S\s]*?)<\/script>/gi;

/** Types registered by `RED.nodes.registerType('<literal>'` in the files of a directory tree. */
function registeredTypes(dir: string, ext: RegExp): Set<string> {
  const out = new Set<string>();
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true } as any) as any[]) {
    const file = path.join(e.parentPath ?? e.path, e.name);
    if (!e.isFile() || !ext.test(e.name)) continue;
    for (const m of fs.readFileSync(file, 'utf8').matchAll(REGISTER)) out.add(m[2]);
  }
  return out;
}

/** Every `*.registerType(type, definition)` call of an editor file's scripts, as acorn nodes. */
function registerCalls(html: string): any[] {
  const calls: any[] = [];
  for (const m of html.matchAll(SCRIPT)) {
    walk.simple(acorn.parse(m[1], { ecmaVersion: 'latest' }), {
      CallExpression(node: any) {
        if (node.callee.property?.name === 'registerType') calls.push(node);
      },
    });
  }
  return calls;
}

describe('scorecard: static checks beyond node-red-dev validate', () => {
  it('a LICENSE file that matches the licence field, published', () => {
    const text = fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
    if (PKG.license === 'MIT') assert.match(text, /MIT License|Permission is hereby granted/);
    assert.ok(PKG.files.includes('LICENSE'));
  });

  it('the repository is an https URL (the tool accepts any repository or bugs field)', () => {
    const url = typeof PKG.repository === 'string' ? PKG.repository : PKG.repository?.url;
    assert.match(url, /^(git\+)?https:\/\/.+\/.+(\.git)?$/);
  });

  it('a README that says how to install and use the nodes', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    assert.ok(readme.length > 2000);
    assert.match(readme, /^## Install/m);
    assert.ok(PKG.files.includes('README.md'));
  });

  it('node-red.version covers Node-RED 3.1, 4.x and 5.x (the tool tries only the current ones)', () => {
    const range = PKG['node-red'].version;
    assert.ok(semver.validRange(range), `valid range ${range}`);
    for (const v of ['3.1.0', '3.1.15', '4.0.0', '4.1.15', '5.0.0', '5.9.0'])
      assert.ok(semver.satisfies(v, range), `${v} satisfies ${range}`);
    assert.ok(!semver.satisfies('3.0.2', range), 'older than 3.1 is not claimed');
  });

  it('engines.node admits Node 20.18.1+ and 22 (Node-RED 5 needs 22.9), not older than undici needs, and is no looser than Node-RED 3.1 (14)', () => {
    const range = PKG.engines?.node;
    assert.ok(semver.validRange(range), `valid range ${range}`);
    // 20.18.1 is the oldest Node 20 undici 7 (the client's transport) supports.
    for (const v of ['20.18.1', '22.9.0', '24.0.0']) assert.ok(semver.satisfies(v, range), `${v} satisfies ${range}`);
    const undici = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', 'undici', 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    assert.ok(
      semver.subset(range, undici.engines.node),
      `${range} claims no Node undici (${undici.engines.node}) refuses`,
    );
    assert.ok(semver.gte(semver.minVersion(range), '14.0.0'));
  });

  it('node-red is no dependency, and each dependency is used by dist', () => {
    const deps = Object.keys(PKG.dependencies ?? {});
    for (const f of ['dependencies', 'peerDependencies', 'optionalDependencies'])
      assert.equal(PKG[f]?.['node-red'], undefined, f);
    const dist = [...(fs.readdirSync(path.join(ROOT, 'dist'), { recursive: true } as any) as string[])]
      .filter((f) => f.endsWith('.js'))
      .map((f) => fs.readFileSync(path.join(ROOT, 'dist', f), 'utf8'))
      .join('\n');
    for (const d of deps)
      assert.ok(dist.includes(`require("${d}")`) || dist.includes(`require('${d}')`), `${d} is required by dist`);
  });

  it('the seven node types, each with its built runtime file, published', () => {
    assert.deepEqual(Object.keys(NODES).sort(), [
      'ems-device-read',
      'ems-partner-config',
      'ems-plan',
      'ems-request',
      'ems-schedule',
      'ems-site-steer',
      'ems-time-series',
    ]);
    for (const [type, file] of Object.entries(NODES)) {
      assert.ok(fs.existsSync(path.join(ROOT, file)), `${type}: ${file} (built)`);
      assert.ok(
        PKG.files.some((f: string) => file === f || file.startsWith(`${f}/`)),
        `${file} is published`,
      );
    }
  });

  it('the runtime file registers its type by the literal name of package.json (the file, or the node folder it re-exports)', () => {
    for (const [type, file] of Object.entries(NODES)) {
      let code = fs.readFileSync(path.join(ROOT, file), 'utf8');
      // dist/nodes/<type>.js is one line, `module.exports = require('./<folder>')`: the node is that folder's index.js.
      const folder = /^module\.exports = require\((['"])(\.\/[\w-]+)\1\);$/m.exec(code);
      if (folder) code = fs.readFileSync(path.join(ROOT, path.dirname(file), folder[2], 'index.js'), 'utf8');
      const names = [...code.matchAll(REGISTER)].map((m) => m[2]);
      assert.deepEqual(names, [type], file);
    }
  });

  it('the editor file, read as the tool reads it: one registerType, the literal type of package.json, an object literal whose fields it records are literals (it drops others silently)', () => {
    for (const [type, file] of Object.entries(NODES)) {
      const html = file.replace(/\.js$/, '.html');
      const calls = registerCalls(fs.readFileSync(path.join(ROOT, html), 'utf8'));
      assert.equal(calls.length, 1, `${html}: one registerType call`);
      const [name, def] = calls[0].arguments;
      assert.equal(name.type, 'Literal', `${html}: the type is a literal`);
      assert.equal(name.value, type, html);
      assert.equal(def.type, 'ObjectExpression', `${html}: the definition is an object literal`);
      const props = new Map<string, any>();
      for (const p of def.properties) {
        assert.ok(
          p.type === 'Property' && !p.computed && p.key.type === 'Identifier',
          `${html}: plain keys only (the tool reads key.name)`,
        );
        props.set(p.key.name, p.value);
      }
      for (const k of ['category', 'defaults']) assert.ok(props.has(k), `${html}: ${k}`);
      for (const k of ['category', 'color', 'icon', 'inputs', 'outputs']) {
        if (props.has(k)) assert.equal(props.get(k).type, 'Literal', `${html}: ${k} is a literal`);
      }
      if (props.get('category').value !== 'config') {
        for (const k of ['color', 'icon', 'inputs', 'outputs']) assert.ok(props.has(k), `${html}: ${k}`);
      }
      for (const k of ['defaults', 'credentials']) {
        if (!props.has(k)) continue;
        assert.equal(props.get(k).type, 'ObjectExpression', `${html}: ${k} inline`);
        for (const p of props.get(k).properties) {
          assert.ok(
            p.type === 'Property' && !p.computed && p.key.type === 'Identifier',
            `${html}: ${k} has plain keys`,
          );
        }
      }
      const defaults = props.get('defaults').properties.map((p: any) => p.key.name);
      assert.ok(defaults.includes('name'), `${html}: defaults.name`);
    }
  });

  it('no type clashes with a core node (the tool compares with the catalogue only)', () => {
    const core = registeredTypes(path.join(coreNodesDir, 'core'), /\.js$/);
    assert.ok(core.has('inject') && core.has('mqtt in'), 'core types found');
    for (const type of Object.keys(NODES)) assert.ok(!core.has(type), type);
  });

  it("an examples folder, published, in which every node type is a core one, this package's, node-red-contrib-influxdb's (example 02) or Dashboard 2's (example 09), both devDependencies", () => {
    assert.ok(PKG.files.includes('examples'));
    const contrib = [
      ...registeredTypes(path.join(ROOT, 'node_modules', 'node-red-contrib-influxdb'), /\.js$/), // example 02, a devDependency
      ...registeredTypes(path.join(ROOT, 'node_modules', '@flowfuse', 'node-red-dashboard', 'nodes'), /\.js$/), // example 09, a devDependency
    ];
    for (const dev of ['node-red-contrib-influxdb', '@flowfuse/node-red-dashboard'])
      assert.ok(PKG.devDependencies[dev], `${dev} is a devDependency`);
    const known = new Set([
      ...registeredTypes(path.join(coreNodesDir, 'core'), /\.js$/),
      ...Object.keys(NODES),
      'tab',
      ...contrib,
    ]);
    const files = exampleFiles();
    assert.ok(files.length > 0);
    for (const f of files) {
      for (const n of readExample(f)) assert.ok(known.has(n.type), `${f}: node type ${n.type}`);
    }
  });
});
