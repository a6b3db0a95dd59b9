'use strict';
/** Shared plumbing of the benchmarks: child servers, CPU readings, closed-loop load, output. */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
// BENCH_DIST: another build of the package to measure (e.g. a copy of dist/ made while others rebuild it).
const DIST = process.env.BENCH_DIST ? path.resolve(process.env.BENCH_DIST) : path.join(ROOT, 'dist');

/** Starts bench/lib/sim-child.js with the given options (and node options, e.g. --cpu-prof); resolves once it listens. */
function startServer(opts, timeoutMs = 20_000, nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, path.join(__dirname, 'sim-child.js'), JSON.stringify(opts)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('server did not start'));
    }, timeoutMs);
    let buf = '';
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}`));
    });
    child.stdout.on('data', (d) => {
      buf += d;
      const listening = /listening on (http:\/\/\S+)/.exec(buf);
      if (!listening) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({
        url: listening[1],
        pid: child.pid,
        stop: () =>
          new Promise((res) => {
            if (child.exitCode !== null) return res();
            const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
            child.once('exit', () => {
              clearTimeout(kill);
              res();
            });
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/** CPU time (user + system) a process has used so far, ms (Linux /proc). */
function procCpuMs(pid) {
  try {
    // the fields after the command name: utime and stime (clock ticks, 100 a second) are the 14th and 15th of the line
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

/** CPU time of this process so far, ms. */
function selfCpuMs() {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/** GET a JSON document (the simulator's /sim/stats). */
function getJson(url) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => {
          try {
            resolve(JSON.parse(body));
          } catch (e) {
            reject(e);
          }
        });
      })
      .on('error', reject);
  });
}

/** API requests the simulator has answered so far. */
async function simRequests(url) {
  return (await getJson(`${url}/sim/stats`)).requests;
}

/**
 * Closed loop: runs `task(i)` for i in [from, from + count) with at most `inflight` at once.
 * Resolves with the elapsed seconds; rejects on the first failure.
 */
async function closedLoop(from, count, inflight, task) {
  let next = from;
  const end = from + count;
  const t0 = process.hrtime.bigint();
  const worker = async () => {
    while (next < end) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inflight, count) }, worker));
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

function median(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** Min, median and max of per-round figures. */
function spread(xs) {
  return { min: Math.min(...xs), median: median(xs), max: Math.max(...xs) };
}

/** "min / median / max" of per-round figures, rounded to d decimals. */
function mmm(xs, d = 2) {
  if (!xs || xs.length === 0 || xs.some((x) => !Number.isFinite(x))) return 'n/a';
  const figures = spread(xs);
  const shown = (x) => round(x, d).toLocaleString('en-US', { maximumFractionDigits: d });
  return `${shown(figures.min)} / ${shown(figures.median)} / ${shown(figures.max)}`;
}

/**
 * The order of the alternatives in round r: rotated by r (ABC, BCA, CAB for three), so every
 * alternative runs first, in the middle and last once in three rounds.
 */
function rotation(names, r) {
  const first = r % names.length;
  return names.slice(first).concat(names.slice(0, first));
}

/**
 * Runs `measure(name, round)` for every alternative in `rounds` rotated rounds (rotation above);
 * returns each alternative's results in round order, and the order of each round.
 */
async function rotatedRounds(names, rounds, measure) {
  const runs = Object.fromEntries(names.map((n) => [n, []]));
  const orders = [];
  for (let r = 0; r < rounds; r++) {
    const order = rotation(names, r);
    orders.push(order);
    for (const name of order) runs[name].push(await measure(name, r));
  }
  return { runs, orders };
}

function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0] ? cpus[0].model.trim() : 'unknown',
    cores: cpus.length,
    memoryGB: round(os.totalmem() / 2 ** 30, 1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    nodeRed: require('node-red/package.json').version,
    loadAverage: os.loadavg().map((x) => round(x, 2)),
  };
}

/** Ends a benchmark: writes its result where run-all asked (BENCH_OUT), or prints it. */
function output(result) {
  const json = JSON.stringify(result, null, 2);
  if (process.env.BENCH_OUT) fs.writeFileSync(process.env.BENCH_OUT, json);
  else process.stdout.write(`${json}\n`);
}

/** Kills this process if a benchmark overruns its budget. */
function guard(ms, name) {
  setTimeout(() => {
    process.stderr.write(`${name}: over its ${ms / 1000} s budget, stopped\n`);
    process.exit(3);
  }, ms).unref();
}

module.exports = {
  ROOT,
  DIST,
  startServer,
  procCpuMs,
  selfCpuMs,
  getJson,
  simRequests,
  closedLoop,
  median,
  spread,
  mmm,
  rotation,
  rotatedRounds,
  round,
  machine,
  output,
  guard,
};
