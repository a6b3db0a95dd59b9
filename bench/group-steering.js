'use strict';
/**
 * Benchmark: CPU per steering message with and without a group on Redis. The simulator in a
 * child process with SITES generated sites, a redis-server started here (127.0.0.1, a free
 * port, a temp dir, no persistence; `redis-server` on PATH or REDIS_SERVER), the Node-RED
 * runtime in this process (bench/lib/red.js). Two config nodes on the same simulator, one
 * without redisUrl and one with it (this instance alone in its group, leading every site after
 * a warm-up message to each); an ems-site-steer node on each (msg.site, mode ess).
 * Alternatives, each measured in 3 rotated rounds with a forced GC before it:
 *
 *   without Redis   one ESS setpoint per message, a different site each, INFLIGHT at once
 *   with Redis      the same through the config node in a group: the leader check, the steering
 *                   queue's check, and the group's background work (heartbeats, one lease renewal
 *                   per site every 5 s) while the round runs
 *
 * CPU = process.cpuUsage() of this process per message; Redis CPU per message and Redis
 * commands per message (the group's connection, background included) beside it.
 */
const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const {
  DIST,
  startServer,
  selfCpuMs,
  procCpuMs,
  closedLoop,
  mmm,
  round,
  rotation,
  machine,
  output,
  guard,
} = require('./lib/common');
const red = require('./lib/red');
const { fleetSites } = require('./lib/fleet-sites');

const SITES = Number(process.env.BENCH_GROUP_SITES) || 200;
const PER_ROUND = Number(process.env.BENCH_GROUP_MSGS) || 2000;
const ROUNDS = 3;
const INFLIGHT = 16;
const steerModule = require(path.join(DIST, 'nodes', 'ems-site-steer.js'));

function redisBinary() {
  const dirs = process.env.REDIS_SERVER ? [] : (process.env.PATH || '').split(path.delimiter);
  const all = process.env.REDIS_SERVER ? [process.env.REDIS_SERVER] : dirs.map((d) => path.join(d, 'redis-server'));
  return all.find((f) => {
    try {
      fs.accessSync(f, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function startRedis(bin) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-redis-'));
  const port = await freePort();
  const child = spawn(
    bin,
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    stop: () =>
      new Promise((res) => {
        child.once('exit', () => {
          fs.rmSync(dir, { recursive: true, force: true });
          res();
        });
        child.kill('SIGTERM');
      }),
  };
}

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 180_000, 'group-steering');
  if (!global.gc) throw new Error('run with --expose-gc');
  const bin = redisBinary();
  if (!bin) throw new Error('no redis-server on PATH (or REDIS_SERVER): apt-get install redis-server');
  const refs = fleetSites(SITES).map((s) => s.siteReference);
  const sim = await startServer({ mode: 'sim', fleetSites: SITES });
  const redis = await startRedis(bin);
  await red.start();
  const steer = (id, server) => ({
    id,
    type: 'ems-site-steer',
    server,
    site: 'site',
    siteType: 'msg',
    mode: 'ess',
    essValue: 'payload',
    essValueType: 'msg',
    essUnit: 'kW',
    validity: 'quarter-hour',
    renew: false,
    dryRun: false,
    verify: false,
    wires: [['sink']],
  });
  await red.load(
    [
      { id: 'cfg', type: 'ems-partner-config', baseUrl: sim.url, simulator: false, authType: 'none', concurrency: 6 },
      {
        id: 'cfgG',
        type: 'ems-partner-config',
        baseUrl: sim.url,
        simulator: false,
        authType: 'none',
        concurrency: 6,
        redisUrl: redis.url,
      },
      steer('plain', 'cfg'),
      steer('grouped', 'cfgG'),
      { id: 'catch', type: 'catch', scope: null, uncaught: false, wires: [['errs']] },
      { id: 'sink', type: 'helper' },
      { id: 'errs', type: 'helper' },
    ],
    [],
    [steerModule],
  );
  const group = (await red.getNode('cfgG').runtime()).group;
  await group.connection.ready();

  const send = red.messenger(
    (msg) => Boolean(msg.request),
    (msg) => `not sent: ${msg.error ? msg.error.message : JSON.stringify(msg.standby)}`,
  );
  const alternatives = {
    'without Redis': (i) => send('plain', { site: refs[i % SITES], payload: (i % 9) - 4 }),
    'with Redis': (i) => send('grouped', { site: refs[i % SITES], payload: (i % 9) - 4 }),
  };
  const names = Object.keys(alternatives);
  const stats = Object.fromEntries(names.map((n) => [n, { cpu: [], redisCpuMs: 0, commands: 0, count: 0 }]));
  let next = 0;
  // Warm-up: every site once on each (the group's first message to a site takes its lease), then 1,000 more.
  for (const name of names) {
    await closedLoop(next, SITES, INFLIGHT, alternatives[name]);
    next += SITES;
    await closedLoop(next, 1000, INFLIGHT, alternatives[name]);
    next += 1000;
  }
  const orders = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = rotation(names, r);
    orders.push(order);
    for (const name of order) {
      global.gc();
      const cpu0 = selfCpuMs();
      const rcpu0 = procCpuMs(redis.pid);
      const c0 = group.connection.commands;
      await closedLoop(next, PER_ROUND, INFLIGHT, alternatives[name]);
      next += PER_ROUND;
      const st = stats[name];
      st.cpu.push((selfCpuMs() - cpu0) / PER_ROUND);
      st.redisCpuMs += procCpuMs(redis.pid) - rcpu0;
      st.commands += group.connection.commands - c0;
      st.count += PER_ROUND;
    }
  }
  await red.stop();
  await redis.stop();
  await sim.stop();

  const us = (n) => stats[n].cpu.map((x) => x * 1000);
  const ratio = stats['with Redis'].cpu.map((x, i) => x / stats['without Redis'].cpu[i]);
  output({
    id: 'group-steering',
    title: 'Steering CPU per message, with and without a group on Redis',
    machine: machine(),
    settings: {
      sites: SITES,
      'messages per alternative and round': PER_ROUND,
      rounds: ROUNDS,
      inflight: INFLIGHT,
      simulator: 'child process',
      redis: 'redis-server, child process, no persistence',
    },
    method:
      `${ROUNDS} rounds, order rotated (round 1: ${orders[0].join(', ')}), after a warm-up of one message per site and 1,000 more on each; a forced GC before each ` +
      'alternative; CPU = process.cpuUsage() of this process over the alternative, per message; Redis CPU from /proc per message; Redis commands = those the ' +
      "group's connection sent during the alternative (heartbeats and lease renewals included) per message.",
    alternatives: Object.fromEntries(
      names.map((n) => [
        n,
        {
          'CPU µs per message (min / median / max)': mmm(us(n), 0),
          'Redis CPU µs per message (all rounds)': round((stats[n].redisCpuMs * 1000) / stats[n].count, 1),
          'Redis commands per message (all rounds)': round(stats[n].commands / stats[n].count, 3),
        },
      ]),
    ),
    results: {
      'CPU per message, with Redis / without': mmm(ratio),
    },
    goals: [
      {
        goal: 'coordination adds at most one Redis round trip per steering message (heartbeats and lease renewals included)',
        measured: `${round(stats['with Redis'].commands / stats['with Redis'].count, 3)} commands per message`,
        met: stats['with Redis'].commands / stats['with Redis'].count <= 1,
      },
    ],
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
