'use strict';
/**
 * Benchmark 3, long time series. One year of hourly data (13 spans of at most 30 days) of one
 * property, with 50 ms of latency added by the simulator to every request, fetched by
 * EmsClient.getTimeSeriesRange (spans in parallel up to the client's concurrency: the default
 * 6, and 8) against the same spans fetched one after another and merged. Also times one span
 * alone (the round trip) and the merge of the 13 answers. Rounds rotate the order; medians.
 */
const path = require('node:path');
const { DIST, guard, machine, median, output, round, startServer } = require('./lib/common');

const { EmsClient, HOUR_MS, mergeSeries } = require(path.join(DIST, 'index.js'));
const { splitRange } = require(path.join(DIST, 'protocol', 'time.js')); // internal since the public entry was curated
const { DEFAULT_SITES } = require(path.join(DIST, 'simulator'));

const LATENCY_MS = 50;
const ROUNDS = 5;
const CONCURRENCY = 6;
const WIDER = 8;

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 120_000, 'time-series');
  const sim = await startServer({ mode: 'sim', latencyMs: LATENCY_MS });
  const client = new EmsClient({ baseUrl: sim.url, concurrency: CONCURRENCY });
  const wide = new EmsClient({ baseUrl: sim.url, concurrency: WIDER });
  const device = DEFAULT_SITES[0].battery.deviceReference;
  const property = 'totalEnergyConsumed';
  // A year that ended before the simulator started: the answers are the same every time.
  const end = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - HOUR_MS;
  const start = end - 365 * 24 * HOUR_MS;
  const spans = splitRange(start, end, HOUR_MS);
  const request = (s, e) => ({ property, start: s, end: e, resolutionHours: 1 });

  const timed = async (fn) => {
    const t0 = process.hrtime.bigint();
    const result = await fn();
    return { ms: Number(process.hrtime.bigint() - t0) / 1e6, r: result };
  };
  const parallel = () => client.getTimeSeriesRange(device, request(start, end));
  const parallelWide = () => wide.getTimeSeriesRange(device, request(start, end));
  const sequential = async () => {
    const parts = [];
    for (const s of spans) parts.push(await client.getTimeSeries(device, request(s.start, s.end)));
    return mergeSeries(parts, start, end);
  };
  const single = () => client.getTimeSeries(device, request(spans[0].start, spans[0].end));

  const runs = { parallel, parallelWide, sequential };
  for (const run of Object.values(runs)) await run(); // warm-up: connections, JIT, the simulator's baseline
  const times = { single: [], parallel: [], parallelWide: [], sequential: [] };
  let reference;
  let differing = 0;
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < 3; k++) times.single.push((await timed(single)).ms);
    const names = Object.keys(runs);
    for (const name of names.slice(r % 3).concat(names.slice(0, r % 3))) {
      const { ms, r: series } = await timed(runs[name]);
      times[name].push(ms);
      const key = JSON.stringify(series);
      if (reference === undefined) reference = key;
      else if (key !== reference) differing++;
    }
  }
  const points = JSON.parse(reference).time.length;

  // The merge alone, on the 13 answers of one fetch.
  const parts = [];
  for (const s of spans) parts.push(await client.getTimeSeries(device, request(s.start, s.end)));
  const mergeMs = [];
  for (let i = 0; i < 20; i++) mergeMs.push((await timed(async () => mergeSeries(parts, start, end))).ms);

  client.close();
  wide.close();
  await sim.stop();
  const rt = median(times.single);
  const par = median(times.parallel);
  const parW = median(times.parallelWide);
  const seq = median(times.sequential);
  const trips = Math.ceil(spans.length / CONCURRENCY);
  const tripsW = Math.ceil(spans.length / WIDER);
  const bound = 1.3 * trips * rt;
  const boundW = 1.3 * tripsW * rt;
  output({
    id: 'time-series',
    title: 'Long time series',
    machine: machine(),
    settings: {
      spans: spans.length,
      points,
      latencyMs: LATENCY_MS,
      concurrency: [CONCURRENCY, WIDER],
      rounds: ROUNDS,
      property,
    },
    alternatives: {
      'one span (round trip)': { medianMs: round(rt, 1) },
      'getTimeSeriesRange, concurrency 6 (default)': {
        medianMs: round(par, 1),
        msPerRound: times.parallel.map((x) => round(x, 1)),
      },
      'getTimeSeriesRange, concurrency 8': {
        medianMs: round(parW, 1),
        msPerRound: times.parallelWide.map((x) => round(x, 1)),
      },
      'spans one after another': { medianMs: round(seq, 1), msPerRound: times.sequential.map((x) => round(x, 1)) },
      'merge of the 13 answers': { medianMs: round(median(mergeMs), 2) },
    },
    answersDifferingBetweenRuns: differing,
    ratios: {
      'concurrency 6: parallel / (3 round trips)': round(par / (trips * rt)),
      'concurrency 6: sequential / parallel': round(seq / par),
      'concurrency 6: ideal sequential / parallel (13 / 3)': round(spans.length / trips),
      'concurrency 8: parallel / (2 round trips)': round(parW / (tripsW * rt)),
      'concurrency 8: sequential / parallel': round(seq / parW),
    },
    goals: [
      {
        goal: `concurrency 6: at most 1.3 x ${trips} round trips (${round(bound, 0)} ms)`,
        measured: `${round(par, 0)} ms = ${round(par / (trips * rt))} x`,
        met: par <= bound,
      },
      {
        goal: 'concurrency 6: at least 4 x faster than one span after another',
        measured: round(seq / par),
        met: seq / par >= 4,
      },
      {
        goal: `concurrency 8: at most 1.3 x ${tripsW} round trips (${round(boundW, 0)} ms)`,
        measured: `${round(parW, 0)} ms = ${round(parW / (tripsW * rt))} x`,
        met: parW <= boundW,
      },
      {
        goal: 'concurrency 8: at least 4 x faster than one span after another',
        measured: round(seq / parW),
        met: seq / parW >= 4,
      },
      {
        goal: 'same series either way',
        measured: `${differing} runs differ; ${points} points`,
        met: differing === 0 && points === 365 * 24,
      },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
