'use strict';
/**
 * Benchmark, fleet read: a partner's fleet in one message. One ems-device-read node in the Node-RED
 * runtime reads a list of devices given in msg.deviceReference (mode map, properties power and
 * totalEnergyProduced, which every kind of device has) into ONE message, through one config node
 * with its defaults (concurrency 6, coalescing on, 2 ms). The simulator runs in a child process
 * with 334 generated sites (1,002 devices), like a remote service.
 *
 * Counts: the simulator's API requests per fleet read (one request per device expected, the
 * coalescer's own count alongside), the devices in the answer and its aggregate. Memory: the
 * heap the output message keeps (heap after a forced GC with the message held, minus the heap
 * after a forced GC once it is dropped), per device and per byte of the message's JSON, for 100 and for 1,000 devices
 * (median of REPS reads each): proportional when the per-device figures are alike. Also the
 * heap's growth during the read before any GC (what the read allocates on the way) and the
 * wall time of one read. The goal compares the heap kept per device at 100 and at 1,000 devices. Run node with --expose-gc (without it the benchmark turns it on itself).
 */
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');
const { guard, machine, median, output, round, simRequests, startServer } = require('./lib/common');
const { fleetSites } = require('./lib/fleet-sites');
const red = require('./lib/red');

const SITES = 334;
const SIZES = [100, 500, 1000];
const REPS = Number(process.env.BENCH_FLEET_READ_REPS) || 7;
const PROPS = 'power,totalEnergyProduced';

if (typeof global.gc !== 'function') {
  v8.setFlagsFromString('--expose-gc');
  global.gc = vm.runInNewContext('gc');
}

function heap() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 120_000, 'fleet-read');
  const sim = await startServer({ mode: 'sim', fleetSites: SITES, frozen: true });
  const refs = fleetSites(SITES).flatMap((s) => [
    s.battery.deviceReference,
    s.pv.deviceReference,
    s.meter.deviceReference,
  ]);
  await red.start();
  const CORE = path.dirname(require.resolve('@node-red/nodes/package.json'));
  await red.load(
    [
      { id: 'cfg', type: 'ems-partner-config', baseUrl: sim.url, simulator: false, authType: 'none' },
      {
        id: 'n',
        type: 'ems-device-read',
        server: 'cfg',
        mode: 'map',
        device: refs[0],
        deviceType: 'str',
        properties: PROPS,
        propertiesType: 'str',
        wires: [['out']],
      },
      { id: 'out', type: 'helper' },
      { id: 'catch', type: 'catch', scope: null, uncaught: false, wires: [['errs']] },
      { id: 'errs', type: 'helper' },
    ],
    [],
    [require(path.join(CORE, 'core', 'common', '25-catch.js'))],
  );
  const node = red.getNode('n');
  let last;
  let waiting;
  red.getNode('out').on('input', (msg, _s, done) => {
    last = msg;
    done();
    if (waiting) waiting();
  });
  let errors = 0;
  let firstError;
  red.getNode('errs').on('input', (msg, _s, done) => {
    errors++;
    firstError = firstError || msg.error?.message;
    done();
    if (waiting) waiting();
  });

  /** One fleet read of `n` devices; resolves with what it measured. */
  async function readOnce(n) {
    const list = refs.slice(0, n);
    last = undefined;
    const before = heap();
    const requests0 = await simRequests(sim.url);
    const t0 = process.hrtime.bigint();
    const answered = new Promise((r) => {
      waiting = r;
    });
    node.receive({ deviceReference: list });
    await answered;
    waiting = undefined;
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const grown = process.memoryUsage().heapUsed - before; // allocated on the way, before any forced GC
    const msg = last;
    last = undefined;
    const requests = (await simRequests(sim.url)) - requests0;
    const bytes = msg
      ? Buffer.byteLength(
          JSON.stringify({ payload: msg.payload, units: msg.units, errors: msg.errors, aggregate: msg.aggregate }),
        )
      : 0;
    const devices = msg ? Object.keys(msg.payload).length : 0;
    const failed = msg ? Object.keys(msg.errors).length : n;
    const agg = msg ? JSON.parse(JSON.stringify(msg.aggregate)) : undefined;
    // The heap with the message held; the caller measures it again once this call, its only holder, has ended.
    const held = heap();
    return { n, ms, grown, held, bytes, requests, devices, failed, agg };
  }

  await readOnce(1000); // warm-up: sockets, code paths
  await readOnce(100);
  // What only the message keeps: the heap with it held, minus the heap once it is dropped.
  const measure = async (n) => {
    const { held, ...run } = await readOnce(n);
    return { ...run, kept: held - heap() };
  };
  // The sizes in turn, REPS rounds, so a drift of the heap spreads over all of them.
  const bySize = Object.fromEntries(SIZES.map((n) => [n, []]));
  for (let i = 0; i < REPS; i++) for (const n of SIZES) bySize[n].push(await measure(n));
  const requestsCounted = (await red.getNode('cfg').runtime()).reads.requests;
  await red.stop();
  await sim.stop();

  const row = (n) => {
    const runs = bySize[n];
    const kept = median(runs.map((r) => r.kept));
    const bytes = median(runs.map((r) => r.bytes));
    return {
      devices: n,
      'requests per read': runs.map((r) => r.requests).join(', '),
      'devices answered': runs.map((r) => r.devices).join(', '),
      'message JSON, bytes': bytes,
      'heap kept by the message, bytes (median)': Math.round(kept),
      'kept per device, bytes': Math.round(kept / n),
      'kept per byte of JSON': round(kept / bytes, 2),
      'heap grown during the read, bytes (median)': Math.round(median(runs.map((r) => r.grown))),
      'wall ms per read (median)': round(median(runs.map((r) => r.ms)), 1),
    };
  };
  const rows = Object.fromEntries(SIZES.map((n) => [`${n} devices`, row(n)]));
  const small = rows['100 devices'];
  const big = rows['1000 devices'];
  // Proportional: the heap kept per device is alike at 100 and at 1,000 devices (and the slopes between the sizes, shown too).
  const keptOf = (n) => rows[`${n} devices`]['heap kept by the message, bytes (median)'];
  const slope1 = (keptOf(500) - keptOf(100)) / 400;
  const slope2 = (keptOf(1000) - keptOf(500)) / 500;
  const ratio = big['kept per device, bytes'] / small['kept per device, bytes'];
  const perDevice = (keptOf(1000) - keptOf(100)) / 900;
  const fixed = keptOf(100) - perDevice * 100;
  const all = SIZES.flatMap((n) => bySize[n]);
  const exact = all.every((r) => r.requests === r.n);
  const agg = bySize[1000][0].agg;
  output({
    id: 'fleet-read',
    title: 'Fleet read',
    machine: machine(),
    settings: {
      devices: `${SIZES.join(' and ')} of ${refs.length} (${SITES} generated sites, battery + PV + meter each), mode map, properties ${PROPS}`,
      config: 'defaults (concurrency 6, coalescing 2 ms, retries 2)',
      simulator: 'child process, frozen clock',
      repetitions: REPS,
      heap: 'process.memoryUsage().heapUsed after two forced GCs with the output message held, minus the same once it is dropped',
    },
    alternatives: rows,
    results: {
      'aggregate of 1,000 devices': agg
        ? `power ${round(agg.power.power.value / 1000, 1)} kW over ${agg.power.power.devices} devices; totalEnergyProduced ${round(agg.energy.totalEnergyProduced.value / 1e6, 1)} MWh`
        : 'none',
      'heap kept, as a line through 100 and 1,000 devices': `${Math.round(fixed / 1024)} KB + ${Math.round(perDevice)} B per device`,
      'heap per further device, 100 to 500 / 500 to 1,000': `${Math.round(slope1)} B / ${Math.round(slope2)} B`,
      'requests counted by the coalescer (all reads, warm-up included)': requestsCounted ?? 'n/a',
      errors: errors + (firstError ? ` (${firstError})` : ''),
    },
    goals: [
      {
        goal: 'a fleet read of 1,000 devices costs one request per device (coalesced), into one message',
        measured: `${bySize[1000].map((r) => r.requests).join(', ')} requests for 1,000 devices; ${bySize[100].map((r) => r.requests).join(', ')} for 100; ${bySize[1000][0].devices} devices in the one message`,
        met: exact && all.every((r) => r.devices === r.n && r.failed === 0) && errors === 0,
      },
      {
        goal: 'the memory of the answer is proportional to its size',
        measured:
          `${small['kept per device, bytes']} B kept per device at 100 devices, ${big['kept per device, bytes']} B at 1,000 (ratio ${round(ratio, 2)}; ` +
          `${Math.round(fixed / 1024)} KB fixed + ${Math.round(perDevice)} B per device; each further device ${Math.round(slope1)} B from 100 to 500, ${Math.round(slope2)} B from 500 to 1,000); ` +
          `${small['kept per byte of JSON']} and ${big['kept per byte of JSON']} B of heap per byte of JSON`,
        met: ratio > 0.67 && ratio < 1.5 && perDevice > 0 && perDevice < 2048,
      },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
