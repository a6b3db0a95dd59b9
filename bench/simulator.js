'use strict';
/**
 * Benchmark 6, simulator throughput. Requests per second of the simulator's single-measurement
 * endpoint (GET /devices/{ref}/measurement?property=soc) against a bare node:http server that
 * answers the same JSON (captured from the simulator, same headers), both in child processes,
 * loaded by autocannon from this process with the same connections and duration, one after
 * the other (two rounds, alternating), after a warm-up of each. Also the cost of the sites'
 * history: the warm-up of HISTORY_DAYS (400) days before the start for the default sites,
 * computed in this process on a fresh model (first run, then the median of five more).
 */
const http = require('node:http');
const path = require('node:path');
const autocannon = require('autocannon');
const { DIST, guard, machine, output, round, startServer } = require('./lib/common');

const { DEFAULT_SITES } = require(path.join(DIST, 'simulator'));
const { SiteModel } = require(path.join(DIST, 'simulator', 'model'));
const { HISTORY_DAYS } = require(path.join(DIST, 'simulator', 'history-warmup'));
const CONNECTIONS = 10;
const DURATION_S = Number(process.env.BENCH_CANNON_S) || 8;
const ROUNDS = 2;

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body, requestId: res.headers['x-request-id'] }));
    }).on('error', reject);
  });
}

function cannon(url, duration) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration, pipelining: 1 }, (err, r) => (err ? reject(err) : resolve(r)));
  });
}

/** Milliseconds to compute the history before the start of the default sites: the first run and the median of the next five. */
function historyCost() {
  const runs = [];
  for (let r = 0; r < 6; r++) {
    const t = performance.now();
    for (const d of DEFAULT_SITES) new SiteModel(d, r + 1, Date.UTC(2026, 2, 10, 6)).past();
    runs.push(performance.now() - t);
  }
  const rest = runs.slice(1).sort((a, b) => a - b);
  return { firstMs: round(runs[0], 1), medianMs: round(rest[2], 1) };
}

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 120_000, 'simulator');
  const history = historyCost();
  const pathQ = `/devices/${DEFAULT_SITES[0].battery.deviceReference}/measurement?property=soc`;
  const sim = await startServer({ mode: 'sim' });
  const sample = await get(sim.url + pathQ);
  if (sample.status !== 200) throw new Error(`simulator answered ${sample.status}`);
  const bare = await startServer({ mode: 'bare', body: sample.body, requestId: sample.requestId });
  const servers = { simulator: sim.url, 'bare node:http': bare.url };
  for (const url of Object.values(servers)) await cannon(url + pathQ, 2); // warm-up
  const totals = {};
  for (let r = 0; r < ROUNDS; r++) {
    const names = r % 2 ? Object.keys(servers).reverse() : Object.keys(servers);
    for (const name of names) {
      const res = await cannon(servers[name] + pathQ, DURATION_S);
      const t = (totals[name] ??= { requests: 0, seconds: 0, errors: 0, non2xx: 0, p99: [] });
      t.requests += res.requests.total;
      t.seconds += res.duration;
      t.errors += res.errors + res.timeouts;
      t.non2xx += res.non2xx;
      t.p99.push(res.latency.p99);
    }
  }
  await sim.stop();
  await bare.stop();
  const alternatives = Object.fromEntries(Object.entries(totals).map(([k, t]) => [k, {
    requestsPerSecond: round(t.requests / t.seconds, 0),
    requests: t.requests,
    errors: t.errors,
    non2xx: t.non2xx,
    latencyP99Ms: Math.max(...t.p99),
  }]));
  const ratio = alternatives.simulator.requestsPerSecond / alternatives['bare node:http'].requestsPerSecond;
  output({
    id: 'simulator',
    title: 'Simulator throughput',
    machine: machine(),
    settings: { endpoint: 'GET /devices/{ref}/measurement?property=soc', connections: CONNECTIONS, durationSeconds: DURATION_S, rounds: ROUNDS, bodyBytes: Buffer.byteLength(sample.body) },
    alternatives,
    history: { days: HISTORY_DAYS, sites: DEFAULT_SITES.length, ...history },
    ratios: { 'simulator / bare node:http': round(ratio) },
    goals: [
      { goal: 'requests per second at least 0.5 x a bare node:http server', measured: round(ratio), met: ratio >= 0.5 && alternatives.simulator.errors === 0 && alternatives.simulator.non2xx === 0 },
      { goal: `${HISTORY_DAYS} days of history for the default sites under 200 ms (first computation)`, measured: history.firstMs, met: history.firstMs < 200 },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
