#!/usr/bin/env node
/**
 * `npm run test:nr5`: the Node-RED runtime suites (node adapters, examples, package install)
 * and the client transport's adapter suites (undici and axios' http adapter side by side)
 * under Node-RED 5 on Node.js 22. Both are installed once under a git-ignored prefix
 * (.test-tmp/nr5/, or NR5_PREFIX) with `npm install --prefix`, never as project
 * dependencies; later runs reuse them. The suites pick the runtime from NODE_RED_PATH
 * (test/helpers/node-red-path.ts).
 *
 *   NR5_PREFIX        install prefix (default .test-tmp/nr5)
 *   NR5_NODE_RED      version range of node-red (default 5)
 *   NR5_NODE          version range of Node.js (default 22); the running Node is used when it is >= 22.9
 *   extra arguments   passed to mocha (e.g. -g 'examples')
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const prefix = path.resolve(process.env.NR5_PREFIX || path.join(root, '.test-tmp', 'nr5'));
const nodeRedRange = process.env.NR5_NODE_RED || '5';
const nodeRange = process.env.NR5_NODE || '22';
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// The suites run on Node-RED 5: paths below the repository (with / as the separator); a path ending in /
// takes every test file below it. A listed file or folder that holds no test file stops the run (a
// renamed test would otherwise drop out of it without a word).
const SUITES = [
  'test/acceptance/examples/',
  'test/acceptance/package/install.test.ts',
  'test/client/adapter/',
  ...['config/index', 'config/credentials', 'device-read/index', 'device-read/bad-input'].map(nodeTest),
  ...['time-series/index', 'time-series/bad-input', 'site-steer/index', 'site-steer/bad-input'].map(nodeTest),
  ...['schedule/index', 'schedule/running', 'schedule/options'].map(nodeTest),
  ...['plan/index', 'plan/refusals', 'plan/chart', 'plan/site', 'plan/site-refusals', 'plan/replan'].map(nodeTest),
  ...['request/index', 'request/paths'].map(nodeTest),
  ...['input-caps', 'poll-backoff', 'renewal', 'scaffold', 'scaffold-input', 'max-split'].map((name) =>
    nodeTest(`shared/${name}`),
  ),
];
function nodeTest(name) {
  return `test/nodes/${name}.test.ts`;
}

const major = (v) => Number(String(v).replace(/^v/, '').split('.')[0]);
const atLeast = (v, min) => {
  const have = String(v).replace(/^v/, '').split('.').map(Number);
  const want = min.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((have[i] || 0) !== (want[i] || 0)) return (have[i] || 0) > (want[i] || 0);
  return true;
};
const useOwnNode = atLeast(process.version, '22.9.0');
const nodePkg = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
const nodeBin = useOwnNode
  ? process.execPath
  : path.join(prefix, 'node_modules', nodePkg, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
const nodeRedDir = path.join(prefix, 'node_modules', 'node-red');

function installedVersion(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

function install() {
  const want = [];
  if (major(installedVersion(nodeRedDir)) !== major(nodeRedRange)) want.push(`node-red@${nodeRedRange}`);
  if (!useOwnNode && !fs.existsSync(nodeBin)) want.push(`${nodePkg}@${nodeRange}`);
  if (want.length === 0) return 0;
  fs.mkdirSync(prefix, { recursive: true });
  const pkg = path.join(prefix, 'package.json');
  // Its own package.json, so npm never walks up to the project's.
  if (!fs.existsSync(pkg))
    fs.writeFileSync(pkg, JSON.stringify({ name: 'ems-partner-nr5-runtime', private: true }, null, 2) + '\n');
  console.log(`test-node-red-5: installing ${want.join(' ')} under ${path.relative(root, prefix)}/ ...`);
  const t0 = Date.now();
  const result = spawnSync(
    npm,
    ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', ...want],
    {
      stdio: 'inherit',
      cwd: prefix,
    },
  );
  if (result.status !== 0) {
    console.error('test-node-red-5: the install failed (it needs the npm registry once; later runs reuse it)');
    process.exit(result.status || 1);
  }
  return Date.now() - t0;
}

const installMs = install();
const nodeVersion = spawnSync(nodeBin, ['--version'], { encoding: 'utf8' }).stdout.trim();
const nodeRedVersion = installedVersion(nodeRedDir);
if (!atLeast(nodeVersion, '22.9.0') || major(nodeRedVersion) !== major(nodeRedRange)) {
  console.error(
    `test-node-red-5: expected Node-RED ${nodeRedRange}.x on Node >= 22.9; got Node-RED ${nodeRedVersion} on Node ${nodeVersion}`,
  );
  process.exit(1);
}
if (!fs.existsSync(path.join(root, 'dist', 'nodes', 'ems-site-steer.js'))) {
  console.error('test-node-red-5: dist/ is missing: run `npm run build` (or npm test) first');
  process.exit(1);
}

const testFiles = fs
  .readdirSync(path.join(root, 'test'), { recursive: true })
  .map((f) => ['test', ...String(f).split(path.sep)].join('/'))
  .filter((f) => f.endsWith('.test.ts'));
const picks = (suite) => (file) => (suite.endsWith('/') ? file.startsWith(suite) : file === suite);
const missing = SUITES.filter((suite) => !testFiles.some(picks(suite)));
if (missing.length > 0) {
  console.error(`test-node-red-5: no test file at ${missing.join(', ')} (renamed? update SUITES)`);
  process.exit(1);
}
const specs = testFiles.filter((file) => SUITES.some((suite) => picks(suite)(file))).sort();
console.log(`test-node-red-5: Node-RED ${nodeRedVersion} on Node ${nodeVersion}: ${specs.length} suites`);
const t1 = Date.now();
const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');
const result = spawnSync(
  nodeBin,
  [
    mocha,
    '--no-config',
    '--require',
    'tsx/cjs',
    '--extension',
    'ts',
    '--timeout',
    '30000',
    '--exit',
    ...process.argv.slice(2),
    ...specs,
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NODE_RED_PATH: nodeRedDir },
  },
);
const secs = (ms) => (ms / 1000).toFixed(1);
console.log(
  `test-node-red-5: ${installMs ? `install ${secs(installMs)} s, ` : 'runtime cached, '}suites ${secs(Date.now() - t1)} s`,
);
process.exit(result.status === null ? 1 : result.status);
