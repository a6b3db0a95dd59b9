/**
 * A child process for the package and demo tests: output kept, awaited by pattern, stopped
 * by its own PID (SIGKILL after a grace period), never by name.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface Spawned {
  child: ChildProcess;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the first match of `re` in the output; rejects on timeout or exit. */
  waitFor(re: RegExp, ms: number): Promise<RegExpExecArray>;
  /** Resolves with the exit code (or signal) once the process exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` by PID; SIGKILL after `graceMs`; resolves when it exited. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function start(cmd: string, args: string[], opts: SpawnOptions): Spawned {
  const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let done = false;
  const listeners = new Set<() => void>();
  const onData = (b: Buffer) => {
    out += b.toString();
    for (const l of [...listeners]) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      for (const l of [...listeners]) l();
      resolve({ code, signal });
    });
  });
  return {
    child,
    output: () => out,
    exited,
    waitFor(re, ms) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`timed out after ${ms} ms waiting for ${re}; output:\n${out.slice(-3000)}`)),
          ms,
        );
        const check = () => {
          const match = re.exec(out);
          if (match) finish(undefined, match);
          else if (done) finish(new Error(`process exited while waiting for ${re}; output:\n${out.slice(-3000)}`));
        };
        function finish(err?: Error, m?: RegExpExecArray) {
          clearTimeout(timer);
          listeners.delete(check);
          if (err) reject(err);
          else resolve(m!);
        }
        listeners.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM', graceMs = 15_000) {
      if (!done && child.pid) {
        process.kill(child.pid, signal);
        const killer = setTimeout(() => {
          if (!done && child.pid) process.kill(child.pid, 'SIGKILL');
        }, graceMs);
        const result = await exited;
        clearTimeout(killer);
        return result;
      }
      return exited;
    },
  };
}

/** A free loopback port: listen on 0, read the port, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** True when nothing accepts connections on 127.0.0.1:port any more. */
export function closed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** A server binary for the tests: the file `process.env[envVar]` names, else `name` on PATH; undefined when that is no executable file. */
export function findExecutable(name: string, envVar: string): string | undefined {
  const candidates = process.env[envVar]
    ? [process.env[envVar]!]
    : (process.env.PATH ?? '')
        .split(path.delimiter)
        .filter(Boolean)
        .map((d) => path.join(d, name));
  return candidates.find((f) => {
    try {
      fs.accessSync(f, fs.constants.X_OK);
      return fs.statSync(f).isFile();
    } catch {
      return false;
    }
  });
}
