'use strict';
/**
 * Benchmark: bursts. SMALL and LARGE messages sent at once (one synchronous loop of
 * node.receive) into a node, on the simulator in a child process (bench/lib/sim-child.js,
 * SITES generated sites), Node-RED in this process (bench/lib/red.js). Four cases:
 *
 *   device read, one device      every message reads the same device (identical reads join one request)
 *   device read, many devices    message i reads the battery of site i % SITES
 *   site steer, one site         every message steers the same site's ESS (merged while one is in flight)
 *   site steer, many sites       message i steers site i % SITES
 *
 * The config node's waiting limit (maxWaiting) is raised above LARGE, so every message is
 * taken: each ends in one output or one error (a Catch node), counted; the burst ends when
 * all have. Time per message = wall time of the burst / its size. Peak heap per waiting
 * message = the highest heapUsed (sampled every 10 ms, after a forced GC before the burst)
 * above the heap before, divided by the burst's size. While profiling: BENCH_BURST_CASES picks
 * cases by part of their name, BENCH_BURST_SMALL / _LARGE / _SITES the sizes, BENCH_BURST_CAPS=1
 * sets the request budget's caps (at their largest, never reached).
 */
const path = require('node:path');
const { DIST, startServer, selfCpuMs, simRequests, round, machine, output, guard } = require('./lib/common');
const red = require('./lib/red');
const { fleetSites } = require('./lib/fleet-sites');

const SITES = Number(process.env.BENCH_BURST_SITES) || 1000;
const SMALL = Number(process.env.BENCH_BURST_SMALL) || 5000;
const LARGE = Number(process.env.BENCH_BURST_LARGE) || 100_000;
const CONCURRENCY = 6;
const steerModule = require(path.join(DIST, 'nodes', 'ems-site-steer.js'));

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 600_000, 'bursts');
  if (!global.gc) throw new Error('run with --expose-gc');
  const sites = fleetSites(SITES);
  const refs = sites.map((s) => s.siteReference);
  const batteries = sites.map((s) => s.battery.deviceReference);
  const sim = await startServer({ mode: 'sim', fleetSites: SITES });
  await red.start();
  const steer = (id, site, siteType) => ({
    id,
    type: 'ems-site-steer',
    server: 'cfg',
    site,
    siteType,
    mode: 'ess',
    essValue: 'payload',
    essValueType: 'msg',
    essUnit: 'kW',
    validity: 'quarter-hour',
    maxEssPower: 1_000_000,
    renew: false,
    dryRun: false,
    verify: false,
    wires: [['sink']],
  });
  await red.load(
    [
      {
        id: 'cfg',
        type: 'ems-partner-config',
        baseUrl: sim.url,
        simulator: false,
        authType: 'none',
        concurrency: CONCURRENCY,
        maxWaiting: LARGE * 2,
        ...(process.env.BENCH_BURST_CAPS ? { maxPerMinute: 1_000_000, maxPerDay: 100_000_000 } : {}),
      },
      {
        id: 'readOne',
        type: 'ems-device-read',
        server: 'cfg',
        mode: 'single',
        device: batteries[0],
        deviceType: 'str',
        properties: 'soc',
        propertiesType: 'str',
        wires: [['sink']],
      },
      {
        id: 'readMany',
        type: 'ems-device-read',
        server: 'cfg',
        mode: 'single',
        device: '',
        deviceType: 'str',
        properties: 'soc',
        propertiesType: 'str',
        wires: [['sink']],
      },
      steer('steerOne', refs[0], 'str'),
      steer('steerMany', 'site', 'msg'),
      { id: 'catch', type: 'catch', scope: null, uncaught: false, wires: [['errs']] },
      { id: 'sink', type: 'helper' },
      { id: 'errs', type: 'helper' },
    ],
    [],
    [steerModule],
  );

  let outputs = 0;
  let errors = 0;
  let firstError;
  let wake;
  const tick = () => {
    if (wake) wake();
  };
  red.getNode('sink').on('input', (_m, _s, done) => {
    outputs++;
    done();
    tick();
  });
  red.getNode('errs').on('input', (m, _s, done) => {
    errors++;
    firstError ??= m.error && m.error.message;
    done();
    tick();
  });

  const cases = {
    'device read, one device': { node: 'readOne', msg: () => ({ payload: '' }) },
    'device read, many devices': {
      node: 'readMany',
      msg: (i) => ({ deviceReference: batteries[i % SITES], payload: '' }),
    },
    'site steer, one site': { node: 'steerOne', msg: (i) => ({ payload: (i % 9) - 4 }) },
    'site steer, many sites': { node: 'steerMany', msg: (i) => ({ site: refs[i % SITES], payload: (i % 9) - 4 }) },
  };

  /** One burst of n messages into a case's node: wall ms, CPU ms, peak heap above the start (bytes), outputs and errors. */
  const burst = async (c, n) => {
    global.gc();
    outputs = 0;
    errors = 0;
    firstError = undefined;
    const node = red.getNode(c.node);
    const req0 = await simRequests(sim.url);
    const h0 = process.memoryUsage().heapUsed;
    let peak = h0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }, 10);
    const cpu0 = selfCpuMs();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) node.receive(c.msg(i));
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    while (outputs + errors < n)
      await new Promise((resolve) => {
        wake = resolve;
      });
    wake = undefined;
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    clearInterval(sampler);
    const cpuMs = selfCpuMs() - cpu0;
    return { ms, cpuMs, heap: peak - h0, outputs, errors, firstError, requests: (await simRequests(sim.url)) - req0 };
  };

  // Warm-up: a small burst of each case.
  for (const c of Object.values(cases)) await burst(c, 1000);
  const rows = {};
  const goals = [];
  const ratios = {};
  // BENCH_BURST_CASES: a comma-separated part of the case names, to run only those (while profiling).
  const only = (process.env.BENCH_BURST_CASES || '').split(',').filter(Boolean);
  for (const [name, c] of Object.entries(cases)) {
    if (only.length && !only.some((o) => name.includes(o))) continue;
    const small = await burst(c, SMALL);
    const large = await burst(c, LARGE);
    const per = (r, n) => (r.ms * 1000) / n;
    const ratio = per(large, LARGE) / per(small, SMALL);
    ratios[name] = ratio;
    const row = (r, n) => `${round(per(r, n), 1)} µs (CPU ${round((r.cpuMs * 1000) / n, 1)} µs)`;
    rows[name] = {
      [`time per message, ${SMALL.toLocaleString('en-US')}`]: row(small, SMALL),
      [`time per message, ${LARGE.toLocaleString('en-US')}`]: row(large, LARGE),
      [`ratio ${LARGE.toLocaleString('en-US')} / ${SMALL.toLocaleString('en-US')}`]: round(ratio, 2),
      [`peak heap per waiting message, ${LARGE.toLocaleString('en-US')}`]: `${round(large.heap / LARGE, 0)} bytes`,
      [`HTTP requests, ${SMALL.toLocaleString('en-US')} / ${LARGE.toLocaleString('en-US')}`]: `${small.requests} / ${large.requests}`,
      'outputs / errors (large burst)': `${large.outputs} / ${large.errors}${large.firstError ? ` (${large.firstError.slice(0, 80)})` : ''}`,
    };
    process.stdout.write(`  ${name}: ${JSON.stringify(rows[name])}\n`);
    goals.push({
      goal: `${name}: time per message at ${LARGE.toLocaleString('en-US')} within 1.5x of that at ${SMALL.toLocaleString('en-US')}`,
      measured: `${round(ratio, 2)}x (${round(per(small, SMALL), 1)} -> ${round(per(large, LARGE), 1)} µs)`,
      met: ratio <= 1.5 && large.outputs + large.errors === LARGE,
    });
  }

  await red.stop();
  await sim.stop();
  output({
    id: 'bursts',
    title: 'Bursts: cost per message as a burst grows',
    machine: machine(),
    settings: {
      sites: SITES,
      bursts: `${SMALL} and ${LARGE} messages`,
      concurrency: CONCURRENCY,
      maxWaiting: LARGE * 2,
      simulator: 'child process',
    },
    method:
      `Each case: a warm-up burst of 1,000, then a burst of ${SMALL} and one of ${LARGE} messages, each sent in one synchronous loop of node.receive after a forced GC; ` +
      'the burst ends when every message has ended in an output or an error (a Catch node). Time per message = wall time / messages (CPU of this process in brackets). ' +
      "HTTP requests = the simulator's own count over the burst (merged and shared requests make them fewer than messages). " +
      'Peak heap per waiting message = the highest heapUsed sampled every 10 ms (garbage included) above the heap before the burst, divided by the messages.',
    alternatives: rows,
    goals,
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
