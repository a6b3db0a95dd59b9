/**
 * Installing from the tarball (README, Install: until the package is published, `npm pack` and
 * Manage palette ▸ Install ▸ upload, or `npm install <file>.tgz` in the user directory) runs no
 * build: the tarball carries dist/, and npm runs a package's `prepare` (our `npm run build`) only
 * for directory, link and git installs, never for a tarball or the registry.
 *
 * Shown by running it, not by reading npm's docs: the real tarball is installed with scripts
 * enabled, --offline with an empty cache (its runtime dependencies are copied into the user
 * directory beforehand from this checkout's node_modules, so no registry is needed), and npm's
 * script shell is a recorder that logs every lifecycle script npm starts, for any package. Two
 * probes in the same install show the recorder sees scripts: a tarball with all four scripts
 * (preinstall, install and postinstall run, prepare does not) and a directory with the same
 * scripts (prepare runs). test/acceptance/package/install.test.ts covers what the tarball holds and that Node-RED
 * loads it; this file covers only the install step.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const INSTALL_TIME = ['preinstall', 'install', 'postinstall', 'prepare'];
const PROBE_SCRIPTS = Object.fromEntries(INSTALL_TIME.map((s) => [s, 'node -e 0']));

/** The directory of package `name` as Node resolves it from `from` (nested node_modules first). */
function findPackage(from: string, name: string): string {
  for (let d = from; ; d = path.dirname(d)) {
    const installed = path.join(d, 'node_modules', name);
    if (fs.existsSync(path.join(installed, 'package.json'))) return installed;
    if (d === ROOT || path.dirname(d) === d) throw new Error(`${name} (needed by ${from}) is not installed`);
  }
}

/** Copies the runtime dependencies' closure from this checkout into `userDir`, keeping its layout. */
function copyRuntimeDeps(userDir: string): string[] {
  const seen = new Set<string>();
  const queue: Array<[string, string]> = Object.keys(PKG.dependencies).map((d) => [ROOT, d]);
  while (queue.length) {
    const [from, name] = queue.shift()!;
    const dir = findPackage(from, name);
    if (seen.has(dir)) continue;
    seen.add(dir);
    const pj = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    for (const d of Object.keys(pj.dependencies || {})) queue.push([dir, d]);
  }
  const nm = path.join(ROOT, 'node_modules');
  for (const dir of seen)
    fs.cpSync(dir, path.join(userDir, 'node_modules', path.relative(nm, dir)), { recursive: true, dereference: true });
  return [...seen].map((d) => path.relative(nm, d));
}

/** Relative paths and sizes of every file below `dir`. */
function listFiles(dir: string, base = dir): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      const entryPath = path.join(dir, e.name);
      return e.isDirectory()
        ? listFiles(entryPath, base)
        : [`${path.relative(base, entryPath).split(path.sep).join('/')} ${fs.statSync(entryPath).size}`];
    })
    .sort();
}

describe('package tarball: installing it runs no build script', function () {
  this.timeout(60_000);
  let tmp = '';
  let tgz = '';
  let packedFiles: string[] = [];
  let packedPkg: any;

  before(async function () {
    // The recorder is a POSIX shell script (npm runs scripts with `<script-shell> -c <command>`).
    if (process.platform === 'win32') this.skip();
    assert.ok(
      fs.existsSync(path.join(ROOT, 'dist', 'nodes', 'ems-partner-config.js')),
      'dist/ is built (npm test builds first)',
    );
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-tarball-'));
    const { stdout } = await run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], { cwd: ROOT });
    const packed = JSON.parse(stdout)[0];
    tgz = path.join(tmp, packed.filename);
    packedFiles = packed.files.map((f: any) => `${f.path} ${f.size}`).sort();
    fs.mkdirSync(path.join(tmp, 'packed'));
    await run('tar', ['-xzf', tgz, '-C', path.join(tmp, 'packed'), 'package/package.json']);
    packedPkg = JSON.parse(fs.readFileSync(path.join(tmp, 'packed', 'package', 'package.json'), 'utf8'));
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('the tarball carries the built node files Node-RED loads, and its only install-time script is prepare', () => {
    const files = packedFiles.map((f) => f.slice(0, f.lastIndexOf(' ')));
    const nodes = Object.values(packedPkg['node-red'].nodes) as string[];
    assert.equal(nodes.length, 7);
    for (const js of nodes) {
      assert.ok(files.includes(js), js);
      assert.ok(files.includes(js.replace(/\.js$/, '.html')), `${js}: its editor .html`);
    }
    const scripts = packedPkg.scripts || {};
    assert.deepEqual(
      INSTALL_TIME.filter((s) => scripts[s]),
      ['prepare'],
      JSON.stringify(scripts),
    );
    assert.equal(scripts.prepare, 'npm run build');
    // A binding.gyp would give the package an implicit install script (node-gyp rebuild).
    assert.ok(!files.some((f) => /(^|\/)binding\.gyp$/.test(f)), 'no binding.gyp');
  });

  it('npm install <tgz> (offline, scripts on) runs none of its scripts; the installed files are the tarball, byte for byte', async () => {
    const userDir = path.join(tmp, 'userdir');
    const log = path.join(tmp, 'scripts.log');
    const recorder = path.join(tmp, 'record-script.sh');
    fs.writeFileSync(
      recorder,
      '#!/bin/sh\necho "$npm_lifecycle_event $npm_package_json" >> "$EMS_SCRIPT_LOG"\nexec /bin/sh "$@"\n',
      { mode: 0o755 },
    );
    for (const name of ['probe-tarball', 'probe-directory']) {
      fs.mkdirSync(path.join(tmp, name));
      fs.writeFileSync(
        path.join(tmp, name, 'package.json'),
        JSON.stringify({ name, version: '1.0.0', scripts: PROBE_SCRIPTS }),
      );
    }
    await run(NPM, ['pack', '--ignore-scripts', '--pack-destination', tmp], { cwd: path.join(tmp, 'probe-tarball') });
    fs.mkdirSync(userDir);
    fs.writeFileSync(path.join(userDir, 'package.json'), JSON.stringify({ name: 'node-red-project', private: true }));
    const copied = copyRuntimeDeps(userDir);
    assert.ok(copied.includes('axios') && copied.includes('axios-retry'), copied.join(', '));

    await run(
      NPM,
      [
        'install',
        '--omit=dev',
        '--no-audit',
        '--no-fund',
        '--offline',
        '--cache',
        path.join(tmp, 'npm-cache'),
        // Scripts on, whatever the npmrc says; npm >= 11.19 would otherwise only warn about unreviewed ones.
        '--ignore-scripts=false',
        '--dangerously-allow-all-scripts',
        `--script-shell=${recorder}`,
        path.join(tmp, 'probe-tarball-1.0.0.tgz'),
        path.join(tmp, 'probe-directory'),
        tgz,
      ],
      { cwd: userDir, env: { ...process.env, EMS_SCRIPT_LOG: log } },
    );

    const ran = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
    const by = (name: string) =>
      ran
        .filter((l) => l.includes(`${path.sep}${name}${path.sep}package.json`))
        .map((l) => l.split(' ')[0])
        .sort();
    // The probes: the recorder sees every script npm starts; a tarball's prepare is never run.
    assert.deepEqual(by('probe-tarball'), ['install', 'postinstall', 'preinstall'], ran.join('\n'));
    assert.deepEqual(by('probe-directory'), ['install', 'postinstall', 'preinstall', 'prepare'], ran.join('\n'));
    // Ours: nothing ran (no prepare, so no `npm run build`), for the package or its dependencies.
    assert.deepEqual(
      ran.filter((l) => !/[/\\]probe-(tarball|directory)[/\\]/.test(l)),
      [],
      ran.join('\n'),
    );
    const installed = path.join(userDir, 'node_modules', ...PKG.name.split('/'));
    assert.deepEqual(listFiles(installed), packedFiles);
  });
});
