'use strict';
/**
 * Benchmark 7, simulator throughput. Requests per second of the simulator's single-measurement
 * endpoint (GET /devices/{ref}/measurement?property=soc) against a bare node:http server that
 * answers the same JSON (captured from the simulator, same headers), both in child processes,
 * loaded by autocannon running in another child process (bench/lib/cannon-child.js, forked),
 * with the same connections and duration, 3 rounds in rotated order (AB, BA, AB) after a
 * warm-up of each. Besides requests per second, each server's CPU per request (/proc, user +
 * system over the run), a figure that other load on the machine disturbs less. Also the cost of
 * the sites' history: the warm-up of HISTORY_DAYS (400) days before the start for the default
 * sites, computed in this process on a fresh model (first run, then the median of five more).
 * BENCH_SIM_CPU_PROF=<dir> starts both servers with --cpu-prof (profiles written to <dir> when
 * they stop), to see where the simulator's time goes against the bare server's.
 */
const { fork } = require('node:child_process');
const http = require('node:http');
const path = require('node:path');
const {
  DIST,
  guard,
  machine,
  median,
  mmm,
  output,
  procCpuMs,
  rotatedRounds,
  round,
  startServer,
} = require('./lib/common');

const { DEFAULT_SITES } = require(path.join(DIST, 'simulator'));
const { SiteModel } = require(path.join(DIST, 'simulator', 'model'));
const { HISTORY_DAYS } = require(path.join(DIST, 'simulator', 'history-warmup'));
const CONNECTIONS = 10;
const DURATION_S = Number(process.env.BENCH_CANNON_S) || 8;
const ROUNDS = 3;

function get(url) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode, body, requestId: res.headers['x-request-id'] }));
      })
      .on('error', reject);
  });
}

/** The load generator in its own process: one autocannon run per call. */
function startCannon() {
  const child = fork(path.join(__dirname, 'lib', 'cannon-child.js'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const run = (url, duration) =>
    new Promise((resolve, reject) => {
      child.once('message', (m) => (m.error ? reject(new Error(m.error)) : resolve(m)));
      child.send({ url, connections: CONNECTIONS, duration });
    });
  const stop = () =>
    new Promise((resolve) => {
      child.once('exit', resolve);
      child.send({ exit: true });
    });
  return { run, stop };
}

/** Milliseconds to compute the history before the start of the default sites: the first run and the median of the next five. */
function historyCost() {
  const runs = [];
  for (let r = 0; r < 6; r++) {
    const start = performance.now();
    for (const d of DEFAULT_SITES) new SiteModel(d, r + 1, Date.UTC(2026, 2, 10, 6)).past();
    runs.push(performance.now() - start);
  }
  const rest = runs.slice(1).sort((a, b) => a - b);
  return { firstMs: round(runs[0], 1), medianMs: round(rest[2], 1) };
}

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 120_000, 'simulator');
  const history = historyCost();
  const pathQ = `/devices/${DEFAULT_SITES[0].battery.deviceReference}/measurement?property=soc`;
  const prof = process.env.BENCH_SIM_CPU_PROF;
  const sim = await startServer({ mode: 'sim' }, 20_000, prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []);
  const sample = await get(sim.url + pathQ);
  if (sample.status !== 200) throw new Error(`simulator answered ${sample.status}`);
  const bare = await startServer(
    { mode: 'bare', body: sample.body, requestId: sample.requestId },
    20_000,
    prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [],
  );
  if (prof)
    process.stderr.write(
      `simulator: CPU profiles in ${prof}: CPU.*.${sim.pid}.*.cpuprofile (simulator), CPU.*.${bare.pid}.*.cpuprofile (bare node:http)\n`,
    );
  const cannon = startCannon();
  const servers = { simulator: sim, 'bare node:http': bare };
  const names = Object.keys(servers);
  for (const name of names) await cannon.run(servers[name].url + pathQ, 2); // warm-up
  const { runs, orders } = await rotatedRounds(names, ROUNDS, async (name) => {
    const srv = servers[name];
    const cpu0 = procCpuMs(srv.pid);
    const res = await cannon.run(srv.url + pathQ, DURATION_S);
    return { ...res, rps: res.requests / res.seconds, cpuUs: ((procCpuMs(srv.pid) - cpu0) * 1000) / res.requests };
  });
  await cannon.stop();
  await sim.stop();
  await bare.stop();
  const alternatives = Object.fromEntries(
    names.map((n) => {
      const rs = runs[n];
      return [
        n,
        {
          'requests/s (min / median / max)': mmm(
            rs.map((x) => x.rps),
            0,
          ),
          'server CPU µs per request (min / median / max)': mmm(
            rs.map((x) => x.cpuUs),
            1,
          ),
          requests: rs.reduce((a, x) => a + x.requests, 0),
          errors: rs.reduce((a, x) => a + x.errors, 0),
          non2xx: rs.reduce((a, x) => a + x.non2xx, 0),
          'latency p99 ms (max)': Math.max(...rs.map((x) => x.p99)),
        },
      ];
    }),
  );
  const ratios = runs.simulator.map((x, i) => x.rps / runs['bare node:http'][i].rps);
  const cpuRatios = runs.simulator.map((x, i) => x.cpuUs / runs['bare node:http'][i].cpuUs);
  const simErr = runs.simulator.reduce((a, x) => a + x.errors + x.non2xx, 0);
  output({
    id: 'simulator',
    title: 'Simulator throughput',
    machine: machine(),
    settings: {
      endpoint: 'GET /devices/{ref}/measurement?property=soc',
      connections: CONNECTIONS,
      durationSeconds: DURATION_S,
      rounds: ROUNDS,
      bodyBytes: Buffer.byteLength(sample.body),
    },
    method:
      `autocannon in a forked child process (${CONNECTIONS} connections, ${DURATION_S} s per run, after a 2 s warm-up of each server), both servers in child processes; ` +
      `${ROUNDS} rounds, order rotated (${orders.map((o) => o.map((n) => (n === 'simulator' ? 'sim' : 'bare')).join('-')).join(', ')}); ` +
      'server CPU from /proc over each run; min / median / max over the rounds, ratios taken round by round.' +
      ` Load average (1, 5, 15 min) at the end: ${machine().loadAverage.join(', ')}.`,
    alternatives,
    history: { days: HISTORY_DAYS, sites: DEFAULT_SITES.length, ...history },
    ratios: {
      'requests/s, simulator / bare node:http': mmm(ratios),
      'server CPU per request, simulator / bare node:http': mmm(cpuRatios),
    },
    goals: [
      {
        goal: 'requests per second at least 0.8 x a bare node:http server (median of rounds)',
        measured: `${mmm(ratios)} (min / median / max of ${ratios.length} rounds)`,
        met: median(ratios) >= 0.8 && simErr === 0,
      },
      {
        goal: `${HISTORY_DAYS} days of history for the default sites under 200 ms (first computation)`,
        measured: history.firstMs,
        met: history.firstMs < 200,
      },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
