/**
 * A real Node-RED for the admin route tests: its own user directory under .test-tmp/, this
 * package from the repository (nodesDir, so dist/ must be built), port 0 on 127.0.0.1,
 * httpAdminRoot /admin, and with `users` an adminAuth whose every user has the password "pw".
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { nodeRedDir } from './node-red-path';
import { start, type Spawned } from './spawned';

const ROOT = path.resolve(__dirname, '..', '..');
const bcrypt = require('bcryptjs');

export interface AdminRedOptions {
  /** The flows it starts with. */
  flows: object[];
  /** flows_cred.json by node id (stored in clear unless credentialSecret is set). */
  credentials?: Record<string, object>;
  /** adminAuth users: name -> permissions (e.g. '*', 'read'); none: no adminAuth. */
  users?: Record<string, string>;
  /** Default false (credentials in clear). */
  credentialSecret?: string | false;
}

export interface AdminRed {
  red: Spawned;
  /** Its user directory. */
  dir: string;
  /** e.g. http://127.0.0.1:41234 (no trailing slash; the admin API is under /admin). */
  base: string;
  /** An access token for an adminAuth user (password "pw"). */
  token(username: string): Promise<string>;
  /** SIGTERM, then removes the user directory. */
  stop(): Promise<void>;
}

/** Starts Node-RED in .test-tmp/<name>-<pid> and resolves once its flows have started. */
export async function startAdminRed(name: string, opts: AdminRedOptions): Promise<AdminRed> {
  assert.ok(
    fs.existsSync(path.join(ROOT, 'dist', 'nodes', 'ems-partner-config.js')),
    'dist/ is built (npm test builds first)',
  );
  const dir = path.join(ROOT, '.test-tmp', `${name}-${process.pid}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const hash = bcrypt.hashSync('pw', 8);
  const users = Object.entries(opts.users ?? {}).map(([username, permissions]) => ({
    username,
    password: hash,
    permissions,
  }));
  fs.writeFileSync(
    path.join(dir, 'settings.js'),
    `module.exports = ${JSON.stringify({
      uiHost: '127.0.0.1',
      flowFile: 'flows.json',
      credentialSecret: opts.credentialSecret ?? false,
      httpAdminRoot: '/admin',
      httpNodeRoot: '/api',
      nodesDir: [ROOT],
      telemetry: { enabled: false },
      editorTheme: { tours: false },
      ...(users.length && { adminAuth: { type: 'credentials', users } }),
    })};\n`,
  );
  fs.writeFileSync(path.join(dir, 'flows.json'), JSON.stringify(opts.flows));
  if (opts.credentials) fs.writeFileSync(path.join(dir, 'flows_cred.json'), JSON.stringify(opts.credentials));
  const red = start(
    process.execPath,
    [path.join(nodeRedDir, 'red.js'), '-p', '0', '-u', dir, '-s', path.join(dir, 'settings.js')],
    { cwd: dir, env: { ...process.env } },
  );
  const stop = async () => {
    await red.stop('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const base = (await red.waitFor(/Server now running at (http:\/\/127\.0\.0\.1:\d+)\//, 60_000))[1];
    await red.waitFor(/Started flows/, 30_000);
    const token = async (username: string) => {
      const response = await fetch(`${base}/admin/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: 'node-red-editor',
          grant_type: 'password',
          scope: '',
          username,
          password: 'pw',
        }).toString(),
      });
      assert.equal(response.status, 200, `token for ${username}: ${response.status} ${await response.clone().text()}`);
      return ((await response.json()) as { access_token: string }).access_token;
    };
    return { red, dir, base, token, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
