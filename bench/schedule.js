'use strict';
/**
 * Benchmark 8, schedules: a day of quarter-hour setpoints for many sites. NODES ems-schedule nodes,
 * one per generated site (battery 10 kW / 20 kWh), each given a 96-slot quarter-hour schedule for
 * one day: the price planner's plan of the sample day (test/fixtures/prices-sample-day.json) from
 * different SOCs, runs of random length, a change every slot, a change every hour, and one flat
 * day. A simulated day passes in the Node-RED runtime (node-red-node-test-helper) on
 * @sinonjs/fake-timers (Date, setTimeout, clearTimeout faked): the clock moves from one quarter
 * hour to the next and, in real time, the benchmark waits for what the nodes send. The simulator
 * runs in this process and follows the fake clock, so its request log shows when (simulated) each
 * request arrived. Twice: with the delivery check off, and on (a report per slot on output 2; the
 * check's reads are not steering requests).
 *
 * Counts, per node: steering requests against changes of setting (a run of identical slots is
 * one change), each request's arrival against its run's start and its validUntil against the
 * run's end. Timers: setTimeout is wrapped so that every timer created by the schedule's code
 * (dist/runtime/shared-clock, schedule-player, delivery-check; dist/nodes/ems-schedule,
 * schedule-verify) is tracked until it fires or is cleared; the live count is sampled after
 * each quarter hour settles, against the number of nodes playing.
 */
const path = require('node:path');
const FakeTimers = require('@sinonjs/fake-timers');
const { DIST, ROOT, guard, machine, output, round, selfCpuMs } = require('./lib/common');
const { fleetSites } = require('./lib/fleet-sites');
const red = require('./lib/red');

const NODES = Number(process.env.BENCH_SCHEDULE_NODES) || 24;
const SLOTS = 96;
const QUARTER_MS = 15 * 60_000;
/** Most real time to wait for what one quarter hour sends. */
const SETTLE_MS = 15_000;
const CORE = path.dirname(require.resolve('@node-red/nodes/package.json'));
const SCHEDULE_CODE =
  /[\\/]dist[\\/](runtime[\\/](shared-clock|schedule-player|delivery-check)|nodes[\\/](ems-schedule|schedule-verify))\.js/;

const { startSimulator } = require(path.join(DIST, 'simulator'));
const { planFromPrices } = require(path.join(DIST, 'plan'));
const SAMPLE = require(path.join(ROOT, 'test', 'fixtures', 'prices-sample-day.json'));

/** A seeded PRNG (the simulator's mulberry32), so every run plays the same schedules. */
const { mulberry32: prng } = require(path.join(DIST, 'simulator', 'prng'));

/** The ESS power (kW, + discharge) of each of the 96 slots of node i's schedule, and what kind it is. */
function valuesFor(i, t0) {
  const kind = ['plan', 'random runs', 'plan', 'every slot', 'hourly', 'plan', 'random runs', 'flat'][i % 8];
  const rnd = prng(1000 + i);
  const levels = [-10, -7.5, -5, -2.5, 0, 2.5, 5, 7.5, 10];
  const runs = [];
  if (kind === 'plan') {
    const prices = SAMPLE.slots.map((s) => ({ start: t0 + s.offsetMinutes * 60_000, duration: 15, price: s.price }));
    const plan = planFromPrices({
      prices,
      priceUnit: SAMPLE.unit,
      battery: { capacityKWh: 20, maxChargeKW: 10, socMin: 10, socMax: 90, soc: 10 + ((i * 7) % 80) },
    });
    for (const s of plan.slots) runs.push(Math.round(s.energyStorage.value * 1000) / 1000);
  } else if (kind === 'random runs') {
    while (runs.length < SLOTS) {
      const value = levels[Math.floor(rnd() * levels.length)];
      for (let n = 1 + Math.floor(rnd() * 12); n > 0 && runs.length < SLOTS; n--) runs.push(value);
    }
  } else if (kind === 'every slot') {
    for (let k = 0; k < SLOTS; k++) runs.push(k % 2 ? 4 : -4 + (k % 4) * 0.5);
  } else if (kind === 'hourly') {
    for (let k = 0; k < SLOTS; k++) runs.push(levels[Math.floor(k / 4) % levels.length]);
  } else {
    for (let k = 0; k < SLOTS; k++) runs.push(-2);
  }
  return { kind, values: runs };
}

/** Runs of identical consecutive values: [first, last] slot indices (the changes of setting). */
function runsOf(values) {
  const runs = [];
  values.forEach((x, k) => (k > 0 && values[k - 1] === x ? (runs[runs.length - 1][1] = k) : runs.push([k, k])));
  return runs;
}

/** Real-time wait (setImmediate is not faked) until `done()` or SETTLE_MS. */
async function settle(done) {
  const start = process.hrtime.bigint();
  while (!done()) {
    if (Number(process.hrtime.bigint() - start) / 1e6 > SETTLE_MS) return false;
    await new Promise((r) => setImmediate(r));
  }
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r)); // the last callbacks
  return true;
}

async function scenario(verify) {
  const sites = fleetSites(NODES);
  // Tomorrow's local midnight (real time): every validUntil lies ahead of any real clock too.
  const midnight = new Date();
  midnight.setHours(24, 0, 0, 0);
  const t0 = midnight.getTime();
  await red.start();
  const real = { setTimeout: global.setTimeout, clearTimeout: global.clearTimeout };
  const clock = FakeTimers.install({ now: t0 - 10 * 60_000, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
  // Timers of the schedule's code, by the stack that created them.
  const live = new Set();
  let created = 0;
  let peak = 0; // the most live at any moment, also between the samples
  const fakeSet = global.setTimeout;
  const fakeClear = global.clearTimeout;
  global.setTimeout = function (fn, ms, ...args) {
    const mine = SCHEDULE_CODE.test(new Error().stack || '');
    const id = fakeSet(
      (...a) => {
        live.delete(id);
        fn(...a);
      },
      ms,
      ...args,
    );
    if (mine) {
      live.add(id);
      created++;
      peak = Math.max(peak, live.size);
    }
    return id;
  };
  global.clearTimeout = function (id) {
    live.delete(id);
    return fakeClear(id);
  };

  const sim = await startSimulator({ port: 0, seed: 1, sites });
  const schedules = sites.map((_, i) => valuesFor(i, t0));
  const flow = [
    {
      id: 'cfg',
      type: 'ems-partner-config',
      baseUrl: sim.url,
      simulator: false,
      authType: 'none',
      retries: 0,
      coalesceMs: 0,
    },
    { id: 'catch', type: 'catch', scope: null, uncaught: false, wires: [['errs']] },
    { id: 'sent', type: 'helper' },
    { id: 'reports', type: 'helper' },
    { id: 'errs', type: 'helper' },
    ...sites.map((s, i) => ({
      id: `s${i}`,
      type: 'ems-schedule',
      server: 'cfg',
      site: s.siteReference,
      siteType: 'str',
      essUnit: 'kW',
      curtailmentUnit: 'kW',
      gridUnit: 'kW',
      maxEssPower: 10_000,
      maxCurtailment: 0,
      maxGridPower: '',
      maxGridLimit: '',
      allowMaximizeGridImport: true,
      pvPeakPower: '',
      store: '',
      dryRun: false,
      verify,
      batteryDevice: s.battery.deviceReference,
      batteryDeviceType: 'str',
      pvDevice: '',
      pvDeviceType: 'str',
      meterDevice: '',
      meterDeviceType: 'str',
      tolerance: 10,
      toleranceMin: 1000,
      wires: [['sent'], ['reports']],
    })),
  ];
  // The coalescer's window is a timer the fake clock would hold: coalesceMs 0 (each read at once).
  await red.load(
    flow,
    [],
    [require(path.join(DIST, 'nodes', 'ems-schedule.js')), require(path.join(CORE, 'core', 'common', '25-catch.js'))],
  );
  const sent = red.counter('sent');
  const reports = red.counter('reports');
  const errs = red.counter('errs');
  const followed = {};
  const kindOf = new Map(sites.map((s, i) => [s.siteReference, schedules[i].kind]));
  red.getNode('reports').on('input', (msg) => {
    const key = `${kindOf.get(msg.site)}: ${msg.payload.followed}`;
    followed[key] = (followed[key] || 0) + 1;
  });
  let firstError;
  red.getNode('errs').on('input', (msg) => {
    firstError = firstError || msg.error?.message;
  });

  const runs = schedules.map((s) => runsOf(s.values));
  const changes = runs.reduce((n, r) => n + r.length, 0);
  const cpu0 = selfCpuMs();
  const wall0 = process.hrtime.bigint();
  for (let i = 0; i < NODES; i++) {
    red.getNode(`s${i}`).receive({
      payload: schedules[i].values.map((v, k) => ({
        start: t0 + k * QUARTER_MS,
        end: t0 + (k + 1) * QUARTER_MS,
        energyStorage: v,
      })),
    });
  }
  await settle(() => live.size >= NODES); // each node took its schedule: a timer for its first run
  const samples = [];
  const sample = () => samples.push({ at: Date.now(), live: live.size, all: clock.countTimers() });
  sample();
  const pending = [];
  for (let k = 0; k <= SLOTS; k++) {
    const at = t0 + k * QUARTER_MS;
    await clock.tickAsync(at - Date.now());
    const expectSent = runs.reduce((n, r) => n + r.filter(([first]) => first < k + 1).length, 0);
    const expectReports = verify ? NODES * k : 0;
    const ok = await settle(() => sent.n >= expectSent && reports.n >= expectReports);
    if (!ok)
      pending.push(
        `${new Date(at).toISOString()}: ${sent.n}/${expectSent} sent, ${reports.n}/${expectReports} reports`,
      );
    if (k < SLOTS) sample();
  }
  const wallS = Number(process.hrtime.bigint() - wall0) / 1e9;
  const cpuMs = selfCpuMs() - cpu0;
  const afterDay = live.size;
  const peakOfDay = peak;

  // Per node: the steering requests for its site, against its runs.
  const log = sim.sim.requestLog.filter((e) => /^POST \/sites\/:ref\/steering/.test(e.route));
  const reads = sim.sim.requestLog.filter((e) => e.method === 'GET').length;
  let atStart = 0;
  let untilEnd = 0;
  let overRuns = 0;
  const byKind = {};
  sites.forEach((s, i) => {
    const mine = log.filter((e) => e.path.includes(`/sites/${s.siteReference}/`));
    const siteRuns = runs[i];
    if (mine.length > siteRuns.length) overRuns += mine.length - siteRuns.length;
    mine.forEach((e, j) => {
      if (siteRuns[j] && e.time === t0 + siteRuns[j][0] * QUARTER_MS) atStart++;
      if (siteRuns[j] && e.body && e.body.validUntil === t0 + (siteRuns[j][1] + 1) * QUARTER_MS) untilEnd++;
    });
    const kind = schedules[i].kind;
    byKind[kind] = byKind[kind] || { nodes: 0, changes: 0, requests: 0 };
    byKind[kind].nodes++;
    byKind[kind].changes += siteRuns.length;
    byKind[kind].requests += mine.length;
  });
  const playing = samples.filter((x) => x.at >= t0 && x.at < t0 + SLOTS * QUARTER_MS);
  const maxLive = Math.max(...samples.map((x) => x.live));
  const exactlyOne = playing.every((x) => x.live === NODES);

  clock.uninstall();
  Object.assign(global, real);
  await red.stop();
  await sim.close();
  return {
    name: `${NODES} nodes, check ${verify ? 'on' : 'off'}`,
    row: {
      slots: NODES * SLOTS,
      'changes of setting': changes,
      'steering requests': log.length,
      "sent at the run's start": atStart,
      "valid until the run's end": untilEnd,
      'schedule timers (max live)': maxLive,
      'timers per node': round(maxLive / NODES, 2),
      'reads (GET)': reads,
      reports: reports.n,
      'wall s for the day': round(wallS, 1),
      'CPU ms': Math.round(cpuMs),
    },
    byKind,
    changes,
    requests: log.length,
    atStart,
    untilEnd,
    overRuns,
    maxLive,
    exactlyOne,
    afterDay,
    timersCreated: created,
    peak: peakOfDay,
    followed,
    errors: errs.n,
    firstError,
    pending,
    samples: playing.length,
    maxAllTimers: Math.max(...samples.map((x) => x.all)),
  };
}

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 90_000, 'schedule');
  const off = await scenario(false);
  const on = await scenario(true);
  const both = [off, on];
  const req = both
    .map((x) => `${x.requests} requests for ${x.changes} changes (check ${x === on ? 'on' : 'off'})`)
    .join('; ');
  output({
    id: 'schedule',
    title: 'Schedules',
    machine: machine(),
    settings: {
      nodes: NODES,
      slotsPerNode: SLOTS,
      slot: '15 min',
      maxValidity: 'default (1440 min)',
      coalesceMs: '0 (fake clock)',
      clock: '@sinonjs/fake-timers, simulator in process',
    },
    alternatives: Object.fromEntries(both.map((x) => [x.name, x.row])),
    results: {
      'changes / requests by kind of schedule (check off)': Object.entries(off.byKind)
        .map(([k, v]) => `${k}: ${v.nodes} nodes, ${v.changes} changes, ${v.requests} requests`)
        .join('; '),
      'reports by kind of schedule and verdict (check on)':
        Object.entries(on.followed)
          .sort()
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || 'none',
      'all fake timers (max, runtime included)': both.map((x) => x.maxAllTimers).join(' / '),
      'schedule timers created over the day': both.map((x) => x.timersCreated).join(' / '),
      'schedule timers live at any moment (max, between samples too)': both.map((x) => x.peak).join(' / '),
      'live schedule timers after the day': both.map((x) => x.afterDay).join(' / '),
      'quarter hours that did not settle': both.flatMap((x) => x.pending).join('; ') || 'none',
      errors: both.map((x) => x.errors + (x.firstError ? ` (${x.firstError})` : '')).join(' / '),
    },
    goals: [
      {
        goal: 'a 96-slot schedule costs at most one request per change of setting',
        measured: req,
        met: both.every((x) => x.requests <= x.changes && x.overRuns === 0 && x.errors === 0),
      },
      {
        goal: "every request sent at its run's start, valid until the run's end",
        measured: both.map((x) => `${x.atStart} and ${x.untilEnd} of ${x.requests}`).join('; '),
        met: both.every((x) => x.atStart === x.requests && x.untilEnd === x.requests && x.requests === x.changes),
      },
      {
        goal: 'timers stay at one per node',
        measured: both
          .map(
            (x) =>
              `max ${x.maxLive} live for ${NODES} nodes over ${x.samples} quarter hours${x.exactlyOne ? ', exactly one per node throughout' : ''}`,
          )
          .join('; '),
        met: both.every((x) => x.maxLive <= NODES && x.peak <= NODES && x.afterDay === 0),
      },
      {
        goal: 'with the check on, a report per slot',
        measured: `${on.row.reports} reports for ${NODES * SLOTS} slots`,
        met: on.row.reports === NODES * SLOTS,
      },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
