/**
 * The static checks of the Node-RED flow library's scorecard (`node-red-dev validate`),
 * repeated offline (the tool needs the internet): package name, licence, repository,
 * keyword, Node-RED and Node.js version ranges, node files and `registerType` calls a static
 * parser finds, example node types, and the number of dependencies.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { exampleFiles, readExample } from './helpers/examples';
import { coreNodesDir } from './helpers/node-red-path';

/* eslint-disable @typescript-eslint/no-explicit-any */
const semver: any = require('semver');
const ROOT = path.resolve(__dirname, '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const NODES: Record<string, string> = PKG['node-red']?.nodes ?? {};
const REGISTER = /RED\.nodes\.registerType\(\s*(['"])([^'"]+)\1/g;

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

describe('scorecard (node-red-dev validate), offline', () => {
  it('P01 the name is scoped (or node-red-contrib-*)', () => {
    assert.match(PKG.name, /^(@[a-z0-9-~][a-z0-9-._~]*\/[a-z0-9-._~]+|node-red-contrib-[a-z0-9-._~]+)$/);
  });

  it('P02 a licence: the field and a LICENSE file', () => {
    assert.equal(typeof PKG.license, 'string');
    assert.ok(PKG.license.length > 0);
    const text = fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
    if (PKG.license === 'MIT') assert.match(text, /MIT License|Permission is hereby granted/);
    assert.ok(PKG.files.includes('LICENSE'));
  });

  it('P03 a repository URL', () => {
    const url = typeof PKG.repository === 'string' ? PKG.repository : PKG.repository?.url;
    assert.match(url, /^(git\+)?https:\/\/.+\/.+(\.git)?$/);
  });

  it('P04 a README that says how to install and use the nodes', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    assert.ok(readme.length > 2000);
    assert.match(readme, /^## Install/m);
    assert.ok(PKG.files.includes('README.md'));
  });

  it('P05 node-red.version covers Node-RED 3.1, 4.x and 5.x', () => {
    const range = PKG['node-red'].version;
    assert.ok(semver.validRange(range), `valid range ${range}`);
    for (const v of ['3.1.0', '3.1.15', '4.0.0', '4.1.15', '5.0.0', '5.9.0']) assert.ok(semver.satisfies(v, range), `${v} satisfies ${range}`);
    assert.ok(!semver.satisfies('3.0.2', range), 'older than 3.1 is not claimed');
  });

  it('P06 engines.node is set, admits Node 20.3+ and 22 (Node-RED 5 needs 22.9) and is no looser than Node-RED 3.1 (14)', () => {
    const range = PKG.engines?.node;
    assert.ok(semver.validRange(range), `valid range ${range}`);
    // 20.3 is the first Node 20 with AbortSignal.any, which the client uses.
    for (const v of ['20.3.0', '22.9.0', '24.0.0']) assert.ok(semver.satisfies(v, range), `${v} satisfies ${range}`);
    assert.ok(semver.gte(semver.minVersion(range), '14.0.0'));
  });

  it('P07 the node-red keyword', () => {
    assert.ok(PKG.keywords.includes('node-red'));
  });

  it('P08 at most 6 dependencies, node-red not among them, each one used', () => {
    const deps = Object.keys(PKG.dependencies ?? {});
    assert.ok(deps.length <= 6, `${deps.length} dependencies`);
    for (const f of ['dependencies', 'peerDependencies', 'optionalDependencies']) assert.equal(PKG[f]?.['node-red'], undefined, f);
    const dist = [...fs.readdirSync(path.join(ROOT, 'dist'), { recursive: true } as any) as string[]]
      .filter((f) => f.endsWith('.js')).map((f) => fs.readFileSync(path.join(ROOT, 'dist', f), 'utf8')).join('\n');
    for (const d of deps) assert.ok(dist.includes(`require("${d}")`) || dist.includes(`require('${d}')`), `${d} is required by dist`);
  });

  it('N01 every node in the node-red section exists, with its editor file, in the published files', () => {
    assert.deepEqual(Object.keys(NODES).sort(), ['ems-device-read', 'ems-partner-config', 'ems-plan', 'ems-request', 'ems-schedule', 'ems-site-steer', 'ems-time-series']);
    for (const [type, file] of Object.entries(NODES)) {
      assert.ok(fs.existsSync(path.join(ROOT, file)), `${type}: ${file} (built)`);
      assert.ok(fs.existsSync(path.join(ROOT, file.replace(/\.js$/, '.html'))), `${type}: editor file`);
      assert.ok(PKG.files.some((f: string) => file === f || file.startsWith(`${f}/`)), `${file} is published`);
    }
  });

  it('N02 each node file registers its type with a literal name a static parser finds', () => {
    for (const [type, file] of Object.entries(NODES)) {
      const names = [...fs.readFileSync(path.join(ROOT, file), 'utf8').matchAll(REGISTER)].map((m) => m[2]);
      assert.deepEqual(names, [type], file);
      // The editor registers the same type: a literal or a constant that holds it.
      const html = fs.readFileSync(path.join(ROOT, file.replace(/\.js$/, '.html')), 'utf8');
      const m = /RED\.nodes\.registerType\(\s*(?:(['"])([^'"]+)\1|([A-Za-z_$][\w$]*))\s*,/.exec(html);
      assert.ok(m, `${type}: registerType in the editor file`);
      const name = m[2] ?? new RegExp(`\\b${m[3]}\\s*=\\s*(['"])([^'"]+)\\1`).exec(html)?.[2];
      assert.equal(name, type, `${type}: editor registers ${name}`);
    }
  });

  it('N03 no type clashes with a core node', () => {
    const core = registeredTypes(path.join(coreNodesDir, 'core'), /\.js$/);
    assert.ok(core.has('inject') && core.has('mqtt in'), 'core types found');
    for (const type of Object.keys(NODES)) assert.ok(!core.has(type), type);
  });

  it('E01 an examples folder, published, in which every node type is a core one, this package\'s, node-red-contrib-influxdb\'s (example 02) or Dashboard 2\'s (example 09), both devDependencies', () => {
    assert.ok(PKG.files.includes('examples'));
    const contrib = [
      ...registeredTypes(path.join(ROOT, 'node_modules', 'node-red-contrib-influxdb'), /\.js$/), // example 02, a devDependency
      ...registeredTypes(path.join(ROOT, 'node_modules', '@flowfuse', 'node-red-dashboard', 'nodes'), /\.js$/), // example 09, a devDependency
    ];
    for (const dev of ['node-red-contrib-influxdb', '@flowfuse/node-red-dashboard']) assert.ok(PKG.devDependencies[dev], `${dev} is a devDependency`);
    const known = new Set([...registeredTypes(path.join(coreNodesDir, 'core'), /\.js$/), ...Object.keys(NODES), 'tab', ...contrib]);
    const files = exampleFiles();
    assert.ok(files.length > 0);
    for (const f of files) {
      for (const n of readExample(f)) assert.ok(known.has(n.type), `${f}: node type ${n.type}`);
    }
  });
});
