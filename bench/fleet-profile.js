'use strict';
/**
 * Benchmark 5, the package's own share of a polling process. The ems-device-read alternative of
 * fleet polling (bench/lib/fleet-child.js: 5,000 ems-device-read nodes on one config node, every
 * 10 s, against the simulator in another process), with a CPU profile of its window (inspector,
 * 200 µs sampling, BENCH_CPU_PROFILE). Counts the samples whose own frame lies in one of the
 * package's files (dist/) against all non-idle samples (bench/lib/profile-share.js), with the
 * breakdown by file. 3 rounds, each a fresh process: BENCH_PROFILE_S (default 20) seconds of
 * profile after BENCH_WARMUP_S (default 10) seconds of polling. A profile's proportions do not
 * depend on how loaded the machine is, only on what the process does.
 */
const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DIST, guard, machine, median, mmm, output, round, startServer } = require('./lib/common');
const { packageShare } = require('./lib/profile-share');

const SITES = 1667;
const NODES = 5000;
const INTERVAL_S = 10;
const PROPS = 'power,totalEnergyProduced';
const WINDOW_S = Number(process.env.BENCH_PROFILE_S) || 20;
const WARMUP_S = Number(process.env.BENCH_WARMUP_S) || INTERVAL_S;
const ROUNDS = 3;
const GOAL_PCT = 7;

/** One fresh polling process with a profile of its window: resolves with the profile's share and the window's figures. */
function profiledRun(sim, r) {
  const file = path.join(os.tmpdir(), `ems-fleet-profile-${process.pid}-${r}.cpuprofile`);
  return new Promise((resolve, reject) => {
    const child = fork(
      path.join(__dirname, 'lib', 'fleet-child.js'),
      [JSON.stringify({ mode: 'ours', url: sim.url, sites: SITES, nodes: NODES, intervalS: INTERVAL_S, props: PROPS })],
      {
        execArgv: ['--expose-gc'],
        env: { ...process.env, BENCH_CPU_PROFILE: file },
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      },
    );
    const kill = setTimeout(
      () => {
        child.kill('SIGKILL');
        reject(new Error(`round ${r + 1}: no result in time`));
      },
      (WARMUP_S + WINDOW_S + 120) * 1000,
    );
    let result;
    child.on('message', (m) => {
      if (m.ready) child.send({ cmd: 'measure', warmupMs: WARMUP_S * 1000, windowMs: WINDOW_S * 1000 });
      else if (m.result) result = m.result;
    });
    child.on('exit', (code) => {
      clearTimeout(kill);
      if (!result) return reject(new Error(`round ${r + 1}: exited with ${code} before its result`));
      const share = packageShare(JSON.parse(fs.readFileSync(file, 'utf8')), DIST);
      fs.rmSync(file, { force: true });
      return resolve({ ...result, share });
    });
  });
}

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || (ROUNDS * (WARMUP_S + WINDOW_S + 60) + 60) * 1000, 'fleet-profile');
  const sim = await startServer({ mode: 'sim', fleetSites: SITES });
  const runs = [];
  for (let r = 0; r < ROUNDS; r++) {
    const run = await profiledRun(sim, r);
    process.stderr.write(
      `fleet-profile round ${r + 1}: package ${round(run.share.ownPct, 1)} % of ${run.share.busySamples} busy samples, ${run.messages} messages, ${run.errors} errors\n`,
    );
    runs.push(run);
  }
  await sim.stop();
  const owns = runs.map((r) => r.share.ownPct);
  // By file: each file's share of the busy samples, min / median / max over the rounds.
  const files = [...new Set(runs.flatMap((r) => r.share.byFile.map((f) => f.file)))];
  const pctOf = (run, file) => (run.share.byFile.find((f) => f.file === file) || { pct: 0 }).pct;
  const byFile = files
    .map((file) => ({ file, pcts: runs.map((run) => pctOf(run, file)) }))
    .sort((a, b) => median(b.pcts) - median(a.pcts));
  const errors = runs.reduce((n, r) => n + r.errors, 0);
  output({
    id: 'fleet-profile',
    title: "Fleet polling: the package's own share",
    machine: machine(),
    settings: {
      devices: NODES,
      intervalSeconds: INTERVAL_S,
      profileSeconds: WINDOW_S,
      warmupSeconds: WARMUP_S,
      rounds: ROUNDS,
      samplingMicroseconds: 200,
    },
    method:
      `the ems-device-read process of fleet polling (bench/lib/fleet-child.js, 5,000 nodes, 10 s), a fresh process per round, ` +
      `${WARMUP_S} s of polling before a ${WINDOW_S} s CPU profile (inspector, 200 µs sampling); the package's share is the samples whose own frame ` +
      `is in one of its files (dist/) over all non-idle samples (built-ins it calls, such as timers or EventTarget, and GC count as not its own); ` +
      `${ROUNDS} rounds, min / median / max.`,
    results: {
      'busy samples per round': runs.map((r) => r.share.busySamples).join(', '),
      'process CPU % of one core per round': runs.map((r) => round((r.cpuMs / r.wall) * 100, 1)).join(', '),
      'messages per round (errors)': `${runs.map((r) => r.messages).join(', ')} (${errors} errors)`,
    },
    tables: [
      {
        title: "The package's own samples by file (dist/), % of the busy samples, min / median / max over the rounds:",
        rows: Object.fromEntries(byFile.map((f) => [f.file, { '% of busy samples': mmm(f.pcts, 2) }])),
      },
    ],
    goals: [
      {
        goal: "package's own code <= 7 % of the polling process' busy time",
        measured: `${mmm(owns, 1)} % of the busy samples (min / median / max of ${ROUNDS} profiles); by file: ${byFile
          .slice(0, 6)
          .map((f) => `${f.file} ${round(median(f.pcts), 1)}`)
          .join(', ')}`,
        met: median(owns) <= GOAL_PCT && errors === 0,
      },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
