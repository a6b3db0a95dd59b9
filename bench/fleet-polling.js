'use strict';
/**
 * Benchmark 4, fleet polling. 5,000 ems-device-read nodes (one per device of 1,667 generated
 * sites) poll every 10 s through one config node (defaults: concurrency 6, coalescing on)
 * and its shared PollScheduler, in the Node-RED runtime, for 2 minutes. Measures this
 * process's CPU over the 2 minutes (the simulator runs in a child process, like a remote
 * service), the heap after a forced GC at minute 1 and at the end, and how the polls are
 * spread: messages per second and the busiest 10 ms. Two references follow, for FLOOR_MS each,
 * with the same devices, rate, 250 ms slots and 6 sockets: 5,000 minimal Node-RED nodes on the
 * same PollScheduler that GET with node:http, parse and send (what our node could cost with a
 * node:http read path instead of axios), and a bare node:http client without Node-RED (what
 * HTTP alone costs on this machine). Run node with --expose-gc.
 */
const path = require('node:path');
const http = require('node:http');
const { DIST, guard, machine, output, procCpuMs, round, selfCpuMs, simRequests, startServer } = require('./lib/common');
const { fleetSites } = require('./lib/fleet-sites');
const red = require('./lib/red');

const SITES = 1667;
const NODES = 5000;
const INTERVAL_S = 10;
const RUN_MS = Number(process.env.BENCH_FLEET_MS) || 120_000;
const PROPS = 'power,totalEnergyProduced'; // every kind of device has both
const FLOOR_MS = Number(process.env.BENCH_FLOOR_MS) || 60_000;
const SLOT_MS = 250; // as PollScheduler's MIN_TICK_MS

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function heapAfterGc() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

async function main() {
  if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
  guard(RUN_MS + 2 * FLOOR_MS + 120_000, 'fleet-polling');
  const sim = await startServer({ mode: 'sim', fleetSites: SITES });
  const refs = fleetSites(SITES).flatMap((s) => [s.battery.deviceReference, s.pv.deviceReference, s.meter.deviceReference]).slice(0, NODES);
  await red.start();
  const flow = [
    { id: 'cfg', type: 'ems-partner-config', baseUrl: sim.url, simulator: false, authType: 'none' },
    { id: 'catch', type: 'catch', scope: null, uncaught: false, wires: [['errs']] },
    { id: 'sink', type: 'helper' },
    { id: 'errs', type: 'helper' },
  ];
  refs.forEach((ref, i) => flow.push({ id: `r${i}`, type: 'ems-device-read', server: 'cfg', mode: 'map', device: ref, deviceType: 'str', properties: PROPS, propertiesType: 'str', interval: INTERVAL_S, wires: [['sink']] }));

  // Preallocated records, so counting adds nothing to the heap under test.
  const cap = Math.ceil((RUN_MS / 1000 / INTERVAL_S + 2) * NODES * 1.5);
  const times = new Float64Array(cap);
  const perNode = new Uint16Array(NODES);
  let n = 0;
  let errors = 0;
  let t0 = 0;
  const t1 = Date.now();
  await red.load(flow);
  const loadMs = Date.now() - t1;
  const index = new Map(refs.map((r, i) => [r, i])); // a message names its device, hence its node
  red.getNode('sink').on('input', (msg, _s, done) => {
    if (n < cap) times[n++] = performance.now() - t0;
    const i = index.get(msg.deviceReference);
    if (i !== undefined) perNode[i]++;
    done();
  });
  red.getNode('errs').on('input', (_m, _s, done) => { errors++; done(); });

  t0 = performance.now();
  const req0 = await simRequests(sim.url);
  const cpu0 = selfCpuMs();
  const simCpu0 = procCpuMs(sim.pid);
  await sleep(RUN_MS / 2);
  const heap1 = heapAfterGc();
  const rss1 = process.memoryUsage().rss;
  await sleep(RUN_MS / 2 - (performance.now() - t0 - RUN_MS / 2));
  const cpuMs = selfCpuMs() - cpu0;
  const wall = performance.now() - t0;
  const simCpuMs = procCpuMs(sim.pid) - simCpu0;
  const requests = (await simRequests(sim.url)) - req0;
  const heap2 = heapAfterGc();
  const rss2 = process.memoryUsage().rss;
  const msgs = n;
  await red.stop();
  const nrHttp = await nodeRedHttpReference(sim.url, refs);
  const floor = await bareHttpFloor(sim.url, refs);
  await sim.stop();

  // Spread: messages per whole second (after the first interval) and the busiest 10 ms.
  const perSecond = new Array(Math.ceil(wall / 1000)).fill(0);
  const per10ms = new Map();
  for (let i = 0; i < msgs; i++) {
    perSecond[Math.floor(times[i] / 1000)]++;
    const k = Math.floor(times[i] / 10);
    per10ms.set(k, (per10ms.get(k) || 0) + 1);
  }
  const steady = perSecond.slice(INTERVAL_S, -1);
  const counts = Array.from(perNode);
  const cpuPct = (cpuMs / wall) * 100;
  const heapDeltaMB = (heap2 - heap1) / 2 ** 20;
  output({
    id: 'fleet-polling',
    title: 'Fleet polling',
    machine: machine(),
    settings: { nodes: NODES, intervalSeconds: INTERVAL_S, runSeconds: round(wall / 1000, 1), properties: PROPS, concurrency: 'default (6)', loadMs },
    results: {
      messages: msgs,
      expectedMessages: Math.round((NODES * wall) / 1000 / INTERVAL_S),
      httpRequests: requests,
      errors,
      pollsPerNode: { min: Math.min(...counts), max: Math.max(...counts) },
      messagesPerSecond: { min: Math.min(...steady), max: Math.max(...steady), expected: NODES / INTERVAL_S },
      busiest10ms: Math.max(...per10ms.values()),
      cpuPercentOfOneCore: round(cpuPct, 1),
      cpuUsPerPoll: round((cpuMs * 1000) / msgs, 0),
      simulatorCpuPercent: round((simCpuMs / wall) * 100, 1),
      heapAfterMinute1MB: round(heap1 / 2 ** 20, 1),
      heapAtEndMB: round(heap2 / 2 ** 20, 1),
      heapGrowthMB: round(heapDeltaMB, 2),
      heapGrowthPerHourMBIfLinear: round((heapDeltaMB * 3_600_000) / (wall / 2), 0),
      rssAfterMinute1MB: round(rss1 / 2 ** 20, 1),
      rssAtEndMB: round(rss2 / 2 ** 20, 1),
    },
    references: {
      'Node-RED + node:http': cpuSummary('5,000 minimal nodes on the same PollScheduler: node:http GET, JSON.parse, send', nrHttp, 'messages', 'cpuUsPerPoll'),
    },
    floor: cpuSummary(`bare node:http, same devices and rate, ${SLOT_MS} ms slots, 6 sockets, no Node-RED, no axios`, floor, 'requests', 'cpuUsPerRequest'),
    ratios: {
      'ems-device-read CPU / bare node:http CPU': round(cpuPct / floor.cpuPct),
      'ems-device-read CPU / Node-RED + node:http CPU': round(cpuPct / nrHttp.cpuPct),
    },
    goals: [
      { goal: 'CPU at most 20 % of one core', measured: `${round(cpuPct, 1)} %`, met: cpuPct <= 20 },
      { goal: 'heap at the end within 5 MB of the heap after minute 1', measured: `${round(heapDeltaMB, 2)} MB`, met: Math.abs(heapDeltaMB) <= 5 },
      { goal: 'every device polled every 10 s, no errors', measured: `${msgs} messages, ${errors} errors`, met: errors === 0 && Math.min(...counts) >= Math.floor(wall / 1000 / INTERVAL_S) - 1 },
    ],
  });
  process.exit(0);
}

/** A reference run's figures: count (messages or requests), errors, CPU share and per item. */
function cpuSummary(what, r, countKey, perKey) {
  const count = r[countKey];
  return { what, seconds: round(r.wall / 1000, 1), [countKey]: count, errors: r.errors, cpuPercentOfOneCore: round(r.cpuPct, 1), [perKey]: round((r.cpuMs * 1000) / count, 0) };
}

/** GETs a map of PROPS with node:http; calls back with the parsed body or an error. */
function getMap(host, port, agent, ref, cb) {
  http.get({ host, port, agent, path: `/devices/${ref}/measurements/map?properties=${PROPS}` }, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (d) => { body += d; });
    res.on('end', () => {
      let parsed;
      try { parsed = JSON.parse(body); } catch (e) { return cb(e); }
      return res.statusCode === 200 && parsed.measurements ? cb(null, parsed) : cb(new Error(`HTTP ${res.statusCode}`));
    });
    res.on('error', cb);
  }).on('error', cb);
}

/** Minimal Node-RED nodes polling with node:http on our PollScheduler: CPU over FLOOR_MS. */
async function nodeRedHttpReference(url, refs) {
  const { PollScheduler } = require(path.join(DIST, 'runtime'));
  const { hostname, port } = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 6 });
  const polls = new PollScheduler();
  const pollingNode = (RED) => RED.nodes.registerType('bench-http-poll', function BenchHttpPoll(config) {
    RED.nodes.createNode(this, config);
    const node = this;
    const stop = polls.add(INTERVAL_S * 1000, () => new Promise((resolve) => {
      getMap(hostname, port, agent, config.device, (err, body) => {
        if (err) node.error(err, {});
        else node.send({ payload: body.measurements, deviceReference: config.device });
        resolve();
      });
    }));
    node.on('close', () => stop());
  });
  await red.start();
  const flow = [
    { id: 'catch', type: 'catch', scope: null, uncaught: false, wires: [['errs']] },
    { id: 'sink', type: 'helper' },
    { id: 'errs', type: 'helper' },
    ...refs.map((ref, i) => ({ id: `h${i}`, type: 'bench-http-poll', device: ref, wires: [['sink']] })),
  ];
  let messages = 0;
  let errors = 0;
  await red.load(flow, [], [pollingNode]);
  red.getNode('sink').on('input', (_m, _s, done) => { messages++; done(); });
  red.getNode('errs').on('input', (_m, _s, done) => { errors++; done(); });
  global.gc();
  const cpu0 = selfCpuMs();
  const t0 = performance.now();
  await sleep(FLOOR_MS);
  const cpuMs = selfCpuMs() - cpu0;
  const wall = performance.now() - t0;
  await red.stop();
  polls.stop();
  agent.destroy();
  return { cpuMs, wall, messages, errors, cpuPct: (cpuMs / wall) * 100 };
}

/** The same polls from a bare node:http client: CPU of this process over FLOOR_MS. */
async function bareHttpFloor(url, refs) {
  const { hostname, port } = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 6 });
  const perSlot = (refs.length * SLOT_MS) / (INTERVAL_S * 1000);
  let next = 0;
  let requests = 0;
  let errors = 0;
  let inFlight = 0;
  const get = (ref) => {
    inFlight++;
    getMap(hostname, port, agent, ref, (err) => {
      inFlight--;
      if (err) errors++;
      else requests++;
    });
  };
  global.gc();
  const cpu0 = selfCpuMs();
  const t0 = performance.now();
  const timer = setInterval(() => { for (let i = 0; i < perSlot; i++) get(refs[next++ % refs.length]); }, SLOT_MS);
  await sleep(FLOOR_MS);
  clearInterval(timer);
  const cpuMs = selfCpuMs() - cpu0;
  const wall = performance.now() - t0;
  for (let i = 0; i < 200 && inFlight > 0; i++) await sleep(50);
  agent.destroy();
  return { cpuMs, wall, requests, errors, cpuPct: (cpuMs / wall) * 100 };
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
