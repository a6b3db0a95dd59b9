/**
 * A real InfluxDB 1.x for the tests (Debian's `influxdb` package, which .ci/run installs):
 * started from a config file in a temp dir, HTTP on 127.0.0.1 and a free port, its RPC
 * (backup) listener on 127.0.0.1 and another free port, no other listener, no reporting, no
 * _internal database; stopped by its PID, the temp dir removed. Plus loading a shipped example
 * with node-red-contrib-influxdb's nodes, its InfluxDB config node on the test's InfluxDB.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CORE_NODES, forTest, loaded, readExample, type LoadedExample } from './examples';
import { helper, NODES } from './red';
import { findExecutable, freePort, start, type Spawned } from './spawned';

/** node-red-contrib-influxdb (a devDependency): the `influxdb` config node and `influxdb out`. */
export const INFLUX_NODES: unknown[] = [require('node-red-contrib-influxdb')];

/** The influxd binary: INFLUXD, else `influxd` on PATH; undefined when there is none. */
export function findInfluxd(): string | undefined {
  return findExecutable('influxd', 'INFLUXD');
}

/** `influxd version`, e.g. "InfluxDB v1.6.7~rc0 (git: unknown unknown)". */
export function influxdVersion(bin: string): string {
  return spawnSync(bin, ['version'], { encoding: 'utf8', timeout: 10_000 }).stdout.trim();
}

export interface StartedInflux {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  /** Milliseconds from spawn until /ping answered 204. */
  startMs: number;
  version: string;
  /** An InfluxQL statement over /query (POST for statements that change something); the parsed answer. */
  query(q: string, db?: string): Promise<any>;
  /** The rows of the first series of a SELECT (epoch ms times), [] when there is none. */
  rows(q: string, db: string): Promise<Array<Record<string, any>>>;
  /** Line protocol over /write (precision ms). */
  write(db: string, lines: string): Promise<void>;
  output(): string;
  /** The process (its PID, to check that it is gone). */
  pid: number;
  /** SIGTERM by PID (SIGKILL after 10 s), waits for its exit, removes the temp dir. */
  stop(): Promise<void>;
}

function config(dir: string, httpPort: number, rpcPort: number): string {
  return [
    '# written by test/helpers/influx.ts',
    'reporting-disabled = true', // upstream 1.x
    'reporting-enabled = false', // Debian's build (it ignores keys it does not know)
    `bind-address = "127.0.0.1:${rpcPort}"`,
    '[meta]',
    `  dir = "${path.join(dir, 'meta')}"`,
    '  logging-enabled = false',
    '[data]',
    `  dir = "${path.join(dir, 'data')}"`,
    `  wal-dir = "${path.join(dir, 'wal')}"`,
    '  query-log-enabled = false',
    '[monitor]',
    '  store-enabled = false',
    '[subscriber]',
    '  enabled = false',
    '[continuous_queries]',
    '  enabled = false',
    '[http]',
    '  enabled = true',
    `  bind-address = "127.0.0.1:${httpPort}"`,
    '  auth-enabled = false',
    '  log-enabled = false',
    '  pprof-enabled = false',
    '  unix-socket-enabled = false',
    '[ifql]',
    '  enabled = false',
    '[logging]',
    '  level = "warn"',
    '  suppress-logo = true',
    '',
  ].join('\n');
}

/** Starts influxd (`bin`) and resolves once /ping answers 204 (within `ms`). */
export async function startInflux(bin: string, ms = 20_000): Promise<StartedInflux> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-influx-'));
  const [httpPort, rpcPort] = [await freePort(), await freePort()];
  const file = path.join(dir, 'influxdb.conf');
  fs.writeFileSync(file, config(dir, httpPort, rpcPort));
  const url = `http://127.0.0.1:${httpPort}`;
  const t0 = performance.now();
  const server: Spawned = start(bin, ['run', '-config', file], { cwd: dir });
  let exited = false;
  void server.exited.then(() => {
    exited = true;
  });
  const stop = async () => {
    await server.stop('SIGTERM', 10_000);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // Bounded in count and time: at most `ms`, one /ping every 20 ms.
  const deadline = t0 + ms;
  let ready = false;
  while (!ready && !exited && performance.now() < deadline) {
    ready = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.status === 204,
      () => false,
    );
    if (!ready) await new Promise((r) => setTimeout(r, 20));
  }
  if (!ready) {
    await stop();
    throw new Error(
      `influxd did not answer /ping with 204 within ${ms} ms (${exited ? 'it exited' : 'still running'}); output:\n${server.output().slice(-3000)}`,
    );
  }
  const startMs = performance.now() - t0;

  async function query(q: string, db?: string): Promise<any> {
    const write = /^\s*(CREATE|DROP|DELETE|ALTER|GRANT|REVOKE|KILL)\b/i.test(q);
    const params = new URLSearchParams({ q, epoch: 'ms', ...(db ? { db } : {}) });
    const res = await fetch(`${url}/query?${params}`, {
      method: write ? 'POST' : 'GET',
      signal: AbortSignal.timeout(10_000),
    });
    const body: any = await res.json();
    const err = body.error ?? body.results?.find((r: any) => r.error)?.error;
    if (!res.ok || err) throw new Error(`InfluxDB ${q}: HTTP ${res.status} ${err ?? ''}`);
    return body;
  }

  return {
    url,
    port: httpPort,
    startMs,
    version: influxdVersion(bin),
    query,
    async rows(q, db) {
      const series = (await query(q, db)).results?.[0]?.series?.[0];
      if (!series) return [];
      return series.values.map((v: any[]) =>
        Object.fromEntries(series.columns.map((c: string, i: number) => [c, v[i]])),
      );
    },
    async write(db, lines) {
      const res = await fetch(`${url}/write?${new URLSearchParams({ db, precision: 'ms' })}`, {
        method: 'POST',
        body: lines,
        signal: AbortSignal.timeout(10_000),
      });
      if (res.status !== 204) throw new Error(`InfluxDB write: HTTP ${res.status} ${await res.text()}`);
    },
    output: server.output,
    pid: server.child.pid!,
    stop,
  };
}

/**
 * Loads examples/<file> like loadExample (test/helpers/examples.ts) does, with the
 * node-red-contrib-influxdb nodes too: the EMS config node on `simUrl`, the `influxdb` config
 * node on 127.0.0.1:`influxPort` (default 1, where nothing listens).
 */
export async function loadInfluxExample(file: string, simUrl: string, influxPort?: number): Promise<LoadedExample> {
  const shipped = readExample(file);
  const flow = forTest(shipped, simUrl).map((n) =>
    n.type === 'influxdb' ? { ...n, hostname: '127.0.0.1', port: String(influxPort ?? 1) } : n,
  );
  await helper.load([...new Set([...NODES, ...CORE_NODES, ...INFLUX_NODES])], flow, {});
  return loaded(file, shipped);
}

export interface Completion {
  msg: any;
  error?: unknown;
}

/**
 * Records when the node with `id` completes a message (calls done(), with or without an
 * error), through Node-RED's onComplete hook; `count(n)` awaits n completions.
 */
export function completions(id: string): {
  all: Completion[];
  count(n: number, ms?: number): Promise<Completion[]>;
  remove(): void;
} {
  const hooks = (helper as any)._RED.hooks;
  const name = `onComplete.emsInfluxTest${id}`;
  const all: Completion[] = [];
  const waiters = new Set<() => void>();
  hooks.add(name, (ev: any) => {
    if (ev.node?.id !== id) return;
    all.push({ msg: ev.msg, error: ev.error });
    for (const w of [...waiters]) w();
  });
  return {
    all,
    remove: () => hooks.remove(name),
    count(n, ms = 20_000) {
      if (all.length >= n) return Promise.resolve(all.slice(0, n));
      return new Promise((resolve, reject) => {
        const check = () => {
          if (all.length < n) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(all.slice(0, n));
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${n} completions of ${id}; got ${all.length}`));
        }, ms);
        waiters.add(check);
      });
    },
  };
}
