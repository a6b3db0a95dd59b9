/**
 * A real Node-RED process for the browser tests: its own user directory under .test-tmp/
 * that loads this package from the repository (node_modules/@ems-partner/node-red is a
 * symlink to the repo root, so the editor gets dist/nodes/), port 0 on 127.0.0.1 (read back
 * from the log), and the built-in simulator on a port picked here, so tests can read it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort, start } from '../../helpers/spawned';

export { freePort };

export const REPO = path.resolve(__dirname, '..', '..', '..');
export const TMP = path.join(REPO, '.test-tmp');

export interface NodeRedProcess {
  /** Editor URL, e.g. http://127.0.0.1:41234/ (trailing slash). */
  url: string;
  /** Base URL of the built-in simulator (started by the first config node that uses it). */
  simUrl: string;
  pid: number;
  userDir: string;
  /** Everything the process printed so far. */
  log(): string;
  /** Whether the process is still running. */
  alive(): boolean;
  /** SIGTERM by PID, SIGKILL after 10 s; resolves when it has exited (user directory removed unless EMS_KEEP_TMP). */
  stop(): Promise<void>;
}

const SETTINGS = `module.exports = {
  uiHost: '127.0.0.1',
  flowFile: 'flows.json',
  credentialSecret: 'test',
  lang: 'en-US',
  logging: { console: { level: 'info', metrics: false, audit: false } },
  editorTheme: { tours: false, palette: { catalogues: [] }, projects: { enabled: false } },
  telemetry: { enabled: false },
};
`;

/** Creates a user directory whose Node-RED loads this package from the repository. */
export function makeUserDir(prefix = 'browser-nr-'): string {
  fs.mkdirSync(TMP, { recursive: true });
  const dir = fs.mkdtempSync(path.join(TMP, prefix));
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'ems-partner-browser-test', private: true }, null, 2),
  );
  fs.mkdirSync(path.join(dir, 'node_modules', '@ems-partner'), { recursive: true });
  fs.symlinkSync(REPO, path.join(dir, 'node_modules', '@ems-partner', 'node-red'), 'dir');
  fs.writeFileSync(path.join(dir, 'settings.js'), SETTINGS);
  // The anonymous user's editor settings: no tips panel, no welcome tour over the canvas.
  const view = { 'view-show-tips': false, 'view-show-welcome-tours': false };
  fs.writeFileSync(path.join(dir, '.config.users.json'), JSON.stringify({ _: { editor: { view } } }));
  return dir;
}

export async function startNodeRed(opts: { timeoutMs?: number } = {}): Promise<NodeRedProcess> {
  if (!fs.existsSync(path.join(REPO, 'dist', 'nodes', 'ems-site-steer.html'))) {
    throw new Error('dist/nodes is missing: run `npm run build` first (npm test does)');
  }
  const userDir = makeUserDir();
  const simPort = await freePort();
  const red = require.resolve('node-red/red.js', { paths: [REPO] });
  const child = start(process.execPath, [red, '-p', '0', '-u', userDir, '-s', path.join(userDir, 'settings.js')], {
    cwd: userDir,
    env: { ...process.env, EMS_SIM_PORT: String(simPort), TZ: 'UTC' },
  });
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  let url: string;
  try {
    url = (await child.waitFor(/Server now running at (http:\/\/127\.0\.0\.1:\d+\/)/, opts.timeoutMs ?? 30000))[1];
  } catch (err) {
    await child.stop('SIGKILL', 0);
    throw new Error(`Node-RED did not start: ${(err as Error).message}`, { cause: err });
  }
  return {
    url,
    simUrl: `http://127.0.0.1:${simPort}`,
    pid: child.child.pid!,
    userDir,
    log: child.output,
    alive: () => !exited,
    async stop() {
      await child.stop('SIGTERM', 10000);
      if (!process.env.EMS_KEEP_TMP) fs.rmSync(userDir, { recursive: true, force: true });
    },
  };
}

/** Replaces the deployed flows through the admin API (an empty flow by default). */
export async function setFlows(nr: NodeRedProcess, flows: unknown[] = []): Promise<void> {
  const res = await fetch(new URL('flows', nr.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'Node-RED-Deployment-Type': 'full' },
    body: JSON.stringify(flows),
  });
  if (!res.ok) throw new Error(`POST /flows: HTTP ${res.status} ${await res.text()}`);
}

/** GET a JSON document. */
export async function getJson<T = unknown>(url: string | URL): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}
