'use strict';
/**
 * Benchmark 2, coalescing. 1,000 single-property reads of 100 devices (10 per device, over the
 * device's properties) arrive at ems-device-read (mode single) in one burst, in the Node-RED
 * runtime. Config node defaults (coalescing on, 2 ms) against the same with coalesceMs 0.
 * Counts the HTTP requests the simulator answered and the time until the last answer, over
 * several rounds in alternating order. The simulator's clock is frozen, so every coalesced
 * answer must equal, field by field, the answer the same read got alone.
 */
const { guard, machine, median, output, round, simRequests, startServer } = require('./lib/common');
const { fleetSites } = require('./lib/fleet-sites');
const red = require('./lib/red');

const READS = 1000;
const DEVICES = 100;
const ROUNDS = 7;
const PROPS = {
  battery: ['soc', 'power', 'totalEnergyConsumed', 'totalEnergyProduced'],
  pv: ['power', 'totalEnergyProduced'],
  meter: ['power', 'totalEnergyConsumed', 'totalEnergyProduced'],
};

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 120_000, 'coalescing');
  const sim = await startServer({ mode: 'sim', fleetSites: Math.ceil(DEVICES / 3), frozen: true });
  const devices = fleetSites(Math.ceil(DEVICES / 3))
    .flatMap((s) => ['battery', 'pv', 'meter'].map((kind) => ({ ref: s[kind].deviceReference, props: PROPS[kind] })))
    .slice(0, DEVICES);
  const reads = Array.from({ length: READS }, (_, i) => {
    const d = devices[i % DEVICES];
    return { deviceReference: d.ref, property: d.props[Math.floor(i / DEVICES) % d.props.length] };
  });
  await red.start();
  const node = (id, server) => ({ id, type: 'ems-device-read', server, mode: 'single', device: '', deviceType: 'str', properties: 'soc', propertiesType: 'str', wires: [['sink']] });
  await red.load([
    { id: 'on', type: 'ems-partner-config', baseUrl: sim.url, simulator: false, authType: 'none' },
    { id: 'off', type: 'ems-partner-config', baseUrl: sim.url, simulator: false, authType: 'none', coalesceMs: 0 },
    node('coalesced', 'on'),
    node('direct', 'off'),
    { id: 'catch', type: 'catch', scope: null, uncaught: false, wires: [['errs']] },
    { id: 'sink', type: 'helper' },
    { id: 'errs', type: 'helper' },
  ]);
  let answers = [];
  let errors = 0;
  let onAll = () => undefined;
  red.getNode('sink').on('input', (msg, _s, done) => { answers.push(msg); done(); if (answers.length + errors === READS) onAll(); });
  red.getNode('errs').on('input', (msg, _s, done) => { errors++; done(); if (answers.length + errors === READS) onAll(); });

  /** Sends the burst to one node; resolves with time, HTTP requests and answers by read. */
  async function burst(id) {
    answers = [];
    errors = 0;
    const all = new Promise((resolve) => { onAll = resolve; });
    const req0 = await simRequests(sim.url);
    const target = red.getNode(id);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < READS; i++) target.receive({ seq: i, ...reads[i] });
    await all;
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const requests = (await simRequests(sim.url)) - req0;
    const bySeq = new Array(READS);
    for (const m of answers) bySeq[m.seq] = m;
    return { ms, requests, errors, bySeq };
  }

  const runs = { coalesced: [], direct: [] };
  let mismatches = 0;
  for (let w = 0; w < 2; w++) for (const id of ['direct', 'coalesced']) await burst(id); // warm-up: connections, JIT
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? ['direct', 'coalesced'] : ['coalesced', 'direct'];
    const res = {};
    for (const id of order) res[id] = await burst(id);
    for (let i = 0; i < READS; i++) {
      const a = res.coalesced.bySeq[i];
      const b = res.direct.bySeq[i];
      const same = a && b && a.payload === b.payload && a.unit === b.unit && a.topic === b.topic
        && JSON.stringify(a.measurement) === JSON.stringify(b.measurement) && a.measurement.property === reads[i].property;
      if (!same) mismatches++;
    }
    for (const id of order) runs[id].push({ ms: res[id].ms, requests: res[id].requests, errors: res[id].errors });
  }
  await red.stop();
  await sim.stop();

  const sum = (id) => ({
    medianMs: round(median(runs[id].map((x) => x.ms)), 1),
    msPerRound: runs[id].map((x) => round(x.ms, 1)),
    httpRequests: Math.max(...runs[id].map((x) => x.requests)),
    errors: runs[id].reduce((n, x) => n + x.errors, 0),
  });
  const on = sum('coalesced');
  const off = sum('direct');
  const timeRatio = on.medianMs / off.medianMs;
  output({
    id: 'coalescing',
    title: 'Coalescing',
    machine: machine(),
    settings: { reads: READS, devices: DEVICES, rounds: ROUNDS, coalesceMs: 'default (2)', concurrency: 'default (6)' },
    alternatives: { 'coalescing on (default)': on, 'coalescing off (coalesceMs 0)': off },
    answersDifferingFromUncoalesced: mismatches,
    ratios: { 'time on / off': round(timeRatio), 'HTTP requests on / off': round(on.httpRequests / off.httpRequests) },
    goals: [
      { goal: `at most ${DEVICES} HTTP requests (against ${READS} without coalescing)`, measured: `${on.httpRequests} (against ${off.httpRequests})`, met: on.httpRequests <= DEVICES && off.httpRequests === READS },
      { goal: 'total time at most 1/3 of uncoalesced', measured: round(timeRatio), met: timeRatio <= 1 / 3 },
      { goal: 'every answer equal to the uncoalesced one', measured: `${mismatches} differ, ${on.errors + off.errors} errors`, met: mismatches === 0 && on.errors + off.errors === 0 },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
