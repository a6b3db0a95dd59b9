'use strict';
/**
 * One alternative of the fleet-polling benchmark in a process of its own (forked by
 * bench/fleet-polling.js, run with --expose-gc). argv[2] is JSON:
 *   { mode: 'ours' | 'core' | 'bare' | 'axios', url, sites, nodes, intervalS, props }
 * (the devices: the first `nodes` devices of `sites` generated sites, bench/lib/fleet-sites.js)
 *   ours  Node-RED runtime (node-red-node-test-helper, spies removed) with one ems-device-read
 *         node per device (dist/), interval intervalS, through one config node (defaults)
 *   core  Node-RED runtime with one inject node per device (repeat intervalS, first shots spread
 *         over the first interval, msg.url and msg.topic set) into one core http request node
 *         (GET, keep-alive, parsed JSON)
 *   bare  no Node-RED: a node:http client (keep-alive agent of 6 sockets) sending the same GETs
 *         at the same rate in 250 ms slots, parsing each answer
 *   axios the same without Node-RED, through axios configured as the package configures its own
 *         (keep-alive agent of 6 sockets, no redirects, no proxy, body limits): the floor of any
 *         client built on axios, which is the package's chosen client
 * Sends { ready, loadMs } once polling; on { cmd: 'measure', warmupMs, windowMs } waits the
 * warm-up, takes the heap after a forced GC, sends { windowStart }, measures its own CPU
 * (process.cpuUsage) over the window, sends { windowEnd }, takes the heap again and sends the
 * result; then exits. With BENCH_CPU_PROFILE=<file> it also takes a CPU profile of the window
 * (inspector, 200 µs sampling) and writes it there (for the profiles BENCHMARKS.md cites).
 */
const http = require('node:http');

const { fleetDevices } = require('./fleet-sites');

const opts = JSON.parse(process.argv[2]);
const { mode, url, intervalS, props } = opts;
const refs = fleetDevices(opts.sites).all.slice(0, opts.nodes);
const SLOT_MS = 250;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};
function heapAfterGc() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

// Counting: preallocated, so it adds nothing to the heap under test.
const index = new Map(refs.map((r, i) => [r, i]));
const perNode = new Uint16Array(refs.length);
let messages = 0;
let errors = 0;
let counting = false;
let t0 = 0;
const perSecond = new Uint32Array(4096);
const per10ms = new Uint16Array(4096 * 100);
function count(ref) {
  if (!counting) return;
  messages++;
  const node = index.get(ref);
  if (node !== undefined) perNode[node]++;
  const ms = performance.now() - t0;
  const second = Math.floor(ms / 1000);
  if (second < perSecond.length) perSecond[second]++;
  const tenMs = Math.floor(ms / 10);
  if (tenMs < per10ms.length) per10ms[tenMs]++;
}

let red;
let stopLoad = () => undefined;

async function startNodeRed() {
  red = require('./red');
  await red.start();
  const flow = [
    { id: 'catch', type: 'catch', scope: null, uncaught: false, wires: [['errs']] },
    { id: 'sink', type: 'helper' },
    { id: 'errs', type: 'helper' },
  ];
  if (mode === 'ours') {
    flow.push({ id: 'cfg', type: 'ems-partner-config', baseUrl: url, simulator: false, authType: 'none' });
    refs.forEach((ref, i) =>
      flow.push({
        id: `r${i}`,
        type: 'ems-device-read',
        server: 'cfg',
        mode: 'map',
        device: ref,
        deviceType: 'str',
        properties: props,
        propertiesType: 'str',
        interval: intervalS,
        wires: [['sink']],
      }),
    );
  } else {
    // The first shots spread evenly over the first interval (from 0.1 s, inject's smallest delay), then every intervalS.
    refs.forEach((ref, i) =>
      flow.push({
        id: `i${i}`,
        type: 'inject',
        repeat: String(intervalS),
        once: true,
        onceDelay: 0.1 + (i * intervalS) / refs.length,
        crontab: '',
        wires: [['req']],
        props: [
          { p: 'url', v: `${url}/devices/${ref}/measurements/map?properties=${props}`, vt: 'str' },
          { p: 'topic', v: ref, vt: 'str' },
        ],
      }),
    );
    flow.push({
      id: 'req',
      type: 'http request',
      method: 'GET',
      ret: 'obj',
      paytoqs: 'ignore',
      url: '',
      persist: true,
      tls: '',
      proxy: '',
      authType: '',
      senderr: false,
      headers: [],
      wires: [['sink']],
    });
  }
  await red.load(flow, mode === 'core' ? ['inject', 'httpRequest'] : []);
  const key = mode === 'ours' ? 'deviceReference' : 'topic';
  red.getNode('sink').on('input', (msg, _s, done) => {
    if (mode === 'core' && (msg.statusCode !== 200 || !msg.payload || !msg.payload.measurements)) errors++;
    else count(msg[key]);
    done();
  });
  red.getNode('errs').on('input', (_m, _s, done) => {
    if (counting) errors++;
    done();
  });
}

/** GETs a map with node:http; calls back with an error or null. */
function getMap(host, port, agent, ref, cb) {
  http
    .get({ host, port, agent, path: `/devices/${ref}/measurements/map?properties=${props}` }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => {
        let parsed;
        try {
          parsed = JSON.parse(body);
        } catch (e) {
          return cb(e);
        }
        return res.statusCode === 200 && parsed.measurements ? cb(null) : cb(new Error(`HTTP ${res.statusCode}`));
      });
      res.on('error', cb);
    })
    .on('error', cb);
}

/** GETs a map with axios as the package configures it; calls back with an error or null. */
function axiosGetter() {
  const ax = require('./tuned-axios').tunedAxios(url, 6);
  return (_h, _p, _a, ref, cb) =>
    ax
      .get(`/devices/${ref}/measurements/map?properties=${props}`)
      .then((r) => cb(r.data && r.data.measurements ? null : new Error('bad answer')), cb);
}

function startBare() {
  const { hostname, port } = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 6 });
  const get = mode === 'axios' ? axiosGetter() : getMap;
  const perSlot = (refs.length * SLOT_MS) / (intervalS * 1000);
  let next = 0;
  let carry = 0;
  const timer = setInterval(() => {
    carry += perSlot;
    for (; carry >= 1; carry--) {
      const ref = refs[next++ % refs.length];
      get(hostname, port, agent, ref, (err) => {
        if (err) {
          if (counting) errors++;
        } else count(ref);
      });
    }
  }, SLOT_MS);
  stopLoad = () => {
    clearInterval(timer);
    agent.destroy();
  };
}

async function main() {
  const loading = Date.now();
  if (mode === 'bare' || mode === 'axios') startBare();
  else await startNodeRed();
  process.send({ ready: true, loadMs: Date.now() - loading });
  const cmd = await new Promise((resolve) => process.once('message', resolve));
  await sleep(cmd.warmupMs);
  const heap1 = heapAfterGc();
  const rss1 = process.memoryUsage().rss;
  process.send({ windowStart: true });
  const profiler = process.env.BENCH_CPU_PROFILE ? await startProfile() : undefined;
  counting = true;
  t0 = performance.now();
  const c0 = cpuMs();
  await sleep(cmd.windowMs);
  const cpu = cpuMs() - c0;
  if (profiler) await profiler.stop(process.env.BENCH_CPU_PROFILE);
  const wall = performance.now() - t0;
  counting = false;
  process.send({ windowEnd: true });
  const heap2 = heapAfterGc();
  const rss2 = process.memoryUsage().rss;
  const seconds = Math.floor(wall / 1000);
  const steady = Array.from(perSecond.slice(0, seconds));
  process.send({
    result: {
      cpuMs: cpu,
      wall,
      messages,
      errors,
      expected: (refs.length * wall) / 1000 / intervalS,
      pollsPerNode: {
        min: perNode.reduce((a, b) => Math.min(a, b), Infinity),
        max: perNode.reduce((a, b) => Math.max(a, b), 0),
      },
      messagesPerSecond: { min: Math.min(...steady), max: Math.max(...steady) },
      busiest10ms: per10ms.reduce((a, b) => Math.max(a, b), 0),
      heap1,
      heap2,
      rss1,
      rss2,
    },
  });
  stopLoad();
  if (red) await red.stop().catch(() => undefined);
  process.exit(0);
}

/** A CPU profile of what follows, through the inspector; stop(file) writes it. */
async function startProfile() {
  const { Session } = require('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return {
    stop: async (file) => {
      const { profile } = await session.post('Profiler.stop');
      require('node:fs').writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

main().catch((e) => {
  process.stderr.write(`${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
