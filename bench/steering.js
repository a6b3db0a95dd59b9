'use strict';
/**
 * Benchmark: steering CPU per site. The simulator in a child process with SITES
 * generated sites (bench/lib/fleet-sites.js); the Node-RED runtime in this process
 * (bench/lib/red.js, test helper spies removed), one config node (concurrency 6, its defaults
 * otherwise). Alternatives, measured in 3 rounds of interleaved slices, a forced minor GC before each slice:
 *
 *   ems-site-steer          one ESS setpoint per message, a different site each, INFLIGHT messages at once
 *   ems-device-read         one map read of 3 properties per message (the read of benchmark 1), INFLIGHT at once
 *   tuned axios POST        the same ESS request through axios configured as the package configures it
 *                           (bench/lib/tuned-axios.js), no Node-RED: the floor of the request itself
 *   POST, same transport    that ESS request through tuned axios on the package's transport (undici):
 *                           the floor of ems-site-steer's request
 *   GET, same transport     the read's map request through tuned axios on the package's transport: the
 *                           floor of ems-device-read's request
 *   portfolio (SITES)       one ems-site-steer message in mode portfolio: SITES sites, ratings in msg.sites
 *
 * CPU = process.cpuUsage() of this process over the alternative, per message (per site for the
 * portfolio), every thread: GC helpers count, so an alternative that allocates more pays for it.
 * Steady figures: PER_ROUND messages a round (10,000: a major GC lands in every alternative in
 * proportion to what it allocates, instead of adding 25-50 µs a message to the 2,000-message round
 * it hit), in SLICES slices interleaved with the other alternatives (the machine's load, which
 * changes over seconds, meets them all alike); LEAD_IN unmeasured messages of the alternative just
 * before each slice (the first of a round was the slowest: the previous one's code and caches were
 * hot); the same sites in the same order for every alternative of a slice; garbage collections
 * counted per alternative. The two nodes do different requests (a POST with a JSON body against a GET), and the
 * POST alone costs more than the whole read (axios and undici do more for a body): besides the plain
 * steer / read ratio, each node is set against its own request on the same transport (steer / POST
 * over read / GET), which compares what the nodes themselves add, like for like. Temporary heap of the portfolio message, measured apart from the timed rounds:
 * the live heap (heapUsed after a forced GC every 100 ms while the message runs) above the heap
 * before it, and, for comparison, the same for SITES tuned-axios POSTs; the peak heapUsed
 * without forced GCs (garbage not yet collected included) is reported beside it.
 */
const path = require('node:path');
const { PerformanceObserver, constants: perfConstants } = require('node:perf_hooks');
const {
  DIST,
  startServer,
  selfCpuMs,
  procCpuMs,
  simRequests,
  closedLoop,
  median,
  mmm,
  round,
  rotation,
  machine,
  output,
  guard,
} = require('./lib/common');
const red = require('./lib/red');
const { fleetSites } = require('./lib/fleet-sites');
const { tunedAxios, tunedAxiosUndici } = require('./lib/tuned-axios');

const SITES = Number(process.env.BENCH_STEER_SITES) || 5000;
const PER_ROUND = Number(process.env.BENCH_STEER_MSGS) || 10_000;
const SLICES = Number(process.env.BENCH_STEER_SLICES) || 10;
const LEAD_IN = process.env.BENCH_STEER_LEAD_IN === undefined ? 100 : Number(process.env.BENCH_STEER_LEAD_IN);
const ROUNDS = 3;
const INFLIGHT = 16;
const CONCURRENCY = 6;
const PROPS = 'soc,power,totalEnergyConsumed';
const POST_SAME = 'POST, same transport';
const GET_SAME = 'GET, same transport';
const steerModule = require(path.join(DIST, 'nodes', 'ems-site-steer.js'));
// The steer nodes as the editor saves them today: the current version and explicit limits (W): the
// fleet's batteries are rated 10 kW (lib/fleet-sites.js), so a node never asks a site for more.
const STEER_VERSION = require(path.join(DIST, 'nodes', 'shared', 'migrations.js')).currentVersion('ems-site-steer');
const MAX_ESS_W = 10_000;

/**
 * Runs `fn` with heapUsed sampled: `live`, after a forced GC every 100 ms (the live heap), else every
 * 5 ms without one (garbage not yet collected included); resolves with the peak above the start, MB.
 */
async function heapPeak(fn, live) {
  global.gc();
  const h0 = process.memoryUsage().heapUsed;
  let peak = h0;
  const sample = () => {
    if (live) global.gc();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  };
  const timer = setInterval(sample, live ? 100 : 5);
  await fn();
  clearInterval(timer);
  if (!live) sample();
  return (peak - h0) / 1e6;
}

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 480_000, 'steering');
  // Garbage collections of this process (the timed rounds count those within each alternative).
  const gcs = { minor: 0, major: 0, ms: 0 };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.detail.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) gcs.major++;
      else if (entry.detail.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) gcs.minor++;
      gcs.ms += entry.duration;
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  if (!global.gc) throw new Error('run with --expose-gc');
  const sites = fleetSites(SITES);
  const refs = sites.map((s) => s.siteReference);
  const batteries = sites.map((s) => s.battery.deviceReference);
  const rated = sites.map((s) => ({ site: s.siteReference, maxPowerW: s.battery.maxPowerW }));
  const sim = await startServer({ mode: 'sim', fleetSites: SITES });
  const tuned = tunedAxios(sim.url, CONCURRENCY);
  const sameTransport = tunedAxiosUndici(sim.url, CONCURRENCY);
  await red.start();
  await red.load(
    [
      {
        id: 'cfg',
        type: 'ems-partner-config',
        baseUrl: sim.url,
        simulator: false,
        authType: 'none',
        concurrency: CONCURRENCY,
      },
      {
        id: 'steer',
        type: 'ems-site-steer',
        server: 'cfg',
        site: 'site',
        siteType: 'msg',
        mode: 'ess',
        essValue: 'payload',
        essValueType: 'msg',
        essUnit: 'kW',
        validity: 'quarter-hour',
        maxEssPower: MAX_ESS_W,
        renew: false,
        dryRun: false,
        verify: false,
        version: STEER_VERSION,
        wires: [['sink']],
      },
      {
        id: 'portfolio',
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
        verify: false,
        version: STEER_VERSION,
        wires: [['sink']],
      },
      {
        id: 'read',
        type: 'ems-device-read',
        server: 'cfg',
        mode: 'map',
        device: '',
        deviceType: 'str',
        properties: PROPS,
        propertiesType: 'str',
        wires: [['sink']],
      },
      { id: 'catch', type: 'catch', scope: null, uncaught: false, wires: [['errs']] },
      { id: 'sink', type: 'helper' },
      { id: 'errs', type: 'helper' },
    ],
    [],
    [steerModule],
  );

  // Each message carries `seq`; its output (or its error, via catch) settles it.
  const send = red.messenger(
    () => true,
    (msg) => `failed: ${msg.error ? msg.error.message : '?'}`,
  );
  const validUntil = () => new Date(Date.now() + 10 * 60_000).toISOString();
  let kw = 1;
  const portfolioMessage = () =>
    send('portfolio', { payload: (kw = -kw) * SITES * 5, sites: rated }).then((m) => {
      if (m.payload.summary.ok !== SITES) throw new Error(`portfolio: ${m.payload.summary.failed} sites failed`);
      return m;
    });
  const single = {
    'ems-site-steer': (i) => send('steer', { site: refs[i % SITES], payload: (i % 9) - 4 }),
    'ems-device-read': (i) =>
      send('read', { deviceReference: batteries[i % SITES], payload: '' }).then((m) => {
        if (!m.payload || (m.payload.soc === undefined && !m.payload.measurements)) throw new Error('bad answer');
      }),
    'tuned axios POST': (i) =>
      tuned
        .post(`/sites/${refs[i % SITES]}/steering/ess`, {
          setting: { value: ((i % 9) - 4) * 1000, unit: 'W' },
          validUntil: validUntil(),
        })
        .then((r) => {
          if (!r.data || !r.data.requestId) throw new Error('bad answer');
        }),
    [POST_SAME]: (i) =>
      sameTransport
        .post(`/sites/${refs[i % SITES]}/steering/ess`, {
          setting: { value: (i % 9) - 4, unit: 'kW' },
          validUntil: Date.now() + 10 * 60_000, // epoch ms, as the node sends it
        })
        .then((r) => {
          if (!r.data || !r.data.requestId) throw new Error('bad answer');
        }),
    [GET_SAME]: (i) =>
      sameTransport.get(`/devices/${batteries[i % SITES]}/measurements/map?properties=${PROPS}`).then((r) => {
        if (!r.data || !r.data.measurements) throw new Error('bad answer');
      }),
  };
  const PORTFOLIO = `portfolio (${SITES} sites)`;
  const names = [...Object.keys(single), PORTFOLIO];
  const stats = Object.fromEntries(
    names.map((n) => [
      n,
      { cpuPerRound: [], perSecond: [], requests: 0, simCpuMs: 0, count: 0, minor: 0, major: 0, gcMs: 0 },
    ]),
  );
  let next = 0;
  // One slice of an alternative: `count` messages from site index `from` (the portfolio: one message).
  const measure = async (name, from, count) => {
    if (name !== PORTFOLIO && LEAD_IN > 0) await closedLoop(from - LEAD_IN + SITES, LEAD_IN, INFLIGHT, single[name]);
    // A minor GC (its entry arrives asynchronously: counted once in): each slice starts with an empty
    // young generation. Not a full one: V8 drops optimised code, and would measure tiering up again.
    const forced = gcs.minor;
    global.gc({ type: 'minor' });
    for (let wait = 0; wait < 100 && gcs.minor === forced; wait++)
      await new Promise((resolve) => setTimeout(resolve, 1));
    const gc0 = { ...gcs };
    const req0 = await simRequests(sim.url);
    const cpu0 = selfCpuMs();
    const simCpu0 = procCpuMs(sim.pid);
    const t0 = process.hrtime.bigint();
    if (name === PORTFOLIO) await portfolioMessage();
    else await closedLoop(from, count, INFLIGHT, single[name]);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const st = stats[name];
    const cpuMs = selfCpuMs() - cpu0;
    st.minor += gcs.minor - gc0.minor;
    st.major += gcs.major - gc0.major;
    st.gcMs += gcs.ms - gc0.ms;
    st.simCpuMs += procCpuMs(sim.pid) - simCpu0;
    st.requests += (await simRequests(sim.url)) - req0;
    st.count += name === PORTFOLIO ? SITES : count;
    return { cpuMs, seconds };
  };

  // Warm-up: 1,000 of each single alternative and one portfolio message; then the rounds.
  for (const name of Object.keys(single)) {
    await closedLoop(next, 1000, INFLIGHT, single[name]);
    next += 1000;
  }
  await portfolioMessage();
  // A round: SLICES slices, each of PER_ROUND / SLICES messages of every single alternative in
  // turn (the order rotated slice by slice), the portfolio message after the middle slice. The
  // machine's load changes over seconds: interleaved, every alternative meets the same load.
  const orders = [];
  const perSlice = Math.ceil(PER_ROUND / SLICES);
  const singles = Object.keys(single);
  for (let r = 0; r < ROUNDS; r++) {
    const sums = Object.fromEntries(names.map((n) => [n, { cpuMs: 0, seconds: 0 }]));
    for (let slice = 0; slice < SLICES; slice++) {
      const order = rotation(singles, r + slice);
      if (slice === 0) orders.push(order);
      const from = r * PER_ROUND + slice * perSlice; // every alternative of a slice: the same sites in the same order
      const jobs = slice === Math.floor(SLICES / 2) ? [...order, PORTFOLIO] : order;
      for (const name of jobs) {
        const { cpuMs, seconds } = await measure(name, from, perSlice);
        sums[name].cpuMs += cpuMs;
        sums[name].seconds += seconds;
      }
    }
    for (const name of names) {
      const count = name === PORTFOLIO ? SITES : perSlice * SLICES;
      stats[name].cpuPerRound.push(sums[name].cpuMs / count);
      stats[name].perSecond.push(count / sums[name].seconds);
    }
  }

  // Temporary heap, apart from the timed rounds (two passes each: live, then with garbage).
  const posts = () => closedLoop(ROUNDS * PER_ROUND, SITES, CONCURRENCY, single['tuned axios POST']);
  const heap = {
    portfolio: await heapPeak(portfolioMessage, true),
    portfolioPeak: await heapPeak(portfolioMessage, false),
  };
  heap.axios = await heapPeak(posts, true);
  heap.axiosPeak = await heapPeak(posts, false);
  await red.stop();
  await sim.stop();

  const us = (name) => stats[name].cpuPerRound.map((x) => x * 1000);
  const ratio = (a, b) => stats[a].cpuPerRound.map((x, i) => x / stats[b].cpuPerRound[i]);
  const portfolioS = stats[PORTFOLIO].cpuPerRound.map((x) => (x * SITES) / 1000);
  const axiosS = stats['tuned axios POST'].cpuPerRound.map((x) => (x * SITES) / 1000);
  const steerVsRead = ratio('ems-site-steer', 'ems-device-read');
  // Like for like: each node over its own request on the same transport, steer's over read's.
  const steerOverPost = ratio('ems-site-steer', POST_SAME);
  const readOverGet = ratio('ems-device-read', GET_SAME);
  const likeForLike = steerOverPost.map((x, i) => x / readOverGet[i]);
  const added = (node, floor) => stats[node].cpuPerRound.map((x, i) => (x - stats[floor].cpuPerRound[i]) * 1000);
  const portfolioVsRead = ratio(PORTFOLIO, 'ems-device-read');
  const alternatives = Object.fromEntries(
    names.map((n) => [
      n,
      {
        'messages (sites for the portfolio) per round': n === PORTFOLIO ? SITES : PER_ROUND,
        'CPU µs per message / site (min / median / max)': mmm(us(n), 0),
        'per second (min / median / max)': mmm(stats[n].perSecond, 0),
        'simulator CPU µs per request (all rounds)': round((stats[n].simCpuMs * 1000) / stats[n].requests, 0),
        'HTTP requests / messages (portfolio: sites), all rounds': `${stats[n].requests} / ${stats[n].count}`,
        'garbage collections per 10,000 messages (sites), minor / major, all rounds': `${round((stats[n].minor * 1e4) / stats[n].count, 1)} / ${round((stats[n].major * 1e4) / stats[n].count, 1)}`,
        'GC pause µs per message (site), all rounds': round((stats[n].gcMs * 1000) / stats[n].count, 1),
      },
    ]),
  );
  output({
    id: 'steering',
    title: 'Steering CPU per site',
    machine: machine(),
    settings: {
      sites: SITES,
      'messages per single alternative and round': PER_ROUND,
      'slices per round (interleaved)': SLICES,
      'unmeasured lead-in messages before each slice': LEAD_IN,
      rounds: ROUNDS,
      inflight: INFLIGHT,
      concurrency: CONCURRENCY,
      simulator: 'child process',
    },
    method:
      `${ROUNDS} rounds of ${SLICES} slices of ${Math.ceil(PER_ROUND / SLICES)} messages of each single alternative, interleaved, order rotated slice by slice (round 1 slice 1: ${orders[0].join(', ')}), the portfolio message after the middle slice; after a warm-up of 1,000 messages ` +
      `of each single alternative and one portfolio message; before each slice ${LEAD_IN} unmeasured messages of its alternative; in a slice every single alternative addresses the same sites in the same order; ` +
      'a forced minor GC before each slice (a full one drops the optimised code); CPU = process.cpuUsage() of this process (user + system, every thread: GC helpers included) ' +
      `over the alternative, per message (the portfolio: per site). Ratios round by round, then min / median / max. Temporary heap: a portfolio message of ${SITES} sites ` +
      `(and ${SITES} tuned-axios POSTs at ${CONCURRENCY} in flight) with a forced GC every 100 ms, the highest heapUsed above the heap before; and once more without forced GCs, ` +
      'the highest heapUsed sampled every 5 ms (garbage not yet collected included).',
    alternatives,
    results: {
      'CPU per site, ems-site-steer / ems-device-read': mmm(steerVsRead),
      'CPU per site, portfolio / ems-device-read': mmm(portfolioVsRead),
      'like for like: (ems-site-steer / POST, same transport) / (ems-device-read / GET, same transport)':
        mmm(likeForLike),
      'CPU per message, ems-site-steer / POST, same transport': mmm(steerOverPost),
      'CPU per message, ems-device-read / GET, same transport': mmm(readOverGet),
      'CPU per request, POST / GET, same transport': mmm(ratio(POST_SAME, GET_SAME)),
      'CPU µs a node adds to its request (min / median / max)': `ems-site-steer ${mmm(added('ems-site-steer', POST_SAME), 0)}; ems-device-read ${mmm(added('ems-device-read', GET_SAME), 0)}`,
      'CPU per request, ems-site-steer / tuned axios POST': mmm(ratio('ems-site-steer', 'tuned axios POST')),
      'CPU per request, portfolio / tuned axios POST': mmm(ratio(PORTFOLIO, 'tuned axios POST')),
      'CPU per read, ems-device-read / tuned axios POST': mmm(ratio('ems-device-read', 'tuned axios POST')),
      [`CPU of ${SITES} tuned-axios POSTs, s`]: mmm(axiosS),
      'live heap, MB: portfolio / tuned axios': `${round(heap.portfolio, 1)} / ${round(heap.axios, 1)}`,
      'peak heapUsed without forced GC, MB: portfolio / tuned axios': `${round(heap.portfolioPeak, 1)} / ${round(heap.axiosPeak, 1)}`,
    },
    goals: [
      {
        goal: 'one-site steering CPU per message <= 1.1 x a read: ems-site-steer / ems-device-read <= 1.1 (median of rounds)',
        measured: `${mmm(steerVsRead)} (${mmm(us('ems-site-steer'), 0)} µs against ${mmm(us('ems-device-read'), 0)} µs)`,
        met: median(steerVsRead) <= 1.1,
      },
      {
        goal: 'like for like, each node over its own request on the same transport: (ems-site-steer / POST) / (ems-device-read / GET) <= 1.1 (median of rounds)',
        measured: `${mmm(likeForLike)} (steer / POST ${mmm(steerOverPost)}; read / GET ${mmm(readOverGet)}; POST / GET ${mmm(ratio(POST_SAME, GET_SAME))})`,
        met: median(likeForLike) <= 1.1,
      },
      {
        goal: "portfolio CPU per site <= a read's (median of rounds)",
        measured: `${mmm(portfolioVsRead)} (${mmm(us(PORTFOLIO), 0)} µs per site)`,
        met: median(portfolioVsRead) <= 1,
      },
      {
        goal: `portfolio message of ${SITES} sites <= 0.8 x the CPU of ${SITES} tuned-axios POSTs (median of rounds)`,
        measured: `${mmm(ratio(PORTFOLIO, 'tuned axios POST'))} (round by round; ${mmm(portfolioS)} s against ${mmm(axiosS)} s)`,
        met: median(ratio(PORTFOLIO, 'tuned axios POST')) <= 0.8,
      },
      {
        goal: `portfolio message of ${SITES} sites <= 1.5 s CPU (median of rounds)`,
        measured: `${mmm(portfolioS)} s; ${SITES} tuned-axios POSTs alone: ${mmm(axiosS)} s`,
        met: median(portfolioS) <= 1.5,
      },
      {
        goal: `portfolio message of ${SITES} sites <= 10 MB temporary heap (live heap)`,
        measured: `${round(heap.portfolio, 1)} MB live (tuned axios ${round(heap.axios, 1)} MB); ${round(heap.portfolioPeak, 1)} MB peak heapUsed with garbage (tuned axios ${round(heap.axiosPeak, 1)} MB)`,
        met: heap.portfolio <= 10,
      },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
