/**
 * The Flows library's scorecard tool, `node-red-dev validate` (the devDependency, unchanged),
 * run offline. The tool has no option for where it looks things up; it reads, with hard-coded
 * URLs or the npm registry setting:
 *  - https://catalogue.nodered.org/catalogue.json (P08 similar names, N01 unique node types),
 *    with its own axios 0.21, which honours HTTPS_PROXY: an http:// proxy gets the request
 *    as a plain GET of the absolute URL, so the local server below answers it;
 *  - https://registry.npmjs.org/node-red (P06 supported Node-RED versions, P07 the Node.js of
 *    the latest Node-RED), the same way;
 *  - the registry of npm's configuration (registry-url: rc('npm'), so the variable `npm_registry`,
 *    and ~/.npmrc, kept out by an empty HOME) for each runtime dependency: its tree (D02,
 *    npm-remote-ls) and its latest version (D03, npm-check).
 * The local server (127.0.0.1, port 0) answers with an EMPTY catalogue, the Node-RED facts
 * below, and the packuments of package-lock.json; it records every request, and anything else
 * gets 404 (and is listed as unexpected). D03 offline therefore compares each dependency with the
 * newest version locked here, not with npm's latest.
 *
 *   npx tsx test/helpers/scorecard-offline.ts [package dir]   prints the tool's output
 * (default: a copy of what `npm pack` would pack, made from the built repository).
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify, stripVTControlCharacters } from 'node:util';

const semver: any = require('semver');
const ROOT = path.resolve(__dirname, '..', '..');
const TOOL = path.join(ROOT, 'node_modules', 'node-red-dev', 'bin', 'run');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const CATALOGUE = 'https://catalogue.nodered.org/catalogue.json';

/**
 * What the tool reads of https://registry.npmjs.org/node-red (P06: the dist-tags `latest` and
 * `*maintenance*`; P07: `engines.node` of `latest`), as `npm view node-red dist-tags engines`
 * answered when this was written. Update it when Node-RED publishes a new major version.
 */
export const NODE_RED_FACTS = { latest: '5.0.7', engines: { node: '>=22.9' } };

export interface Served {
  url: string;
  /** Every request, as the server saw its URL (absolute for proxied ones). */
  requests: string[];
  /** Requests it had no answer for (404). */
  unexpected: string[];
  close(): Promise<void>;
}

/** Packuments (name -> all locked versions, dist-tags.latest the newest) of a package-lock.json v2/v3. */
export function packuments(lockFile: string): Map<string, any> {
  const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8'));
  const out = new Map<string, any>();
  for (const [key, e] of Object.entries<any>(lock.packages ?? {})) {
    const at = key.lastIndexOf('node_modules/');
    if (at < 0 || e.link || !e.version) continue;
    const name: string = e.name ?? key.slice(at + 'node_modules/'.length);
    const doc = out.get(name) ?? { name, 'dist-tags': {}, versions: {} };
    doc.versions[e.version] = {
      name,
      version: e.version,
      license: e.license,
      dependencies: e.dependencies ?? {},
      optionalDependencies: e.optionalDependencies ?? {},
      engines: e.engines ?? {},
    };
    doc['dist-tags'].latest = Object.keys(doc.versions).sort(semver.compare).pop();
    out.set(name, doc);
  }
  return out;
}

/** The local stand-in for the catalogue and the registry (127.0.0.1, port 0). */
export async function serveOffline(lockFile = path.join(ROOT, 'package-lock.json')): Promise<Served> {
  const docs = packuments(lockFile);
  docs.set('node-red', {
    name: 'node-red',
    'dist-tags': { latest: NODE_RED_FACTS.latest },
    versions: {
      [NODE_RED_FACTS.latest]: { name: 'node-red', version: NODE_RED_FACTS.latest, engines: NODE_RED_FACTS.engines },
    },
  });
  const requests: string[] = [];
  const unexpected: string[] = [];
  const server = http.createServer((req, res) => {
    const raw = req.url ?? '/';
    requests.push(raw);
    const url = new URL(raw, 'http://127.0.0.1');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET') {
      unexpected.push(`${req.method} ${raw}`);
      return send(405, {});
    }
    if (url.href === CATALOGUE) return send(200, { modules: [] });
    const local = url.host === 'registry.npmjs.org' || url.hostname === '127.0.0.1';
    const doc = local ? docs.get(decodeURIComponent(url.pathname.slice(1))) : undefined;
    if (doc) return send(200, doc);
    unexpected.push(raw);
    return send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    unexpected,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A copy, in `dest`, of the files `npm pack` would pack from `root` (which must be built). */
export async function packedCopy(root: string, dest: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(NPM, ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    // npm found first under npm run / npx is node_modules/.bin's (Node-RED's bundled npm), whose pack runs
    // `prepare` (the build, which deletes dist/) despite --ignore-scripts: the system npm packs without building
    env: {
      ...process.env,
      PATH: (process.env.PATH ?? '')
        .split(path.delimiter)
        .filter((dir) => !dir.includes('node_modules'))
        .join(path.delimiter),
    },
    maxBuffer: 16 << 20,
    shell: process.platform === 'win32',
  });
  const files: string[] = JSON.parse(stdout)[0].files.map((f: any) => f.path);
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(dest, f)), { recursive: true });
    fs.copyFileSync(path.join(root, f), path.join(dest, f));
  }
  return files;
}

export interface Validation {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The tool's scorecard (-o), or undefined when it wrote none. */
  scorecard: any;
}

/** Runs `node-red-dev validate -p dir` with every lookup sent to `served`; the child is killed by PID after `timeoutMs`. */
export function validate(dir: string, served: Served, timeoutMs = 90_000): Promise<Validation> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'scorecard-'));
  const card = path.join(out, 'scorecard.json');
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (/^(https?_proxy|no_proxy|all_proxy|npm_(config_)?registry)$/i.test(k)) delete env[k];
  Object.assign(env, {
    HTTPS_PROXY: served.url,
    https_proxy: served.url,
    HTTP_PROXY: served.url,
    http_proxy: served.url,
    // rc('npm') reads npm_<key> (not npm_config_<key>) and ~/.npmrc: an empty home keeps a user's registry and tokens out.
    npm_registry: `${served.url}/`,
    HOME: out,
    USERPROFILE: out,
    FORCE_COLOR: '0',
  });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TOOL, 'validate', '-p', dir, '-o', card], {
      cwd: out,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => {
      stdout += b;
    });
    child.stderr.on('data', (b) => {
      stderr += b;
    });
    const timer = setTimeout(() => {
      if (child.pid) process.kill(child.pid, 'SIGKILL');
    }, timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      let scorecard: any;
      try {
        scorecard = JSON.parse(fs.readFileSync(card, 'utf8'));
      } catch {
        scorecard = undefined;
      }
      fs.rmSync(out, { recursive: true, force: true });
      resolve({ code, signal, stdout, stderr, scorecard });
    });
  });
}

/** The tool's lines that report no problem: section titles, the package, a ✅ check, `Complete`. */
export const QUIET = [
  /^---Validating (Package|Nodes|Dependencies)---$/,
  /^@?[\w.-]+(\/[\w.-]+)?@\d+\.\d+\.\d+\S*$/,
  /^✅ \S/,
  /^Complete$/,
];

/** Lines of the output that are not in QUIET (warnings, errors, "Unable to parse", lookup failures, ...). */
export function findings(v: Validation): string[] {
  return stripVTControlCharacters(`${v.stdout}\n${v.stderr}`)
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !QUIET.some((re) => re.test(l)));
}

if (require.main === module) {
  (async () => {
    const served = await serveOffline();
    let dir = process.argv[2] ? path.resolve(process.argv[2]) : '';
    const tmp = dir ? '' : fs.mkdtempSync(path.join(os.tmpdir(), 'scorecard-pkg-'));
    try {
      if (!dir) {
        dir = tmp;
        await packedCopy(ROOT, dir);
      }
      const result = await validate(dir, served);
      process.stdout.write(result.stdout);
      process.stderr.write(result.stderr);
      console.log(
        `\n[exit ${result.code}; requests ${served.requests.length}, unexpected ${JSON.stringify(served.unexpected)}]`,
      );
      console.log(`[scorecard ${JSON.stringify(result.scorecard)}]`);
    } finally {
      await served.close();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    }
  })().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
