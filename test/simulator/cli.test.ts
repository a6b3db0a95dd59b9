import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join('src', 'simulator', 'cli.ts');

/** Runs the CLI through tsx in one node process (signals reach the CLI directly). */
function run(args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
}

function exited(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr += d));
  return new Promise((resolve) =>
    child.on('exit', (code, signal) =>
      resolve({ code, stdout, stderr: signal ? `${stderr}[killed by ${signal}]` : stderr }),
    ),
  );
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      const newline = buf.indexOf('\n');
      if (newline !== -1) {
        child.stdout?.off('data', onData);
        resolve(buf.slice(0, newline));
      }
    };
    child.stdout?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`exited with ${code} before printing`)));
  });
}

describe('simulator: CLI', function () {
  this.timeout(15_000);
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  it('prints the listening line, serves the API, and exits 0 on SIGTERM', async () => {
    const child = run(['--port', '0', '--seed', '3', '--api-key', 'k1']);
    children.push(child);
    const done = exited(child);
    const line = await firstLine(child);
    const listening = /^ems-partner-sim listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
    assert.ok(listening, line);
    const res = await fetch(`${listening[1]}/devices`, { headers: { 'x-api-key': 'k1' } });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { devices: unknown[] }).devices.length, 6);
    assert.equal((await fetch(`${listening[1]}/devices`)).status, 401);
    child.kill('SIGTERM');
    const { code, stdout } = await done;
    assert.equal(code, 0);
    assert.equal(stdout.trim().split('\n').length, 1, 'exactly one line on stdout');
  });

  it('exits 0 on SIGINT too', async () => {
    const child = run(['--port', '0']);
    children.push(child);
    const done = exited(child);
    await firstLine(child);
    child.kill('SIGINT');
    const exit = await done;
    assert.equal(exit.code, 0, exit.stderr);
  });

  it('bad arguments: message on stderr, exit 2', async () => {
    const cases = [['--port', 'abc'], ['--fault-rate', '2'], ['--bogus'], ['--latency', '-1']];
    const results = await Promise.all(
      cases.map((args) => {
        const child = run(args);
        children.push(child);
        return exited(child);
      }),
    );
    results.forEach(({ code, stderr, stdout }, i) => {
      assert.equal(code, 2, cases[i].join(' '));
      assert.match(stderr, /ems-partner-sim: /);
      assert.equal(stdout, '');
    });
  });

  it('--help prints usage and exits 0', async () => {
    const child = run(['--help']);
    children.push(child);
    const { code, stdout } = await exited(child);
    assert.equal(code, 0);
    assert.match(stdout, /Usage: ems-partner-sim/);
  });
});
