'use strict';
/**
 * Benchmark 1, read overhead. The same map reads of 3 properties (battery devices of a
 * generated fleet, round robin, so no two reads in flight name the same device) done by:
 *   ems-device-read  in the Node-RED runtime (config node defaults: concurrency 6, coalescing on)
 *   core flow        change (JSONata URL) -> http request (keep-alive; no concurrency limit) -> json, same runtime
 *   tuned axios      axios configured as src/client/transport.ts configures the package's own
 *                    instance, on axios' own http adapter (the baseline of the goals; bench/lib/tuned-axios.js)
 *   tuned axios (undici adapter)  the same on the package's transport (its undici adapter): what the
 *                    adapter alone saves
 *   bare axios       axios.get(url) with a keep-alive agent of maxSockets 6 (axios defaults otherwise)
 *   Node-RED + axios a minimal custom node calling tuned axios on the package's transport (the
 *                    undici adapter; reference: what Node-RED's message passing alone adds)
 *   EmsClient        the package's client from code (no Node-RED; concurrency 6, no auth): the
 *                    like-for-like partner of tuned axios, so the two ratios split the package's
 *                    cost into its client and its node
 * All are fed by the same closed loop (at most INFLIGHT messages or calls outstanding) in one
 * process, against the simulator in a child process, in 3 rounds with the order rotated
 * (ABC..., BC...A, C...AB; a minor GC before each, when run with --expose-gc as run-all does).
 * Each alternative does a fixed number of reads per round; throughput is reads / wall time and
 * CPU is process.cpuUsage() (user + system) over those reads, per read. Every figure is given as
 * min / median / max over the rounds, and every ratio is taken round by round (the alternatives
 * of a round run back to back, so a slow spell of a shared machine hits both).
 * The request budget: `ems-device-read (caps set)` is the same node on a config node
 * with maxPerMinute and maxPerDay set (at their largest, so never reached); its client CPU per
 * read is compared with the node's without caps in 16 more pairs of 1000 reads each, back to
 * back in alternating order (summed over the pairs). The budget's own cost per attempt, timed
 * alone (dist/runtime/budget.js, with caps, best of 5 x 100,000), is given with it.
 * The coalescing window's cost when nothing is shared is benchmark 2's (coalescing.js).
 */
const http = require('node:http');
const axios = require('axios');
const {
  closedLoop,
  guard,
  machine,
  median,
  mmm,
  output,
  procCpuMs,
  rotation,
  round,
  selfCpuMs,
  simRequests,
  startServer,
} = require('./lib/common');
const { fleetDevices } = require('./lib/fleet-sites');
const red = require('./lib/red');
const { tunedAxios, tunedAxiosUndici } = require('./lib/tuned-axios');
const { budgetAlone } = require('./lib/budget-alone');
const { CONCURRENCY, loadReadFlow, PROPS } = require('./lib/read-flow');

const ROUNDS = 3;
const PER_ROUND = Number(process.env.BENCH_READS_PER_ROUND) || 5000;
const INFLIGHT = 64;
const SITES = 334;
const BUDGET_PAIRS = Number(process.env.BENCH_BUDGET_PAIRS) || 16;
const BUDGET_READS = 1000;

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 240_000, 'read-overhead');
  const sim = await startServer({ mode: 'sim', fleetSites: SITES });
  const devs = fleetDevices(SITES).batteries;
  const path = (i) => `/devices/${devs[i % devs.length]}/measurements/map?properties=${PROPS}`;
  const bare = axios.create({ httpAgent: new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY }) });
  const tuned = tunedAxios(sim.url, CONCURRENCY);
  const tunedU = tunedAxiosUndici(sim.url, CONCURRENCY);
  const { EmsClient } = require(require('./lib/common').DIST);
  const client = new EmsClient({ baseUrl: sim.url, auth: { type: 'none' }, concurrency: CONCURRENCY });
  const propList = PROPS.split(',');
  await loadReadFlow(sim.url, tunedU);

  // Each fed message carries `seq`; its answer (or its error, via catch) settles it.
  const pending = new Map();
  const settle = (msg, ok) => {
    const waiting = pending.get(msg.seq);
    if (!waiting) return;
    pending.delete(msg.seq);
    if (
      ok &&
      msg.payload &&
      typeof msg.payload === 'object' &&
      (msg.payload.soc !== undefined || msg.payload.measurements)
    )
      waiting.resolve();
    else
      waiting.reject(
        new Error(
          `read ${msg.seq} failed: ${msg.error ? msg.error.message : JSON.stringify(msg.payload).slice(0, 200)}`,
        ),
      );
  };
  red.getNode('sink').on('input', (msg, _s, done) => {
    settle(msg, true);
    done();
  });
  red.getNode('errs').on('input', (msg, _s, done) => {
    settle(msg, false);
    done();
  });
  const feed = (id) => {
    const node = red.getNode(id);
    return (i) =>
      new Promise((resolve, reject) => {
        pending.set(i, { resolve, reject });
        node.receive({ seq: i, deviceReference: devs[i % devs.length], payload: '' });
      });
  };
  const check = (r) => {
    if (!r.data || !r.data.measurements) throw new Error('bad answer');
  };
  const alternatives = {
    'ems-device-read': feed('ours'),
    'tuned axios': (i) => tuned.get(path(i)).then(check),
    'tuned axios (undici adapter)': (i) => tunedU.get(path(i)).then(check),
    EmsClient: (i) =>
      client.getMeasurementsMap(devs[i % devs.length], propList).then((m) => {
        if (!m || !m.measurements) throw new Error('bad answer');
      }),
    'core flow': feed('chg'),
    'bare axios': (i) => bare.get(sim.url + path(i)).then(check),
    'Node-RED + axios (reference)': feed('minimal'),
    'ems-device-read (caps set)': feed('oursCap'),
  };

  let seq = 0;
  const stats = {};
  const measure = async (name, task, count, inflight, into) => {
    // A minor GC: each alternative starts with an empty young generation. Not a full one: a forced full
    // GC makes V8 drop optimised code, and each alternative would be measured while tiering up again.
    if (global.gc) global.gc({ type: 'minor' });
    const req0 = await simRequests(sim.url);
    const cpu0 = selfCpuMs();
    const simCpu0 = procCpuMs(sim.pid);
    const seconds = await closedLoop(seq, count, inflight, task);
    seq += count;
    const st = (into[name] ??= {
      reads: 0,
      seconds: 0,
      cpuMs: 0,
      simCpuMs: 0,
      httpRequests: 0,
      perRound: [],
      cpuPerRound: [],
    });
    const cpu = selfCpuMs() - cpu0;
    st.reads += count;
    st.seconds += seconds;
    st.perRound.push(count / seconds);
    st.cpuPerRound.push(cpu / count);
    st.cpuMs += cpu;
    st.simCpuMs += procCpuMs(sim.pid) - simCpu0;
    st.httpRequests += (await simRequests(sim.url)) - req0;
  };

  const warm = {};
  const names = Object.keys(alternatives).filter(
    (n) => !process.env.BENCH_ONLY || process.env.BENCH_ONLY.split(',').includes(n),
  );
  for (const name of names) await measure(name, alternatives[name], 1000, INFLIGHT, warm);
  const orders = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = rotation(names, r);
    orders.push(order);
    for (const name of order) await measure(name, alternatives[name], PER_ROUND, INFLIGHT, stats);
  }

  // The request budget side by side: pairs of batches, alternating which goes first.
  const pairs = {};
  const budgetNames = ['ems-device-read', 'ems-device-read (caps set)'];
  if (names.includes(budgetNames[1])) {
    for (let r = 0; r < BUDGET_PAIRS; r++)
      for (const name of r % 2 ? [...budgetNames].reverse() : budgetNames)
        await measure(name, alternatives[name], BUDGET_READS, INFLIGHT, pairs);
  }
  const alone = budgetAlone();

  const summarise = (m) =>
    Object.fromEntries(
      Object.entries(m).map(([k, v]) => [
        k,
        {
          reads: v.reads,
          'reads/s (min / median / max)': mmm(v.perRound, 0),
          'client CPU µs per read (min / median / max)': mmm(
            v.cpuPerRound.map((x) => x * 1000),
            0,
          ),
          'simulator CPU µs per read (all rounds)': round((v.simCpuMs * 1000) / v.reads, 0),
          httpRequests: v.httpRequests,
        },
      ]),
    );
  const main = summarise(stats);
  // Ratios round by round: throughput a / b, and CPU per read a / b.
  const perRound = (a, b) => (stats[a] && stats[b] ? stats[a].perRound.map((x, i) => x / stats[b].perRound[i]) : [NaN]);
  const cpuRound = (a, b) =>
    stats[a] && stats[b] ? stats[a].cpuPerRound.map((x, i) => x / stats[b].cpuPerRound[i]) : [NaN];
  const tpTuned = perRound('ems-device-read', 'tuned axios');
  const cpuTuned = cpuRound('ems-device-read', 'tuned axios');
  const tpCore = perRound('ems-device-read', 'core flow');
  const pairRatios =
    pairs['ems-device-read'] && pairs['ems-device-read (caps set)']
      ? pairs['ems-device-read (caps set)'].cpuPerRound.map((x, i) => x / pairs['ems-device-read'].cpuPerRound[i])
      : [NaN];
  const ratioBudget = pairs['ems-device-read']
    ? pairs['ems-device-read (caps set)'].cpuMs / pairs['ems-device-read'].cpuMs
    : NaN;
  const cpuPerRead = stats['ems-device-read'] ? median(stats['ems-device-read'].cpuPerRound) * 1e6 : NaN; // ns
  const med = (xs) => median(xs);
  // CPU µs per read of one alternative over the rounds ('-' when BENCH_ONLY left it out).
  const cpuUs = (name) =>
    stats[name]
      ? mmm(
          stats[name].cpuPerRound.map((x) => x * 1000),
          0,
        )
      : '-';
  await red.stop();
  await sim.stop();
  output({
    id: 'read-overhead',
    title: 'Read overhead',
    machine: machine(),
    settings: {
      'reads per alternative and round': PER_ROUND,
      rounds: ROUNDS,
      inflight: INFLIGHT,
      concurrency: CONCURRENCY,
      properties: PROPS,
      devices: devs.length,
    },
    method:
      `${ROUNDS} rounds, order rotated (round 1: ${orders[0].join(', ')}; each later round starts one further along), ` +
      `${PER_ROUND} reads per alternative and round after a warm-up of 1,000 each, a minor GC before each (a full one would drop optimised code); reads/s = reads / wall time, ` +
      'CPU = process.cpuUsage() of this process (user + system) over those reads, per read; the simulator runs in a child process. ' +
      'Figures are min / median / max over the rounds; ratios are taken round by round, then min / median / max.' +
      ` Load average (1, 5, 15 min) at the end: ${machine().loadAverage.join(', ')}.`,
    alternatives: main,
    budget: {
      pairs: summarise(pairs),
      cpuRatioPerPair: pairRatios.map((x) => round(x, 3)),
      aloneNsPerAttempt: { noCaps: round(alone.noCapsNs, 0), caps: round(alone.capsNs, 0) },
    },
    ratios: {
      'throughput, ems-device-read / tuned axios': mmm(tpTuned),
      'CPU per read, ems-device-read / tuned axios': mmm(cpuTuned),
      'throughput, EmsClient / tuned axios': mmm(perRound('EmsClient', 'tuned axios')),
      'CPU per read, EmsClient / tuned axios': mmm(cpuRound('EmsClient', 'tuned axios')),
      'throughput, tuned axios (undici adapter) / tuned axios': mmm(
        perRound('tuned axios (undici adapter)', 'tuned axios'),
      ),
      'CPU per read, tuned axios (undici adapter) / tuned axios': mmm(
        cpuRound('tuned axios (undici adapter)', 'tuned axios'),
      ),
      'CPU per read, EmsClient / tuned axios (undici adapter)': mmm(
        cpuRound('EmsClient', 'tuned axios (undici adapter)'),
      ),
      'CPU per read, ems-device-read / Node-RED + axios (reference)': mmm(
        cpuRound('ems-device-read', 'Node-RED + axios (reference)'),
      ),
      'throughput, ems-device-read / core flow': mmm(tpCore),
      'CPU per read, ems-device-read / core flow': mmm(cpuRound('ems-device-read', 'core flow')),
      'throughput, ems-device-read / bare axios': mmm(perRound('ems-device-read', 'bare axios')),
      'throughput, tuned axios / bare axios': mmm(perRound('tuned axios', 'bare axios')),
      'CPU per read, tuned axios / bare axios': mmm(cpuRound('tuned axios', 'bare axios')),
      'throughput, Node-RED + axios (reference) / tuned axios': mmm(
        perRound('Node-RED + axios (reference)', 'tuned axios'),
      ),
      'CPU per read, Node-RED + axios (reference) / tuned axios': mmm(
        cpuRound('Node-RED + axios (reference)', 'tuned axios'),
      ),
      'CPU per read, caps set / no caps (main rounds)': mmm(
        cpuRound('ems-device-read (caps set)', 'ems-device-read'),
        3,
      ),
      'CPU per read, caps set / no caps (pairs)': mmm(pairRatios, 3),
    },
    goals: [
      {
        goal: 'throughput >= 0.90 x tuned axios (median of rounds)',
        measured: `${mmm(tpTuned)} (min / median / max of ${tpTuned.length} rounds)`,
        met: med(tpTuned) >= 0.9,
      },
      {
        goal: 'client CPU per read <= 1.1 x tuned axios (median of rounds)',
        measured: `${mmm(cpuTuned)} (min / median / max of ${cpuTuned.length} rounds; ${cpuUs('ems-device-read')} µs against ${cpuUs('tuned axios')} µs)`,
        met: med(cpuTuned) <= 1.1,
      },
      // Like for like: the client against the axios it wraps, the node against the same axios in a
      // minimal Node-RED node (Node-RED's message passing is in both).
      // The client on its undici adapter against tuned axios on axios' own http adapter.
      {
        goal: 'client: EmsClient CPU per read <= 0.80 x tuned axios (median of rounds)',
        measured: `${mmm(cpuRound('EmsClient', 'tuned axios'))} (min / median / max of ${ROUNDS} rounds; ${cpuUs('EmsClient')} µs against ${cpuUs('tuned axios')} µs)`,
        met: med(cpuRound('EmsClient', 'tuned axios')) <= 0.8,
      },
      {
        goal: 'client: EmsClient throughput >= 1.1 x tuned axios (median of rounds)',
        measured: `${mmm(perRound('EmsClient', 'tuned axios'))} (min / median / max of ${ROUNDS} rounds)`,
        met: med(perRound('EmsClient', 'tuned axios')) >= 1.1,
      },
      {
        goal: 'node: ems-device-read CPU per read <= 1.1 x Node-RED + tuned axios on the same transport (median of rounds)',
        measured: `${mmm(cpuRound('ems-device-read', 'Node-RED + axios (reference)'))} (min / median / max of ${ROUNDS} rounds)`,
        met: med(cpuRound('ems-device-read', 'Node-RED + axios (reference)')) <= 1.1,
      },
      {
        goal: 'throughput >= 1.5 x core-node flow (median of rounds)',
        measured: `${mmm(tpCore)} (min / median / max of ${tpCore.length} rounds)`,
        met: med(tpCore) >= 1.5,
      },
      {
        // Decided side by side (client CPU per read with caps set / without, summed over alternating
        // pairs); the budget's own cost timed alone is given with it, as the steadier figure.
        goal: 'request budget (counting and caps) adds <= 2 % to read CPU',
        measured:
          `${round(ratioBudget, 3)} x: client CPU per read with caps set / without, summed over ${pairRatios.length} alternating pairs of ${BUDGET_READS} reads ` +
          `(pairs min / median / max ${mmm(pairRatios, 3)}); timed alone the budget takes ${round(alone.capsNs, 0)} ns per attempt with caps ` +
          `(${round(alone.noCapsNs, 0)} ns counting only), ${round((100 * alone.capsNs) / cpuPerRead, 3)} % of ${round(cpuPerRead / 1000, 0)} µs per read`,
        met: ratioBudget <= 1.02,
      },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
