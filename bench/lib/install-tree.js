'use strict';
/**
 * Sizes of an installed node_modules tree, and the axios dedupe measurement of the footprint
 * benchmark: a Node-RED user directory that already holds axios 1.19.0, the axios
 * Node-RED 4.1 ships, then the tarball installed into it with the old axios range (^1.21.1, a
 * repacked copy) and with the range as it is now; bytes added and the axios copies of each.
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const OLD_RANGE = '^1.21.1';
const NODE_RED_AXIOS = '1.19.0';

function npm(args, cwd) {
  return execFileSync(NPM, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
}

/** Apparent size (bytes) and file count of a directory tree; symlinks not followed. */
function treeSize(dir) {
  let bytes = 0;
  let files = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const entry = path.join(dir, e.name);
    if (e.isDirectory()) {
      const below = treeSize(entry);
      bytes += below.bytes;
      files += below.files;
    } else if (e.isFile()) {
      bytes += fs.statSync(entry).size;
      files++;
    }
  }
  return { bytes, files };
}

/** Installed packages of a node_modules tree (directories with a package.json, scopes expanded). */
function installedPackages(nm) {
  const out = [];
  for (const e of fs.existsSync(nm) ? fs.readdirSync(nm) : []) {
    if (e.startsWith('.')) continue;
    const dirs = e.startsWith('@') ? fs.readdirSync(path.join(nm, e)).map((x) => path.join(e, x)) : [e];
    for (const d of dirs) {
      if (fs.existsSync(path.join(nm, d, 'package.json'))) out.push(d);
      out.push(...installedPackages(path.join(nm, d, 'node_modules')).map((x) => `${d}>${x}`));
    }
  }
  return out;
}

/** Bytes of the installed packages (the tree without npm's hidden lockfile). */
function packageBytes(nm) {
  const lock = path.join(nm, '.package-lock.json');
  return treeSize(nm).bytes - (fs.existsSync(lock) ? fs.statSync(lock).size : 0);
}

/** Every axios in the tree, as "where@version" (where: the chain of packages it sits under). */
function axiosCopies(nm) {
  return installedPackages(nm)
    .filter((p) => p === 'axios' || p.endsWith('>axios'))
    .map((p) => {
      const dir = path.join(nm, p.split('>').join(`${path.sep}node_modules${path.sep}`));
      return `${p}@${JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version}`;
    });
}

/** A copy of the tarball whose package.json asks for axios `range` (npm pack of the unpacked copy). */
function repackWithAxios(tgz, range, dir) {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('tar', ['-xzf', tgz, '-C', dir]);
  const pj = path.join(dir, 'package', 'package.json');
  const text = fs.readFileSync(pj, 'utf8');
  const edited = text.replace(/("axios":\s*")[^"]+(")/, `$1${range}$2`);
  if (edited === text) throw new Error('no axios dependency in the packed package.json');
  // Without its scripts: npm 11 runs `prepare` on pack even with --ignore-scripts, and the build
  // needs the sources, which the tarball does not hold.
  const pkg = JSON.parse(edited);
  delete pkg.scripts;
  fs.writeFileSync(pj, `${JSON.stringify(pkg, null, 2)}\n`);
  const name = JSON.parse(
    npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], path.join(dir, 'package')),
  )[0].filename;
  return path.join(dir, name);
}

/** The axios the Node-RED under test ships (node-red-admin's), and where it sits. */
function nodeRedAxios() {
  const red = path.dirname(require.resolve('node-red/package.json'));
  const admin = path.dirname(require.resolve('node-red-admin/package.json', { paths: [red] }));
  const axios = require.resolve('axios/package.json', { paths: [admin] });
  return {
    nodeRed: require(path.join(red, 'package.json')).version,
    admin: require(path.join(admin, 'package.json')).version,
    axios: require(axios).version,
  };
}

/** Does a package installed in `userDir` resolve modules from Node-RED's own tree? */
function sharesNodeRedTree(userDir) {
  try {
    require.resolve('node-red/package.json', { paths: [path.join(userDir, 'node_modules')] });
    return true;
  } catch {
    return false;
  }
}

/**
 * Installs `tgzs` (name -> tarball) into copies of user directories that start: empty; with
 * axios 1.19.0 pinned (`npm install --save-exact`, as a palette package that pins it, like
 * node-red-admin); with axios 1.19.0 installed under a caret range (^1.19.0, which lets npm move
 * it to a newer 1.x). Returns a row per start and tarball.
 */
function measureAxiosDedupe(tmp, tgzs) {
  const starts = {
    'empty user dir': [],
    [`axios ${NODE_RED_AXIOS} pinned`]: ['install', '--save-exact', `axios@${NODE_RED_AXIOS}`],
    [`axios ${NODE_RED_AXIOS} as ^${NODE_RED_AXIOS}`]: [
      'install',
      '--no-save-exact',
      '--save-prefix=^',
      `axios@${NODE_RED_AXIOS}`,
    ],
  };
  const rows = {};
  let baseIndex = 0;
  for (const [start, args] of Object.entries(starts)) {
    const base = path.join(tmp, `dedupe-base-${baseIndex++}`);
    fs.mkdirSync(base);
    fs.writeFileSync(path.join(base, 'package.json'), JSON.stringify({ name: 'node-red-user-dir', private: true }));
    if (args.length) npm([...args, '--no-audit', '--no-fund', '--prefer-offline'], base);
    const nm0 = path.join(base, 'node_modules');
    const before = fs.existsSync(nm0) ? packageBytes(nm0) : 0;
    const axiosBefore = fs.existsSync(nm0) ? axiosCopies(nm0) : [];
    for (const [name, tgz] of Object.entries(tgzs)) {
      const dir = `${base}-${name.replace(/\W+/g, '_')}`;
      fs.cpSync(base, dir, { recursive: true, verbatimSymlinks: true });
      npm(['install', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline', tgz], dir);
      const nm = path.join(dir, 'node_modules');
      const axios = axiosCopies(nm);
      rows[`${start}, then ${name}`] = {
        bytesBefore: before,
        bytesAdded: packageBytes(nm) - before,
        axiosCopies: axios.length,
        axiosBefore: axiosBefore.join(' ') || 'none',
        axiosAfter: axios.join(' '),
        sharesNodeRedTree: sharesNodeRedTree(dir),
      };
    }
  }
  return rows;
}

module.exports = {
  NPM,
  OLD_RANGE,
  NODE_RED_AXIOS,
  npm,
  treeSize,
  installedPackages,
  axiosCopies,
  repackWithAxios,
  nodeRedAxios,
  measureAxiosDedupe,
};
