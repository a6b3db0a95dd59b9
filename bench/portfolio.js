'use strict';
/**
 * Benchmark: portfolio steer of a fleet, one message for every site. SITES simulator sites (battery
 * 10 kW each, bench/lib/fleet-sites.js), the simulator in this process with LATENCY_MS added to
 * every request; an ems-site-steer node in mode portfolio on a config node of concurrency C, in the
 * Node-RED runtime (node-red-node-test-helper). One message carries the fleet's total ESS power and
 * msg.sites; the node splits it by battery rating and sends one request per site through the config
 * node's steering queue and client (at most C in flight).
 *
 * Measured: the round trip of one steering request (median of single-site messages through
 * the same node), the wall-clock time of the fleet message from input to output, and the
 * requests the simulator answered. Goal: exactly SITES requests, done within
 * 1.3 × ⌈SITES / C⌉ round trips. Three runs per concurrency: ratings in msg.sites (the timed
 * goal), ratings from GET /sites (the first message reads the site list once, the next one
 * uses the cached list), for C = 6 (the default) and 16.
 */
const path = require('node:path');
const { DIST: BUILT, guard, machine, output, round, median, simRequests } = require('./lib/common');
const { fleetSites } = require('./lib/fleet-sites');

/** The compiled package (BENCH_DIST: another build of it, e.g. for a check before `npm run build`). */
const DIST = process.env.BENCH_DIST ? path.resolve(process.env.BENCH_DIST) : BUILT;
const SITES = Number(process.env.BENCH_PORTFOLIO_SITES) || 200;
const LATENCY_MS = 50;
const CONCURRENCIES = [6, 16];
const RTT_SAMPLES = 7;

const helper = require('node-red-node-test-helper');
helper.init(require.resolve('node-red'));
const { startSimulator } = require(path.join(DIST, 'simulator'));
const MODULES = ['ems-partner-config', 'ems-site-steer'].map((t) => require(path.join(DIST, 'nodes', `${t}.js`)));
// The steer node as the editor saves it today: the current version and an explicit limit (W): the
// fleet's batteries are rated 10 kW (lib/fleet-sites.js), so no site's part may be more.
const STEER_VERSION = require(path.join(DIST, 'nodes', 'shared', 'migrations.js')).currentVersion('ems-site-steer');
const MAX_ESS_W = 10_000;

/** Loads one steer node (id n, wired to helper out) on a config node of concurrency `c`. */
async function load(url, c) {
  await helper.load(
    [...MODULES],
    [
      { id: 'tab', type: 'tab', label: 'bench' },
      {
        id: 'cfg',
        type: 'ems-partner-config',
        baseUrl: url,
        simulator: false,
        authType: 'none',
        retries: 0,
        concurrency: c,
        coalesceMs: 0,
      },
      {
        id: 'n',
        z: 'tab',
        x: 0,
        y: 0,
        type: 'ems-site-steer',
        server: 'cfg',
        site: '',
        siteType: 'str',
        mode: 'portfolio',
        portfolioSplit: 'rating',
        essValue: 'payload',
        essValueType: 'msg',
        essUnit: 'kW',
        validity: 'quarter-hour',
        maxEssPower: MAX_ESS_W,
        renew: false,
        dryRun: false,
        version: STEER_VERSION,
        wires: [['out']],
      },
      { id: 'out', z: 'tab', x: 0, y: 0, type: 'helper', wires: [] },
    ],
  );
  const node = helper.getNode('n');
  const waiting = [];
  helper.getNode('out').on('input', (msg) => waiting.shift()?.(msg));
  const errors = [];
  node.on('call:error', (call) => errors.push(String(call.args[0]?.message ?? call.args[0])));
  /** Sends a message and resolves with its output and the wall-clock ms it took. */
  const ask = (msg) =>
    new Promise((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      const timer = setTimeout(() => reject(new Error(`no output in 60 s; errors: ${errors.join('; ')}`)), 60_000);
      waiting.push((out) => {
        clearTimeout(timer);
        resolve({ out, ms: Number(process.hrtime.bigint() - t0) / 1e6 });
      });
      node.receive(msg);
    });
  return { ask, errors };
}

async function run(s, sites, c) {
  const { ask, errors } = await load(s.url, c);
  const refs = sites.map((x) => x.siteReference);
  // The round trip: single-site messages (msg.sites of one, rating given), one after the other.
  const rtts = [];
  for (let i = 0; i < RTT_SAMPLES; i++)
    rtts.push((await ask({ payload: 1, sites: [{ site: refs[i % refs.length], maxPowerW: 10_000 }] })).ms);
  const rtt = median(rtts);
  const total = SITES * 10 * 0.6; // kW: 60 % of the fleet's rating
  const trips = Math.ceil(SITES / c);
  const measure = async (msg) => {
    const before = await simRequests(s.url);
    const { out, ms } = await ask(msg);
    const requests = (await simRequests(s.url)) - before;
    const sum = out.payload.results.reduce((a, r) => a + (r.request?.body?.setting?.value ?? 0), 0);
    return {
      ms: round(ms, 1),
      requests,
      ok: out.payload.summary.ok,
      failed: out.payload.summary.failed,
      roundTrips: round(ms / rtt, 1),
      sumW: sum,
      asked: out.payload.summary.asked,
    };
  };
  const given = await measure({
    payload: total,
    sites: sites.map((x) => ({ site: x.siteReference, maxPowerW: x.battery.maxPowerW })),
  });
  const cold = await measure({ payload: -total, sites: refs });
  const warm = await measure({ payload: total / 2, sites: refs });
  await helper.unload();
  return {
    c,
    rtt: round(rtt, 1),
    trips,
    budgetMs: round(1.3 * trips * rtt, 1),
    given,
    cold,
    warm,
    errors: errors.length,
    firstError: errors[0],
  };
}

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 60_000, 'portfolio');
  const sites = fleetSites(SITES);
  const sim = await startSimulator({ sites, faults: { latencyMs: [LATENCY_MS, LATENCY_MS] } });
  await helper.startServer();
  const runs = [];
  for (const c of CONCURRENCIES) runs.push(await run(sim, sites, c));
  await helper.stopServer();
  await sim.close();
  const row = (r) => ({
    'round trip (ms, median)': r.rtt,
    [`portfolio of ${SITES}, ratings in msg.sites (ms)`]: r.given.ms,
    'in round trips': r.given.roundTrips,
    [`⌈${SITES} / C⌉ round trips`]: r.trips,
    'requests (ratings in msg.sites / GET /sites cold / cached)': `${r.given.requests} / ${r.cold.requests} / ${r.warm.requests}`,
    'ratings from GET /sites, cold / cached (ms)': `${r.cold.ms} / ${r.warm.ms}`,
  });
  output({
    id: 'portfolio',
    title: 'Portfolio steer',
    machine: machine(),
    settings: {
      sites: SITES,
      battery: '10 kW each',
      latency: `${LATENCY_MS} ms per request (simulator faults)`,
      split: 'rating',
      retries: 0,
      simulator: 'in process',
    },
    alternatives: Object.fromEntries(runs.map((r) => [`concurrency ${r.c}`, row(r)])),
    results: {
      'sum of the parts vs asked (W)': runs.map((r) => `${r.given.sumW} vs ${r.given.asked * 1000}`).join('; '),
      'sites ok / failed': runs.map((r) => `${r.given.ok} / ${r.given.failed}`).join('; '),
      errors: runs.map((r) => r.errors + (r.firstError ? ` (${r.firstError})` : '')).join(' / '),
    },
    goals: [
      {
        goal: `portfolio steer of ${SITES} sites: exactly ${SITES} requests`,
        measured: runs
          .map(
            (r) =>
              `concurrency ${r.c}: ${r.given.requests} (ratings in msg.sites), ${r.warm.requests} (site list cached); ${r.cold.requests} with the first GET /sites`,
          )
          .join('; '),
        met: runs.every(
          (r) =>
            r.given.requests === SITES &&
            r.warm.requests === SITES &&
            r.cold.requests === SITES + 1 &&
            r.given.failed === 0,
        ),
      },
      {
        goal: `done within 1.3 × ⌈${SITES} / concurrency⌉ round trips (${LATENCY_MS} ms latency)`,
        measured: runs
          .map(
            (r) =>
              `concurrency ${r.c}: ${r.given.ms} ms = ${r.given.roundTrips} round trips of ${r.rtt} ms for ⌈${SITES}/${r.c}⌉ = ${r.trips} (budget ${r.budgetMs} ms)`,
          )
          .join('; '),
        met: runs.every((r) => r.given.ms <= r.budgetMs),
      },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
