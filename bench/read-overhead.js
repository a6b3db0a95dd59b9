'use strict';
/**
 * Benchmark 1, read overhead. The same map reads of 3 properties (battery devices of a
 * generated fleet, round robin, so no two reads in flight name the same device) done by:
 *   ems-device-read  in the Node-RED runtime (config node defaults: concurrency 6, coalescing on)
 *   core flow        change (JSONata URL) -> http request (keep-alive; no concurrency limit) -> json, same runtime
 *   bare axios       axios.get(url) with a keep-alive agent of maxSockets 6 (axios defaults otherwise)
 *   tuned axios      the same with maxRedirects 0 and proxy false, as our transport sets them
 *   Node-RED + axios a minimal custom node calling the bare axios instance (reference: what
 *                    Node-RED's message passing alone adds)
 * All are fed by the same closed loop (at most INFLIGHT messages or calls outstanding) in one
 * process, against the simulator in a child process, interleaved in rounds with rotating order
 * (a forced GC before each, when run with --expose-gc as run-all does).
 * A second, smaller run keeps only `concurrency` (6) reads outstanding: a flow that waits for
 * each answer, where the coalescing window is added latency rather than hidden by queueing.
 */
const http = require('node:http');
const axios = require('axios');
const { closedLoop, guard, machine, median, output, procCpuMs, round, selfCpuMs, simRequests, startServer } = require('./lib/common');
const { fleetDevices } = require('./lib/fleet-sites');
const red = require('./lib/red');

const TOTAL = Number(process.env.BENCH_READS) || 20_000;
const ROUNDS = 8;
const INFLIGHT = 64;
const CONCURRENCY = 6;
const PROPS = 'soc,power,totalEnergyConsumed';
const SITES = 334;

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 240_000, 'read-overhead');
  const sim = await startServer({ mode: 'sim', fleetSites: SITES });
  const devs = fleetDevices(SITES).batteries;
  const path = (i) => `/devices/${devs[i % devs.length]}/measurements/map?properties=${PROPS}`;
  const agentOpts = { keepAlive: true, maxSockets: CONCURRENCY };
  const bare = axios.create({ httpAgent: new http.Agent(agentOpts) });
  const tuned = axios.create({ httpAgent: new http.Agent(agentOpts), maxRedirects: 0, proxy: false });
  const minimalNode = (RED) => RED.nodes.registerType('bench-axios', function BenchAxios(config) {
    RED.nodes.createNode(this, config);
    this.on('input', (msg, send, done) => {
      bare.get(sim.url + `/devices/${msg.deviceReference}/measurements/map?properties=${PROPS}`).then((r) => { msg.payload = r.data; send(msg); done(); }, done);
    });
  });
  await red.start();
  await red.load([
    { id: 'cfg', type: 'ems-partner-config', baseUrl: sim.url, simulator: false, authType: 'none', concurrency: CONCURRENCY },
    { id: 'cfg0', type: 'ems-partner-config', baseUrl: sim.url, simulator: false, authType: 'none', concurrency: CONCURRENCY, coalesceMs: 0 },
    { id: 'ours', type: 'ems-device-read', server: 'cfg', mode: 'map', device: '', deviceType: 'str', properties: PROPS, propertiesType: 'str', wires: [['sink']] },
    { id: 'ours0', type: 'ems-device-read', server: 'cfg0', mode: 'map', device: '', deviceType: 'str', properties: PROPS, propertiesType: 'str', wires: [['sink']] },
    {
      id: 'chg', type: 'change', wires: [['req']],
      rules: [{ t: 'set', p: 'url', pt: 'msg', to: `"${sim.url}/devices/" & deviceReference & "/measurements/map?properties=${PROPS}"`, tot: 'jsonata' }],
    },
    { id: 'req', type: 'http request', method: 'GET', ret: 'txt', paytoqs: 'ignore', url: '', persist: true, tls: '', proxy: '', authType: '', senderr: false, headers: [], wires: [['js']] },
    { id: 'js', type: 'json', property: 'payload', action: '', pretty: false, wires: [['sink']] },
    { id: 'minimal', type: 'bench-axios', wires: [['sink']] },
    { id: 'catch', type: 'catch', scope: null, uncaught: false, wires: [['errs']] },
    { id: 'sink', type: 'helper' },
    { id: 'errs', type: 'helper' },
  ], ['change', 'httpRequest', 'json'], [minimalNode]);

  // Each fed message carries `seq`; its answer (or its error, via catch) settles it.
  const pending = new Map();
  const settle = (msg, ok) => {
    const p = pending.get(msg.seq);
    if (!p) return;
    pending.delete(msg.seq);
    if (ok && msg.payload && typeof msg.payload === 'object' && (msg.payload.soc !== undefined || msg.payload.measurements)) p.resolve();
    else p.reject(new Error(`read ${msg.seq} failed: ${msg.error ? msg.error.message : JSON.stringify(msg.payload).slice(0, 200)}`));
  };
  red.getNode('sink').on('input', (msg, _s, done) => { settle(msg, true); done(); });
  red.getNode('errs').on('input', (msg, _s, done) => { settle(msg, false); done(); });
  const feed = (id) => {
    const node = red.getNode(id);
    return (i) => new Promise((resolve, reject) => {
      pending.set(i, { resolve, reject });
      node.receive({ seq: i, deviceReference: devs[i % devs.length], payload: '' });
    });
  };
  const check = (r) => { if (!r.data || !r.data.measurements) throw new Error('bad answer'); };
  const alternatives = {
    'ems-device-read': feed('ours'),
    'core flow': feed('chg'),
    'bare axios': (i) => bare.get(sim.url + path(i)).then(check),
    'tuned axios': (i) => tuned.get(sim.url + path(i)).then(check),
    'Node-RED + axios (reference)': feed('minimal'),
  };

  let seq = 0;
  const stats = {};
  const measure = async (name, task, count, inflight, into) => {
    if (global.gc) global.gc(); // each alternative starts without the previous one's garbage
    const req0 = await simRequests(sim.url);
    const cpu0 = selfCpuMs();
    const simCpu0 = procCpuMs(sim.pid);
    const s = await closedLoop(seq, count, inflight, task);
    seq += count;
    const st = (into[name] ??= { reads: 0, seconds: 0, cpuMs: 0, simCpuMs: 0, httpRequests: 0, perRound: [] });
    st.reads += count;
    st.seconds += s;
    st.perRound.push(count / s);
    st.cpuMs += selfCpuMs() - cpu0;
    st.simCpuMs += procCpuMs(sim.pid) - simCpu0;
    st.httpRequests += (await simRequests(sim.url)) - req0;
  };

  const warm = {};
  const names = Object.keys(alternatives).filter((n) => !process.env.BENCH_ONLY || process.env.BENCH_ONLY.split(',').includes(n));
  for (const name of names) await measure(name, alternatives[name], 1000, INFLIGHT, warm);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...names].reverse() : names.slice(r % names.length).concat(names.slice(0, r % names.length));
    for (const name of order) await measure(name, alternatives[name], TOTAL / ROUNDS, INFLIGHT, stats);
  }

  // Only `concurrency` reads outstanding: the coalescing window shows as latency.
  const low = {};
  const lowAlts = { 'ems-device-read': feed('ours'), 'ems-device-read, coalesceMs 0': feed('ours0'), 'tuned axios': alternatives['tuned axios'] };
  const lowNames = Object.keys(lowAlts);
  for (let r = 0; r < 2; r++) for (const name of r ? [...lowNames].reverse() : lowNames) await measure(name, lowAlts[name], TOTAL / 10, CONCURRENCY, low);

  const summarise = (m) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, {
    reads: v.reads,
    seconds: round(v.seconds, 3),
    readsPerSecond: round(v.reads / v.seconds, 0),
    clientCpuUsPerRead: round((v.cpuMs * 1000) / v.reads, 0),
    simulatorCpuUsPerRead: round((v.simCpuMs * 1000) / v.reads, 0),
    httpRequests: v.httpRequests,
  }]));
  const main = summarise(stats);
  const lowS = summarise(low);
  const tp = (n) => (main[n] ? main[n].readsPerSecond : NaN);
  // The goals compare alternatives round by round (each round runs them back to back, so a
  // slow spell of a shared machine hits both) and take the median of the per-round ratios.
  const perRound = (a, b) => (stats[a] && stats[b] ? stats[a].perRound.map((x, i) => x / stats[b].perRound[i]) : [NaN]);
  const roundsAxios = perRound('ems-device-read', 'bare axios');
  const roundsCore = perRound('ems-device-read', 'core flow');
  const ratioAxios = median(roundsAxios);
  const ratioCore = median(roundsCore);
  const spread = (xs) => `median of ${xs.length} rounds; rounds ${round(Math.min(...xs))}-${round(Math.max(...xs))}`;
  await red.stop();
  await sim.stop();
  output({
    id: 'read-overhead',
    title: 'Read overhead',
    machine: machine(),
    settings: { reads: TOTAL, rounds: ROUNDS, inflight: INFLIGHT, concurrency: CONCURRENCY, properties: PROPS, devices: devs.length },
    alternatives: main,
    lowInflight: { inflight: CONCURRENCY, alternatives: lowS },
    ratios: {
      'ems-device-read / bare axios (median of rounds)': round(ratioAxios),
      'ems-device-read / core flow (median of rounds)': round(ratioCore),
      'ems-device-read / bare axios (totals)': round(tp('ems-device-read') / tp('bare axios')),
      'ems-device-read / tuned axios': round(tp('ems-device-read') / tp('tuned axios')),
      'ems-device-read / core flow (totals)': round(tp('ems-device-read') / tp('core flow')),
      'Node-RED + axios (reference) / bare axios': round(tp('Node-RED + axios (reference)') / tp('bare axios')),
      'ems-device-read / Node-RED + axios (reference)': round(tp('ems-device-read') / tp('Node-RED + axios (reference)')),
      'at 6 in flight: ems-device-read / tuned axios': round(lowS['ems-device-read'].readsPerSecond / lowS['tuned axios'].readsPerSecond),
      'at 6 in flight: coalesceMs 0 / tuned axios': round(lowS['ems-device-read, coalesceMs 0'].readsPerSecond / lowS['tuned axios'].readsPerSecond),
    },
    goals: [
      { goal: 'throughput >= 0.90 x bare axios', measured: `${round(ratioAxios)} (${spread(roundsAxios)})`, met: ratioAxios >= 0.9 },
      { goal: 'throughput >= 1.5 x core-node flow', measured: `${round(ratioCore)} (${spread(roundsCore)})`, met: ratioCore >= 1.5 },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
