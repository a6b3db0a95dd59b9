'use strict';
/**
 * `npm run bench`: runs the benchmarks one after another, each in its own process (read
 * overhead and fleet polling with --expose-gc), then writes bench/results.json and BENCHMARKS.md.
 * A benchmark that fails or overruns is reported as such; the others still run.
 * `node bench/run-all.js coalescing time-series` runs only those; `--report` only rewrites
 * BENCHMARKS.md from bench/results.json (after editing bench/intro.md or bench/method-and-limits.js);
 * `--merge plan plan-week` runs those and replaces their entries in bench/results.json, keeping the others.
 * BENCH_WINDOW_S (default 60) sets fleet polling's CPU windows; the full run takes about 22-26
 * minutes on a quiet 2-core machine, most of it fleet polling's twelve windows.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, machine, round } = require('./lib/common');
const { writeReport } = require('./lib/report');

// Fleet polling: 3 rounds x 3 alternatives, each a fresh process that polls for a warm-up and a
// window of BENCH_WINDOW_S seconds (default 60; BENCH_WINDOW_S=5 for a quick run while developing).
const WINDOW_S = Number(process.env.BENCH_WINDOW_S) || 60;
const WARMUP_S = Number(process.env.BENCH_WARMUP_S) || 10;

const BENCHES = [
  { id: 'read-overhead', file: 'read-overhead.js', budgetS: 240, node: ['--expose-gc'] },
  { id: 'coalescing', file: 'coalescing.js', budgetS: 270, node: ['--expose-gc'] },
  { id: 'time-series', file: 'time-series.js', budgetS: 90 },
  { id: 'fleet-polling', file: 'fleet-polling.js', budgetS: 12 * (WINDOW_S + WARMUP_S + 40) + 60 },
  { id: 'fleet-profile', file: 'fleet-profile.js', budgetS: 330 },
  { id: 'footprint', file: 'footprint.js', budgetS: 240 },
  { id: 'simulator', file: 'simulator.js', budgetS: 150 },
  { id: 'schedule', file: 'schedule.js', budgetS: 60 },
  { id: 'portfolio', file: 'portfolio.js', budgetS: 30 },
  { id: 'steering', file: 'steering.js', budgetS: 480, node: ['--expose-gc'] },
  { id: 'group-steering', file: 'group-steering.js', budgetS: 180, node: ['--expose-gc'] },
  { id: 'fleet-read', file: 'fleet-read.js', budgetS: 60, node: ['--expose-gc'] },
  { id: 'plan', file: 'plan.js', budgetS: 300 },
  { id: 'plan-week', file: 'plan-week.js', budgetS: 300 },
  { id: 'bursts', file: 'bursts.js', budgetS: 420, node: ['--expose-gc'] },
];

function runOne(b) {
  const out = path.join(os.tmpdir(), `ems-bench-${process.pid}-${b.id}.json`);
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, [...(b.node || []), path.join(__dirname, b.file)], {
      cwd: ROOT,
      env: { ...process.env, BENCH_OUT: out, BENCH_GUARD_MS: String(b.budgetS * 1000) },
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
      process.stderr.write(d);
    });
    const kill = setTimeout(() => child.kill('SIGKILL'), (b.budgetS + 30) * 1000);
    child.on('exit', (code) => {
      clearTimeout(kill);
      const seconds = round((Date.now() - t0) / 1000, 1);
      try {
        const result = JSON.parse(fs.readFileSync(out, 'utf8'));
        fs.rmSync(out, { force: true });
        resolve({ ...result, seconds });
      } catch {
        resolve({
          id: b.id,
          title: b.id,
          seconds,
          error: `exit code ${code}: ${stderr.trim().split('\n').slice(-3).join(' ').slice(0, 300)}`,
          goals: [],
        });
      }
    });
  });
}

async function main() {
  if (process.argv[2] === '--report') {
    writeReport(ROOT, JSON.parse(fs.readFileSync(path.join(ROOT, 'bench', 'results.json'), 'utf8')));
    process.stdout.write('Wrote BENCHMARKS.md from bench/results.json\n');
    return;
  }
  const merge = process.argv[2] === '--merge';
  const only = process.argv.slice(merge ? 3 : 2);
  const t0 = Date.now();
  const machineInfo = machine();
  const benchmarks = [];
  for (const b of BENCHES.filter((x) => only.length === 0 || only.includes(x.id))) {
    process.stdout.write(`\n== ${b.id} ==\n`);
    const result = await runOne(b);
    benchmarks.push(result);
    for (const g of result.goals || [])
      process.stdout.write(`  ${g.met ? 'met    ' : 'NOT met'}  ${g.goal}: ${g.measured}\n`);
    if (result.error) process.stdout.write(`  FAILED ${result.error}\n`);
    process.stdout.write(`  (${result.seconds} s)\n`);
  }
  const run = {
    generatedAt: new Date().toISOString(),
    totalSeconds: round((Date.now() - t0) / 1000, 0),
    machine: machineInfo,
    benchmarks,
  };
  if (merge && only.length > 0) {
    const file = path.join(ROOT, 'bench', 'results.json');
    const old = JSON.parse(fs.readFileSync(file, 'utf8'));
    const fresh = new Map(benchmarks.map((b) => [b.id, { ...b, measuredAt: run.generatedAt }]));
    const kept = old.benchmarks.map((b) => fresh.get(b.id) ?? b);
    for (const [id, b] of fresh) if (!kept.some((k) => k.id === id)) kept.push(b);
    writeReport(ROOT, { ...old, benchmarks: kept });
    process.stdout.write(`\nMerged ${only.join(', ')} into bench/results.json and BENCHMARKS.md\n`);
  } else if (only.length === 0) {
    writeReport(ROOT, run);
    process.stdout.write(`\nWrote bench/results.json and BENCHMARKS.md (${run.totalSeconds} s)\n`);
  } else {
    process.stdout.write(`\n(partial run: results.json and BENCHMARKS.md left unchanged)\n`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
