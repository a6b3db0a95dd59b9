'use strict';
/**
 * Benchmark: the site planner (issue 20). Seeded random days (96 quarter hours) and weeks (672)
 * with every input kind: spot prices through import and export formulas, PV and load forecasts,
 * per-slot grid limits, the site's export limit and peak cost, both efficiencies, wear, a SOC
 * target, an end value. Each problem is planned by planSite (input checks, solver, reasons:
 * what a caller pays) and solved by glpk.js (GLPK's simplex in WASM, the dev dependency the
 * tests compare with) on the same LP, built beforehand from the same numbers (GLPK's time
 * includes reading that object, not building it). Runs alternate, ours and GLPK's, after a
 * warm-up; a problem's time is the median of its runs, and the figures are the median (and
 * the slowest) over the problems. The objectives are compared on every problem.
 * Goals: 96 slots ≤ 20 ms and 672 slots ≤ 300 ms (median), objective within 0.01 % of GLPK.
 */
const path = require('node:path');
const { DIST: BUILT, guard, machine, output, round, median } = require('./lib/common');

/** The compiled package (BENCH_DIST: another build of it, e.g. for a check before `npm run build`). */
const DIST = process.env.BENCH_DIST ? path.resolve(process.env.BENCH_DIST) : BUILT;
const DAYS = Number(process.env.BENCH_PLAN_DAYS) || 40;
const WEEKS = Number(process.env.BENCH_PLAN_WEEKS) || 6;
const RUNS = 5;
const Q = 900_000;
const T0 = Date.UTC(2026, 5, 1);

const { planSite } = require(path.join(DIST, 'plan'));
const { mulberry32 } = require(path.join(DIST, 'simulator', 'prng'));

/** A random problem of n quarter hours: raw numbers (W, kW, EUR/MWh, EUR/kWh). */
function problem(seed, n) {
  const r = mulberry32(seed);
  const pvPeak = 3000 + r() * 9000;
  const base = 150 + r() * 600;
  const spot = [];
  const pv = [];
  const load = [];
  for (let k = 0; k < n; k++) {
    const h = (k / 4) % 24;
    const midday = Math.exp(-(((h - 13) / 2.5) ** 2));
    spot.push(Math.round((90 + 60 * Math.sin(((h - 8) / 24) * 2 * Math.PI) + 40 * Math.exp(-(((h - 19) / 1.5) ** 2)) - 120 * r() * midday + (r() - 0.5) * 40) * 100) / 100);
    pv.push(Math.max(0, pvPeak * Math.sin(((h - 6) / 14) * Math.PI)) * (0.5 + 0.5 * r()));
    load.push(base + (h >= 17 && h < 22 ? 1500 * r() : 0) + (r() < 0.05 ? 3000 * r() : 0));
  }
  const imp = { multiplier: 1, fee: 0.12 + r() * 0.1, vat: 1.19 };
  const exp = { multiplier: 0.9, fee: 0, vat: 1 };
  const capacityKWh = 8 + r() * 20;
  const battery = {
    capacityKWh, maxChargeKW: 3 + r() * 7, maxDischargeKW: 3 + r() * 7, socMin: 10, socMax: 95,
    chargeEfficiency: 0.95, dischargeEfficiency: 0.95, cycleCost: 0.02, soc: 20 + r() * 60, endValue: 0.1,
    socTarget: { soc: 60, time: T0 + (28 + Math.floor(r() * 8)) * Q },
  };
  return {
    n, prices: spot.map((value, k) => ({ start: T0 + k * Q, value })), priceUnit: 'EUR/MWh', importFormula: imp, exportFormula: exp,
    pvForecast: pv, loadForecast: load,
    gridImportMax: load.map((l, k) => (r() < 0.3 ? Math.round(Math.max(0, l - pv[k]) + 3000 + r() * 5000) : null)),
    gridExportMax: load.map(() => (r() < 0.3 ? Math.round(1000 + r() * 5000) : null)),
    site: { exportLimitW: 4000 + Math.round(r() * 4000), peakCost: 0.1 + r() * 0.5 },
    battery,
  };
}

/** The same problem as GLPK's LP (variables per slot: charge, discharge, curtailment, import, export, stored energy; and the peak). */
function lpOf(glpk, p) {
  const dt = 0.25;
  const b = p.battery;
  const cap = b.capacityKWh;
  const e0 = (b.soc / 100) * cap;
  const price = (f, spot) => ((spot / 1000) * f.multiplier + f.fee) * f.vat;
  const target = Math.round((b.socTarget.time - T0) / Q);
  const obj = [];
  const rows = [];
  const bounds = [];
  const bound = (name, lb, ub) => bounds.push({ name, type: ub === Infinity ? glpk.GLP_LO : glpk.GLP_DB, lb, ub: ub === Infinity ? 0 : ub });
  for (let k = 0; k < p.n; k++) {
    const pv = p.pvForecast[k] / 1000;
    const load = p.loadForecast[k] / 1000;
    bound(`c${k}`, 0, b.maxChargeKW);
    bound(`d${k}`, 0, b.maxDischargeKW);
    bound(`u${k}`, 0, pv);
    bound(`i${k}`, 0, (p.gridImportMax[k] ?? Infinity) / 1000);
    bound(`x${k}`, 0, Math.min(p.gridExportMax[k] ?? Infinity, p.site.exportLimitW) / 1000);
    bound(`e${k + 1}`, Math.max((b.socMin / 100) * cap, k + 1 === target ? (b.socTarget.soc / 100) * cap : 0), (b.socMax / 100) * cap);
    obj.push({ name: `i${k}`, coef: dt * price(p.importFormula, p.prices[k].value) }, { name: `x${k}`, coef: -dt * price(p.exportFormula, p.prices[k].value) });
    obj.push({ name: `c${k}`, coef: dt * b.cycleCost }, { name: `d${k}`, coef: dt * b.cycleCost });
    rows.push({ name: `bal${k}`, vars: [{ name: `u${k}`, coef: -1 }, { name: `i${k}`, coef: 1 }, { name: `d${k}`, coef: 1 }, { name: `x${k}`, coef: -1 }, { name: `c${k}`, coef: -1 }], bnds: { type: glpk.GLP_FX, lb: load - pv, ub: load - pv } });
    const soc = [{ name: `e${k + 1}`, coef: 1 }, { name: `c${k}`, coef: -dt * b.chargeEfficiency }, { name: `d${k}`, coef: dt / b.dischargeEfficiency }];
    if (k > 0) soc.push({ name: `e${k}`, coef: -1 });
    rows.push({ name: `soc${k}`, vars: soc, bnds: { type: glpk.GLP_FX, lb: k === 0 ? e0 : 0, ub: k === 0 ? e0 : 0 } });
    rows.push({ name: `pk${k}`, vars: [{ name: `i${k}`, coef: 1 }, { name: 'P', coef: -1 }], bnds: { type: glpk.GLP_UP, lb: 0, ub: 0 } });
  }
  bound('P', 0, Infinity);
  obj.push({ name: 'P', coef: p.site.peakCost }, { name: `e${p.n}`, coef: -b.endValue });
  return { lp: { name: 'plan', objective: { direction: glpk.GLP_MIN, name: 'cost', vars: obj }, subjectTo: rows, bounds }, offset: b.endValue * e0 };
}

const ms = (f) => {
  const t = process.hrtime.bigint();
  const v = f();
  return { v, ms: Number(process.hrtime.bigint() - t) / 1e6 };
};

/** Times every problem of a size: per problem the median of RUNS runs each, alternating. */
function measure(glpk, seeds, n) {
  const ours = [];
  const theirs = [];
  const passes = [];
  let worst = 0;
  for (const seed of seeds) {
    const p = problem(seed, n);
    const { lp, offset } = lpOf(glpk, p);
    const a = [];
    const b = [];
    let plan;
    let z;
    for (let run = 0; run < RUNS; run++) {
      const x = ms(() => planSite(p));
      const y = ms(() => glpk.solve(lp, { msglev: glpk.GLP_MSG_OFF }));
      a.push(x.ms);
      b.push(y.ms);
      plan = x.v;
      if (y.v.result.status !== glpk.GLP_OPT) throw new Error(`seed ${seed}: GLPK status ${y.v.result.status}`);
      z = y.v.result.z + offset;
    }
    ours.push(median(a));
    theirs.push(median(b));
    passes.push(plan.solver.passes);
    worst = Math.max(worst, Math.abs(plan.cost.total - z) / Math.max(1e-2, Math.abs(z)));
  }
  return { ours, theirs, passes, worst };
}

async function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 120_000, 'plan');
  const glpk = await (await import('glpk.js/node')).default();
  // warm-up: both solvers, both sizes
  measure(glpk, [9001, 9002, 9003], 96);
  measure(glpk, [9004], 672);
  const day = measure(glpk, Array.from({ length: DAYS }, (_, i) => 1 + i), 96);
  const week = measure(glpk, Array.from({ length: WEEKS }, (_, i) => 101 + i), 672);
  const row = (r) => ({
    'planSite (ms, median)': round(median(r.ours), 2),
    'planSite (ms, slowest)': round(Math.max(...r.ours), 2),
    'GLPK simplex (ms, median)': round(median(r.theirs), 2),
    'GLPK (ms, slowest)': round(Math.max(...r.theirs), 2),
    'GLPK / planSite (median of ratios)': round(median(r.ours.map((x, i) => r.theirs[i] / x)), 1),
    'DP passes (median)': median(r.passes),
    'objective, largest relative difference': r.worst.toExponential(1),
  });
  const dMed = median(day.ours);
  const wMed = median(week.ours);
  const worst = Math.max(day.worst, week.worst);
  output({
    id: 'plan',
    title: 'Site planner against GLPK',
    machine: machine(),
    settings: { days: `${DAYS} × 96 quarter hours`, weeks: `${WEEKS} × 672 quarter hours`, runs: `${RUNS} per problem, alternating, after a warm-up`, inputs: 'spot feed (EUR/MWh) with import and export formulas, PV and load forecasts, per-slot grid limits, site export limit, peak cost, charge and discharge efficiency, cycle cost, SOC target, end value', glpk: `glpk.js (GLPK ${glpk.version}, simplex, presolver on, messages off)` },
    alternatives: { 'one day (96 slots)': row(day), 'one week (672 slots)': row(week) },
    goals: [
      { goal: '96 slots with all inputs: at most 20 ms (median)', measured: `${round(dMed, 2)} ms (slowest ${round(Math.max(...day.ours), 2)} ms; GLPK ${round(median(day.theirs), 2)} ms)`, met: dMed <= 20 },
      { goal: '672 slots (a week): at most 300 ms (median)', measured: `${round(wMed, 2)} ms (slowest ${round(Math.max(...week.ours), 2)} ms; GLPK ${round(median(week.theirs), 2)} ms)`, met: wMed <= 300 },
      { goal: 'objective within 0.01 % of GLPK on every problem', measured: `largest relative difference ${worst.toExponential(1)} over ${DAYS + WEEKS} problems`, met: worst <= 1e-4 },
    ],
  });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
