'use strict';
/**
 * Benchmark: the site planner on a real battery and meter (charge or discharge, import or
 * export, never both), side by side with the MILP oracle of its tests: HiGHS (the `highs`
 * package, WebAssembly; a binary per slot for charge or discharge and one for import or export),
 * on the same problem, from the same numbers. Seeded random days (96 quarter hours) and weeks
 * (672) with every input kind: spot prices through import and export formulas, PV and load
 * forecasts, per-slot grid limits, the site's export limit and peak cost, both efficiencies,
 * wear, a SOC target, an end value; and days of negative-price middays under a fixed feed-in
 * tariff above them (where the never-both rules bind). Each problem is planned by planSite
 * (input checks, solver, reasons: what a caller pays) and solved by HiGHS (its time includes
 * reading the LP text, not building it), once per problem, planSite five times around it, after a
 * warm-up; a problem's time is the median of its runs, and the figures are the median (and the slowest)
 * over the problems. The objectives are compared on every problem.
 * Goals: 96 slots ≤ 20 ms median and ≤ 40 ms slowest, 672 slots ≤ 300 ms median, objective
 * within 0.01 % of the MILP.
 */
const path = require('node:path');
const { DIST: BUILT, guard, machine, output, round, median } = require('./lib/common');

/** The compiled package (BENCH_DIST: another build of it, e.g. for a check before `npm run build`). */
const DIST = process.env.BENCH_DIST ? path.resolve(process.env.BENCH_DIST) : BUILT;
const DAYS = Number(process.env.BENCH_PLAN_DAYS) || 20;
const WEEKS = Number(process.env.BENCH_PLAN_WEEKS) || 2;
const RUNS = 5;
const QUARTER_MS = 900_000;
const T0 = Date.UTC(2026, 5, 1);

const { planSite } = require(path.join(DIST, 'plan'));
const { mulberry32 } = require(path.join(DIST, 'simulator', 'prng'));

/** A random problem of n quarter hours: raw numbers (W, kW, EUR/MWh, EUR/kWh). */
function problem(seed, n, fit = false) {
  const random = mulberry32(seed);
  const pvPeak = 3000 + random() * 9000;
  const base = 150 + random() * 600;
  const spot = [];
  const pv = [];
  const load = [];
  for (let k = 0; k < n; k++) {
    const hour = (k / 4) % 24;
    const midday = Math.exp(-(((hour - 13) / 2.5) ** 2));
    spot.push(
      Math.round(
        (90 +
          60 * Math.sin(((hour - 8) / 24) * 2 * Math.PI) +
          40 * Math.exp(-(((hour - 19) / 1.5) ** 2)) -
          (fit ? 200 + 60 * random() : 120 * random()) * midday +
          (random() - 0.5) * 40) *
          100,
      ) / 100,
    );
    pv.push(Math.max(0, pvPeak * Math.sin(((hour - 6) / 14) * Math.PI)) * (0.5 + 0.5 * random()));
    load.push(base + (hour >= 17 && hour < 22 ? 1500 * random() : 0) + (random() < 0.05 ? 3000 * random() : 0));
  }
  const imp = { multiplier: 1, fee: 0.12 + random() * 0.1, vat: 1.19 };
  const exp = fit ? { multiplier: 0, fee: 0.08, vat: 1 } : { multiplier: 0.9, fee: 0, vat: 1 };
  const capacityKWh = 8 + random() * 20;
  const battery = {
    capacityKWh,
    maxChargeKW: 3 + random() * 7,
    maxDischargeKW: 3 + random() * 7,
    socMin: 10,
    socMax: 95,
    chargeEfficiency: 0.95,
    dischargeEfficiency: 0.95,
    cycleCost: 0.02,
    soc: 20 + random() * 60,
    endValue: 0.1,
    socTarget: { soc: 60, time: T0 + (28 + Math.floor(random() * 8)) * QUARTER_MS },
  };
  return {
    prices: spot.map((value, k) => ({ start: T0 + k * QUARTER_MS, value })),
    priceUnit: 'EUR/MWh',
    importFormula: imp,
    exportFormula: exp,
    pvForecast: pv,
    loadForecast: load,
    gridImportMax: load.map((l, k) =>
      random() < 0.3 ? Math.round(Math.max(0, l - pv[k]) + 3000 + random() * 5000) : null,
    ),
    gridExportMax: load.map(() => (random() < 0.3 ? Math.round(1000 + random() * 5000) : null)),
    site: { exportLimitW: 4000 + Math.round(random() * 4000), peakCost: 0.1 + random() * 0.5 },
    battery,
  };
}

/** The same problem as a MILP in LP text (from the raw numbers; binaries: charge or discharge, import or export per slot). */
function milpOf(p) {
  const slotCount = p.prices.length;
  const dt = 0.25;
  const battery = p.battery;
  const cap = battery.capacityKWh;
  const e0 = (battery.soc / 100) * cap;
  const price = (f, spot) => ((spot / 1000) * f.multiplier + f.fee) * f.vat;
  const target = Math.round((battery.socTarget.time - T0) / QUARTER_MS);
  const num = (v) => (Number.isInteger(v) ? String(v) : v.toPrecision(15));
  const expr = (terms) =>
    terms
      .filter(([a]) => a !== 0)
      .map(([a, v], j) => `${a < 0 ? ' - ' : j ? ' + ' : ' '}${num(Math.abs(a))} ${v}`)
      .join('');
  const obj = [];
  const rows = [];
  const bounds = [];
  const bins = [];
  for (let k = 0; k < slotCount; k++) {
    const pv = p.pvForecast[k] / 1000;
    const load = p.loadForecast[k] / 1000;
    const mi = Math.min((p.gridImportMax[k] ?? Infinity) / 1000, load + battery.maxChargeKW);
    const mx = Math.min(
      Math.min(p.gridExportMax[k] ?? Infinity, p.site.exportLimitW) / 1000,
      pv + battery.maxDischargeKW,
    );
    bounds.push(
      `0 <= c${k} <= ${num(battery.maxChargeKW)}`,
      `0 <= d${k} <= ${num(battery.maxDischargeKW)}`,
      `0 <= u${k} <= ${num(pv)}`,
      `0 <= i${k} <= ${num(mi)}`,
      `0 <= x${k} <= ${num(mx)}`,
    );
    const lb = Math.max((battery.socMin / 100) * cap, k + 1 === target ? (battery.socTarget.soc / 100) * cap : 0);
    bounds.push(`${num(lb)} <= e${k + 1} <= ${num((battery.socMax / 100) * cap)}`);
    bins.push(`zb${k}`, `zg${k}`);
    rows.push(
      `cb${k}:${expr([
        [1, `c${k}`],
        [-battery.maxChargeKW, `zb${k}`],
      ])} <= 0`,
      `db${k}:${expr([
        [1, `d${k}`],
        [battery.maxDischargeKW, `zb${k}`],
      ])} <= ${num(battery.maxDischargeKW)}`,
    );
    rows.push(
      `ig${k}:${expr([
        [1, `i${k}`],
        [-mi, `zg${k}`],
      ])} <= 0`,
      `xg${k}:${expr([
        [1, `x${k}`],
        [mx, `zg${k}`],
      ])} <= ${num(mx)}`,
    );
    rows.push(
      `bal${k}:${expr([
        [-1, `u${k}`],
        [1, `i${k}`],
        [1, `d${k}`],
        [-1, `x${k}`],
        [-1, `c${k}`],
      ])} = ${num(load - pv)}`,
    );
    const soc = [
      [1, `e${k + 1}`],
      [-dt * battery.chargeEfficiency, `c${k}`],
      [dt / battery.dischargeEfficiency, `d${k}`],
    ];
    if (k > 0) soc.push([-1, `e${k}`]);
    rows.push(`soc${k}:${expr(soc)} = ${num(k === 0 ? e0 : 0)}`);
    rows.push(
      `pk${k}:${expr([
        [1, `i${k}`],
        [-1, 'P'],
      ])} <= 0`,
    );
    obj.push(
      [dt * price(p.importFormula, p.prices[k].value), `i${k}`],
      [-dt * price(p.exportFormula, p.prices[k].value), `x${k}`],
      [dt * battery.cycleCost, `c${k}`],
      [dt * battery.cycleCost, `d${k}`],
    );
  }
  obj.push([p.site.peakCost, 'P'], [-battery.endValue, `e${slotCount}`]);
  bounds.push('P >= 0');
  const lp = `Minimize\n obj:${expr(obj)}\nSubject To\n ${rows.join('\n ')}\nBounds\n ${bounds.join('\n ')}\nBinary\n ${bins.join(' ')}\nEnd\n`;
  return { lp, offset: battery.endValue * e0 };
}

const ms = (f) => {
  const start = process.hrtime.bigint();
  const value = f();
  return { v: value, ms: Number(process.hrtime.bigint() - start) / 1e6 };
};

/** Times every problem of a size: planSite the median of `runs` runs, HiGHS one solve, per problem. */
function measure(highs, seeds, n, fit = false, runs = RUNS) {
  const ours = [];
  const theirs = [];
  const passes = [];
  let worst = 0;
  for (const seed of seeds) {
    const input = problem(seed, n, fit);
    const { lp, offset } = milpOf(input);
    const oursMs = [];
    const highsMs = [];
    let plan;
    let optimum;
    // HiGHS once per problem (it takes seconds: its time dwarfs any noise), planSite `runs` times around it
    for (let run = 0; run < runs; run++) {
      const timed = ms(() => planSite(input));
      oursMs.push(timed.ms);
      plan = timed.v;
      if (run !== Math.floor(runs / 2)) continue;
      const solved = ms(() => highs.solve(lp, { mip_rel_gap: 1e-9, mip_abs_gap: 1e-10 }));
      highsMs.push(solved.ms);
      if (solved.v.Status !== 'Optimal') throw new Error(`seed ${seed}: HiGHS status ${solved.v.Status}`);
      optimum = solved.v.ObjectiveValue + offset;
    }
    ours.push(median(oursMs));
    theirs.push(median(highsMs));
    passes.push(plan.solver.passes);
    worst = Math.max(worst, Math.abs(plan.cost.total - optimum) / Math.max(1e-2, Math.abs(optimum)));
  }
  return { ours, theirs, passes, worst };
}

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 280_000, 'plan');
  const highs = await require('highs')();
  // warm-up: both solvers, both sizes
  measure(highs, [9001, 9002], 96);
  const day = measure(
    highs,
    Array.from({ length: DAYS }, (_, i) => 1 + i),
    96,
  );
  const fit = measure(
    highs,
    Array.from({ length: DAYS / 2 }, (_, i) => 201 + i),
    96,
    true,
  );
  const week = measure(
    highs,
    Array.from({ length: WEEKS }, (_, i) => 101 + i),
    672,
  );
  const row = (r) => ({
    'planSite (ms, median)': round(median(r.ours), 2),
    'planSite (ms, slowest)': round(Math.max(...r.ours), 2),
    'HiGHS MILP (ms, median)': round(median(r.theirs), 2),
    'HiGHS (ms, slowest)': round(Math.max(...r.theirs), 2),
    'HiGHS / planSite (median of ratios)': round(median(r.ours.map((x, i) => r.theirs[i] / x)), 1),
    'DP passes (median)': median(r.passes),
    'DP passes (most)': Math.max(...r.passes),
    'objective, largest relative difference': r.worst.toExponential(1),
  });
  const all = [...day.ours, ...fit.ours];
  const dMed = median(all);
  const dMax = Math.max(...all);
  const wMed = median(week.ours);
  const worst = Math.max(day.worst, fit.worst, week.worst);
  output({
    id: 'plan',
    title: 'Site planner against the MILP oracle (HiGHS)',
    machine: machine(),
    settings: {
      days: `${DAYS} × 96 quarter hours, and ${DAYS / 2} with negative-price middays under a fixed feed-in tariff of 0.08`,
      weeks: `${WEEKS} × 672 quarter hours`,
      runs: `planSite ${RUNS} times per problem around one HiGHS solve, after a warm-up`,
      inputs:
        'spot feed (EUR/MWh) with import and export formulas, PV and load forecasts, per-slot grid limits, site export limit, peak cost, charge and discharge efficiency, cycle cost, SOC target, end value',
      highs: `highs ${JSON.parse(require('node:fs').readFileSync(path.join(__dirname, '..', 'node_modules', 'highs', 'package.json'), 'utf8')).version} (HiGHS MILP, WebAssembly; relative gap 1e-9)`,
    },
    alternatives: {
      'one day (96 slots)': row(day),
      'one day, feed-in tariff above negative middays (96 slots)': row(fit),
      'one week (672 slots)': row(week),
    },
    goals: [
      {
        goal: '96 slots with all inputs: at most 20 ms (median)',
        measured: `${round(dMed, 2)} ms (HiGHS ${round(median([...day.theirs, ...fit.theirs]), 2)} ms)`,
        met: dMed <= 20,
      },
      { goal: '96 slots with all inputs: at most 40 ms (slowest)', measured: `${round(dMax, 2)} ms`, met: dMax <= 40 },
      {
        goal: '672 slots (a week): at most 300 ms (median)',
        measured: `${round(wMed, 2)} ms (slowest ${round(Math.max(...week.ours), 2)} ms; HiGHS ${round(median(week.theirs), 2)} ms)`,
        met: wMed <= 300,
      },
      {
        goal: 'objective within 0.01 % of the MILP on every problem',
        measured: `largest relative difference ${worst.toExponential(1)} over ${DAYS + DAYS / 2 + WEEKS} problems`,
        met: worst <= 1e-4,
      },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
