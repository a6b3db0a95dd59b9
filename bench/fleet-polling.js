'use strict';
/**
 * Benchmark 4, fleet polling. 5,000 devices (of 1,667 generated sites) polled every 10 s, each
 * alternative in a Node-RED process of its own (bench/lib/fleet-child.js, forked with
 * --expose-gc), the simulator in another child process:
 *   ems-device-read             5,000 ems-device-read nodes (dist/) on one config node (defaults:
 *                               concurrency 6, coalescing on) and its shared PollScheduler
 *   core inject → http request  5,000 inject nodes (repeat 10 s, first shots spread over the
 *                               first 10 s) into one core http request node (keep-alive, parsed JSON)
 *   bare node:http              no Node-RED: a node:http client sending the same GETs at the same
 *                               rate in 250 ms slots over 6 keep-alive sockets (the floor)
 *   bare tuned axios            the same through axios configured as the package configures it
 *                               (the floor of a client on axios, the package's chosen client)
 * Each round starts a fresh process per alternative, lets it poll for a warm-up (one interval),
 * then measures that process's CPU (process.cpuUsage, user + system) over a window of
 * BENCH_WINDOW_S seconds (default 60; e.g. 5 while developing). 3 rounds, order rotated (ABC,
 * BCA, CAB); every figure is min / median / max over the rounds. The heap of ems-device-read
 * after a forced GC is taken before and after each window (outside the CPU window).
 */
const { fork } = require('node:child_process');
const path = require('node:path');
const {
  guard,
  machine,
  median,
  mmm,
  output,
  procCpuMs,
  rotatedRounds,
  round,
  simRequests,
  startServer,
} = require('./lib/common');

const SITES = 1667;
const NODES = 5000;
const INTERVAL_S = 10;
const PROPS = 'power,totalEnergyProduced'; // every kind of device has both
const WINDOW_S = Number(process.env.BENCH_WINDOW_S) || 60;
const WARMUP_S = Number(process.env.BENCH_WARMUP_S) || INTERVAL_S;
const ROUNDS = 3;
const GOAL_PCT = 12;
const MODES = {
  'ems-device-read': 'ours',
  'core inject → http request': 'core',
  'bare node:http': 'bare',
  'bare tuned axios': 'axios',
};

/** Runs one alternative in a fresh process: resolves with its window's figures and the simulator's over the same window. */
function runChild(mode, sim) {
  return new Promise((resolve, reject) => {
    const child = fork(
      path.join(__dirname, 'lib', 'fleet-child.js'),
      [JSON.stringify({ mode, url: sim.url, sites: SITES, nodes: NODES, intervalS: INTERVAL_S, props: PROPS })],
      {
        execArgv: ['--expose-gc'],
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      },
    );
    const kill = setTimeout(
      () => {
        child.kill('SIGKILL');
        reject(new Error(`${mode}: no result in time`));
      },
      (WARMUP_S + WINDOW_S + 120) * 1000,
    );
    let loadMs;
    let simCpu0;
    let simReq0;
    let simCpuMs;
    let simReqPromise;
    let result;
    child.on('message', async (m) => {
      if (m.ready) {
        loadMs = m.loadMs;
        child.send({ cmd: 'measure', warmupMs: WARMUP_S * 1000, windowMs: WINDOW_S * 1000 });
      } else if (m.windowStart) {
        simCpu0 = procCpuMs(sim.pid);
        simReq0 = simRequests(sim.url);
      } else if (m.windowEnd) {
        simCpuMs = procCpuMs(sim.pid) - simCpu0;
        simReqPromise = simRequests(sim.url);
      } else if (m.result) {
        result = m.result;
      }
    });
    child.on('exit', async (code) => {
      clearTimeout(kill);
      if (!result) return reject(new Error(`${mode}: exited with ${code} before its result`));
      const requests = (await simReqPromise) - (await simReq0);
      resolve({ ...result, loadMs, simCpuMs, requests });
    });
  });
}

async function main() {
  const names = Object.keys(MODES);
  guard(
    Number(process.env.BENCH_GUARD_MS) || (ROUNDS * names.length * (WARMUP_S + WINDOW_S + 30) + 60) * 1000,
    'fleet-polling',
  );
  const sim = await startServer({ mode: 'sim', fleetSites: SITES });
  const { runs, orders } = await rotatedRounds(names, ROUNDS, async (name, r) => {
    const res = await runChild(MODES[name], sim);
    process.stderr.write(
      `fleet-polling round ${r + 1} ${name}: ${round((res.cpuMs / res.wall) * 100, 1)} % of a core, ${res.messages} messages, ${res.errors} errors\n`,
    );
    return res;
  });
  await sim.stop();

  const pct = (r) => (r.cpuMs / r.wall) * 100;
  const summary = (name) => {
    const rs = runs[name];
    return {
      'CPU % of one core (min / median / max)': mmm(rs.map(pct), 1),
      'CPU µs per poll (min / median / max)': mmm(
        rs.map((r) => (r.cpuMs * 1000) / r.messages),
        0,
      ),
      'CPU % at the nominal 500 polls/s (µs per poll x rate)': mmm(
        rs.map((r) => ((r.cpuMs / r.messages) * (NODES / INTERVAL_S)) / 10),
        1,
      ),
      'messages per window': rs.map((r) => r.messages).join(', '),
      'expected per window': Math.round(median(rs.map((r) => r.expected))),
      'HTTP requests (simulator)': rs.map((r) => r.requests).join(', '),
      errors: rs.reduce((n, r) => n + r.errors, 0),
      'messages per second (lowest, highest)': rs
        .map((r) => `${r.messagesPerSecond.min}-${r.messagesPerSecond.max}`)
        .join(', '),
      'busiest 10 ms': rs.map((r) => r.busiest10ms).join(', '),
      'simulator CPU %': mmm(
        rs.map((r) => (r.simCpuMs / r.wall) * 100),
        1,
      ),
      'start-up and flow load, ms': rs.map((r) => r.loadMs).join(', '),
    };
  };
  const alternatives = Object.fromEntries(names.map((n) => [n, summary(n)]));
  const ours = runs['ems-device-read'];
  const oursPct = ours.map(pct);
  const ratio = (other) => ours.map((r, i) => pct(r) / pct(runs[other][i]));
  const heapDelta = ours.map((r) => (r.heap2 - r.heap1) / 2 ** 20);
  const perWindow = Math.floor(WINDOW_S / INTERVAL_S);
  // Every node polled once per interval (± 1 per window), and the window's messages within 10 % of
  // the nominal rate: fewer means polls were skipped (a starved or overloaded process), more that
  // it was catching up on polls due before the window.
  const pollsOk = ours.every(
    (r) =>
      r.pollsPerNode.min >= perWindow - 1 &&
      r.pollsPerNode.max <= perWindow + 1 &&
      Math.abs(r.messages / r.expected - 1) <= 0.1,
  );
  const errors = ours.reduce((n, r) => n + r.errors, 0);
  output({
    id: 'fleet-polling',
    title: 'Fleet polling',
    machine: machine(),
    settings: {
      devices: NODES,
      intervalSeconds: INTERVAL_S,
      windowSeconds: WINDOW_S,
      warmupSeconds: WARMUP_S,
      rounds: ROUNDS,
      properties: PROPS,
      concurrency: 'default (6)',
    },
    method:
      `each alternative in a fresh process of its own (Node-RED runtime: node-red-node-test-helper with its spies removed; our nodes from dist/), the simulator in another; ` +
      `${WARMUP_S} s of polling before a ${WINDOW_S} s window of the process's CPU (process.cpuUsage, user + system) / wall time; ` +
      `${ROUNDS} rounds, order rotated (round 1: ${orders[0].join(', ')}; each later round starts one further along); min / median / max over the rounds; ratios round by round.` +
      ` Load average (1, 5, 15 min) at the end: ${machine().loadAverage.join(', ')}.`,
    alternatives,
    results: {
      'ems-device-read heap after GC, before / after each window, MB': ours
        .map((r) => `${round(r.heap1 / 2 ** 20, 1)} / ${round(r.heap2 / 2 ** 20, 1)}`)
        .join('; '),
      'ems-device-read heap growth over each window, MB': ours
        .map((r) => round((r.heap2 - r.heap1) / 2 ** 20, 2))
        .join(', '),
      'ems-device-read RSS at the end of each window, MB': ours.map((r) => round(r.rss2 / 2 ** 20, 1)).join(', '),
      'ems-device-read polls per node per window (min-max)': ours
        .map((r) => `${r.pollsPerNode.min}-${r.pollsPerNode.max}`)
        .join(', '),
    },
    ratios: {
      'CPU, ems-device-read / core inject → http request': mmm(ratio('core inject → http request')),
      'CPU, ems-device-read / bare node:http': mmm(ratio('bare node:http')),
      'CPU, ems-device-read / bare tuned axios': mmm(ratio('bare tuned axios')),
      'CPU, bare tuned axios / bare node:http': mmm(
        runs['bare tuned axios'].map((r, i) => pct(r) / pct(runs['bare node:http'][i])),
      ),
    },
    goals: [
      {
        goal: `CPU at most ${GOAL_PCT} % of one core (median of rounds)`,
        measured: `${mmm(oursPct, 1)} % (min / median / max of ${oursPct.length} ${WINDOW_S} s windows)`,
        met: median(oursPct) <= GOAL_PCT,
      },
      {
        goal: "CPU <= 1.0 x bare tuned axios (axios' own http adapter; median of rounds)",
        measured: `${mmm(ratio('bare tuned axios'))} (round by round)`,
        met: median(ratio('bare tuned axios')) <= 1.0,
      },
      {
        goal: 'heap after each window within 5 MB of the heap before it',
        measured: `${mmm(heapDelta, 2)} MB`,
        met: heapDelta.every((d) => Math.abs(d) <= 5),
      },
      {
        goal: `every device polled every ${INTERVAL_S} s (messages per window within 10 % of the nominal rate), no errors`,
        measured: `${ours.map((r) => r.messages).join(', ')} messages (expected ${Math.round(ours[0].expected)} per window), polls per node ${ours.map((r) => `${r.pollsPerNode.min}-${r.pollsPerNode.max}`).join(', ')}, ${errors} errors`,
        met: errors === 0 && pollsOk,
      },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
