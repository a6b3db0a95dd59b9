/**
 * `npm start` (scripts/start-demo.js) for the browser tests: on any free port of 127.0.0.1,
 * with its own user directory under .test-tmp/ and the built-in simulator on a port picked
 * here; stopped by its PID (SIGTERM, which start-demo passes on to Node-RED).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, TMP, freePort } from './node-red';

export const DEMO_SCRIPT = path.join(REPO, 'scripts', 'start-demo.js');

export interface Demo {
  /** e.g. http://127.0.0.1:41234 (no trailing slash). */
  base: string;
  simUrl: string;
  pid: number;
  output(): string;
  stop(): Promise<void>;
}

export async function startDemo(timeoutMs = 60000): Promise<Demo> {
  fs.mkdirSync(TMP, { recursive: true });
  const userDir = fs.mkdtempSync(path.join(TMP, 'browser-demo-'));
  const simPort = await freePort();
  const child = spawn(process.execPath, [DEMO_SCRIPT], {
    cwd: REPO,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', EMS_DEMO_USERDIR: userDir, EMS_SIM_PORT: String(simPort), TZ: 'UTC' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => { exited = true; resolve(); }));
  child.stdout!.on('data', (b: Buffer) => { out += b.toString(); });
  child.stderr!.on('data', (b: Buffer) => { out += b.toString(); });
  const pid = child.pid!;
  async function stop() {
    if (!exited) {
      process.kill(pid, 'SIGTERM');
      const killer = setTimeout(() => { if (!exited) process.kill(pid, 'SIGKILL'); }, 15000);
      await exit;
      clearTimeout(killer);
    }
    if (!process.env.EMS_KEEP_TMP) fs.rmSync(userDir, { recursive: true, force: true });
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = /Dashboard: (http:\/\/127\.0\.0\.1:\d+)\/dashboard/.exec(out);
    if (m) return { base: m[1], simUrl: `http://127.0.0.1:${simPort}`, pid, output: () => out, stop };
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(`npm start did not get ready${exited ? ' (it exited)' : ` within ${timeoutMs} ms`}:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
