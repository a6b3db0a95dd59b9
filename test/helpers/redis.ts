/**
 * A real Redis for the tests (Debian's `redis-server` package, which .ci/run installs): started
 * on 127.0.0.1 and a free port, in a temp dir, with no persistence (`--save ''`, no AOF) and a
 * password when asked; stopped by its PID (SIGKILL for the "Redis dies" cases), the temp dir
 * removed. `restart()` brings it back on the same port (empty, as after a crash without disk).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { findExecutable, freePort, start, type Spawned } from './spawned';

/** The redis-server binary: REDIS_SERVER, else `redis-server` on PATH; undefined when there is none. */
export function findRedisServer(): string | undefined {
  return findExecutable('redis-server', 'REDIS_SERVER');
}

/** Skips the calling describe's tests, with the reason, when there is no redis-server. */
export function redisOrSkip(ctx: Mocha.Context): string {
  const bin = findRedisServer();
  if (!bin) {
    console.log(
      '      skipped: no redis-server (none on PATH, or REDIS_SERVER names no executable); apt-get install redis-server (.ci/run does it)',
    );
    ctx.skip();
  }
  return bin!;
}

export interface StartedRedis {
  url: string;
  port: number;
  pid(): number;
  output(): string;
  /** SIGKILL: Redis is gone at once (clients see the socket close). */
  kill(): Promise<void>;
  /** Starts it again on the same port and dir (empty). */
  restart(): Promise<void>;
  /** SIGTERM, waits, removes the temp dir. */
  stop(): Promise<void>;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let buf = '';
    const end = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => end(false));
    socket.once('error', () => end(false));
    socket.on('data', (b) => {
      buf += b.toString();
      if (/\r\n/.test(buf)) end(/^\+PONG|^-NOAUTH/.test(buf));
    });
    socket.once('connect', () => socket.write('PING\r\n'));
  });
}

/** `appendonly`: persistence (fsync always), so that restart() brings the data back (as a production group's Redis should). */
export async function startRedis(
  bin: string,
  o: { password?: string; appendonly?: boolean } = {},
  ms = 10_000,
): Promise<StartedRedis> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-redis-'));
  const port = await freePort();
  const args = [
    '--bind',
    '127.0.0.1',
    '--port',
    String(port),
    '--save',
    '',
    '--appendonly',
    o.appendonly ? 'yes' : 'no',
    '--appendfsync',
    'always',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--protected-mode',
    'yes',
    '--loglevel',
    'warning',
    ...(o.password ? ['--requirepass', o.password] : []),
  ];
  let server: Spawned;
  const launch = async () => {
    server = start(bin, args, { cwd: dir });
    let exited = false;
    void server.exited.then(() => {
      exited = true;
    });
    const deadline = performance.now() + ms;
    while (!exited && performance.now() < deadline) {
      if (await ping(port)) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    await server.stop('SIGKILL', 1000);
    throw new Error(`redis-server did not answer PING within ${ms} ms; output:\n${server.output().slice(-3000)}`);
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: () => server.child.pid!,
    output: () => server.output(),
    async kill() {
      await server.stop('SIGKILL', 1000);
    },
    restart: launch,
    async stop() {
      await server.stop('SIGTERM', 5000);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * For a describe block: one redis-server for its tests (the block skipped, with the reason,
 * when there is none), stopped after them; and the clients a test opens (`open.push(...)`),
 * closed after each test.
 */
export function useRedisGroup<C extends { close(): Promise<unknown> }>(): {
  readonly redis: StartedRedis;
  readonly open: C[];
} {
  let redis: StartedRedis | undefined;
  const open: C[] = [];
  before(async function () {
    redis = await startRedis(redisOrSkip(this));
  });
  after(async () => {
    await redis?.stop();
  });
  afterEach(async () => {
    await Promise.all(open.map((c) => c.close()));
    open.length = 0;
  });
  return {
    get redis() {
      return redis!;
    },
    open,
  };
}

/** Polls `cond` every 10 ms until true; rejects after `ms`. */
export async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<number> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - t0;
}
