'use strict';
/**
 * Benchmark: what re-planning earns, the figure that says whether it is worth turning on. One
 * simulated week of the simulator's Home site with its weather and load (src/simulator: profiles.ts
 * and weather.ts, seed 1), on the simulator's own physics (model.ts: dispatch with the battery's
 * rating, its 90 % round trip as √0.9 each way and its SOC window 5-95 %, the contractual grid
 * limits 17 kW / 7 kW, steps of at most a minute), steered as ems-schedule steers it: an ESS
 * setpoint per quarter hour. Prices: the sample day (test/fixtures/prices-sample-day.json, EUR/MWh)
 * repeated with a seeded perturbation; the tariff of example 12: import (spot + 0.15) × 1.19 per
 * kWh, export a fixed 0.08.
 *
 * Realised cost = what the grid meter's counters imported × the import price − exported × the
 * export price, per quarter hour, summed; "with the end SOC" also counts the energy left in the
 * battery at the end against the start at 0.10 per kWh stored.
 *  (a) no battery control: the site's own self-consumption (the simulator without steering);
 *  (b) today's price-only plan (example 09): planFromPrices on the spot prices (10-90 %), planned
 *      at the start and daily at 14:00 for today and tomorrow from the SOC then, played open loop;
 *  (c) perfect foresight: planSite over the whole week with the PV and load that came (quarter-hour
 *      averages), SOC 5-95 %, no wear, end value 0.10, played as (d) plays (self-consumption slots
 *      left to the site); its planned objective is the bound;
 *  (d) the re-planning example (example 12's plan node): planSite each quarter hour from the SOC
 *      read then, over the prices known then (tomorrow's from 14:00), with the load forecast from
 *      the site's own history (loadForecastFromHistory: same weekday and time, last 4 weeks, from
 *      hourly history as the time-series node reads it) and yesterday's PV as PV forecast, end value
 *      0.20; the slot in progress played (what ems-schedule does with the changed part), or, when
 *      the plan's battery just follows PV and load there (selfConsumption), left to the site's own
 *      control (idle: 'self-consumption': no setpoint, the site follows PV and load within the
 *      quarter hour, which a constant setpoint from the forecasts cannot);
 *  (e) the same with perfect forecasts: what the forecasts cost (d − e) and the horizon (e − c);
 *  (f) as (d), every slot steered (idle: 'steer', a node saved before version 3);
 *  (g) the previous release's example 12: as (f) with end value 0.10.
 * BENCH_WEEK=YYYY-MM-DD (a UTC midnight) moves the week; a second week (November) and a third (May, with
 * negative-price middays under the fixed feed-in tariff: export above import) are in the table.
 */
const fs = require('node:fs');
const path = require('node:path');
const { DIST, ROOT, guard, machine, output, round } = require('./lib/common');

const { SiteModel } = require(path.join(DIST, 'simulator', 'model'));
const { DEFAULT_SITES } = require(path.join(DIST, 'simulator', 'sites'));
const { hashString, mulberry32 } = require(path.join(DIST, 'simulator', 'prng'));
const { loadW, pvPotentialW } = require(path.join(DIST, 'simulator', 'profiles'));
const { planFromPrices, planSite, loadForecastFromHistory } = require(path.join(DIST, 'plan'));

const MIN = 60_000;
const QUARTER = 15 * MIN;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const SEED = 1; // the simulator's default seed
const PRICE_SEED = 20;
const HOME = DEFAULT_SITES[1];
const KEY = hashString(HOME.siteReference);
const CAP = HOME.battery.capacityWh / 1000;
const KW = HOME.battery.maxPowerW / 1000;
const FEE = 0.15;
const VAT = 1.19;
const FEED_IN = 0.08;
const END_VALUE = 0.1; // what the figures count a kWh left at the end against the start (and (c)'s and (g)'s plans)
const PLAN_END_VALUE = 0.2; // example 12's end value
const SAMPLE = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'prices-sample-day.json'), 'utf8'));
const importPrice = (spot) => (spot / 1000 + FEE) * VAT;

/**
 * Seeded spot prices (EUR/MWh) per quarter hour from `from` for `days` days: the sample day × a day level + a day shift + noise;
 * `negative`: minus a midday dip of 150-250 (a sunny spring week: middays below the feed-in tariff, some below zero after fees).
 */
function spotPrices(from, days, negative = false) {
  const random = mulberry32(PRICE_SEED);
  const out = [];
  for (let d = 0; d < days; d++) {
    const level = 0.8 + 0.4 * random();
    const shift = (random() - 0.5) * 40;
    const dip = negative ? 150 + 100 * random() : 0;
    for (const s of SAMPLE.slots) {
      const midday = Math.exp(-(((s.offsetMinutes / 60 - 13) / 2) ** 2));
      out.push(
        Math.max(
          negative ? -400 : -80,
          Math.round((s.price * level + shift + (random() - 0.5) * 20 - dip * midday) * 100) / 100,
        ),
      );
    }
  }
  return out.map((value, k) => ({ start: from + k * QUARTER, end: from + (k + 1) * QUARTER, value }));
}

/** Quarter-hour averages (W) of the site's PV potential and load, sampled at each minute as the model integrates them. */
function actuals(from, quarters) {
  const pv = new Float64Array(quarters);
  const load = new Float64Array(quarters);
  for (let q = 0; q < quarters; q++) {
    let pvSum = 0;
    let loadSum = 0;
    for (let m = 0; m < 15; m++) {
      const at = from + q * QUARTER + m * MIN;
      pvSum += pvPotentialW(SEED, KEY, HOME.pv.peakW, at);
      loadSum += loadW(SEED, KEY, HOME.load.profile, HOME.load.minW, HOME.load.maxW, at);
    }
    pv[q] = pvSum / 15;
    load[q] = loadSum / 15;
  }
  return { pv, load };
}

/** Runs the site for the week: `setpoint(t, model)` is the ESS setting (kW, + discharge) for [t, t + Q), or undefined for none. */
function run(T0, prices, setpoint) {
  const model = new SiteModel(HOME, SEED, T0, { historyDays: 0 });
  const e0 = model.storedWh / 1000;
  const b0 = model.battInWh + model.battOutWh;
  let cost = 0;
  let imported = 0;
  let exported = 0;
  for (let q = 0; q < prices.length; q++) {
    const start = T0 + q * QUARTER;
    const kw = setpoint(start, model, q);
    if (kw !== undefined)
      model.steering.applyEss(
        { setting: { value: Math.round(kw * 1000) / 1000, unit: 'kW' }, validUntil: start + QUARTER },
        start,
      );
    const [gi, go] = [model.gridInWh, model.gridOutWh];
    model.advanceTo(start + QUARTER);
    const importedKWh = (model.gridInWh - gi) / 1000;
    const exportedKWh = (model.gridOutWh - go) / 1000;
    imported += importedKWh;
    exported += exportedKWh;
    cost += importedKWh * importPrice(prices[q].value) - exportedKWh * FEED_IN;
  }
  const e1 = model.storedWh / 1000;
  return {
    cost,
    withEnd: cost - END_VALUE * (e1 - e0),
    imported,
    exported,
    throughput: (model.battInWh + model.battOutWh - b0) / 1000,
    socEnd: (e1 / CAP) * 100,
  };
}

/** The prices known at t: today's, and tomorrow's from 14:00 (day-ahead), from t on (the slot in progress included). */
function known(prices, t) {
  const day = Math.floor(t / DAY) * DAY;
  const until = day + (t - day >= 14 * HOUR ? 2 : 1) * DAY;
  return prices.filter((p) => p.end > t && p.start < until);
}

const SITE = { importLimitW: HOME.grid.maxImportW, exportLimitW: HOME.grid.maxExportW };
const FORMULAS = {
  priceUnit: 'MWh',
  importFormula: { fee: FEE, vat: VAT },
  exportFormula: { multiplier: 0, fee: FEED_IN },
};

function week(T0, negative = false) {
  const DAYS = 7;
  const prices = spotPrices(T0, DAYS + 1, negative); // (the day after the week: known from the last day's 14:00)
  const weekPrices = prices.slice(0, DAYS * 96);
  const HIST = 28 * DAY;
  const past = actuals(T0 - HIST, HIST / QUARTER + DAYS * 96 + 96);
  const qi = (t) => Math.round((t - (T0 - HIST)) / QUARTER);
  // The site's load history as the time-series node reads it: hourly averages, before the week and during it.
  const loadHistory = [];
  for (let t = T0 - HIST; t < T0 + (DAYS + 1) * DAY; t += HOUR) {
    const quarter = qi(t);
    loadHistory.push({
      x: t,
      y: (past.load[quarter] + past.load[quarter + 1] + past.load[quarter + 2] + past.load[quarter + 3]) / 4,
    });
  }
  const socOf = (model) => (model.storedWh / HOME.battery.capacityWh) * 100;
  const timings = [];

  // (a) self-consumption
  const selfConsumption = run(T0, weekPrices, () => undefined);

  // (b) price-only plan, daily at 14:00 (and at the start), played open loop
  let bPlan;
  const priceOnly = run(T0, weekPrices, (t, model) => {
    if (t === T0 || t - Math.floor(t / DAY) * DAY === 14 * HOUR) {
      const ps = known(prices, t).map((p) => ({ start: p.start, end: p.end, price: p.value }));
      bPlan = planFromPrices({
        prices: ps,
        priceUnit: 'MWh',
        battery: { capacityKWh: CAP, maxChargeKW: KW, socMin: 10, socMax: 90, efficiency: 0.9, soc: socOf(model) },
        now: t,
      });
    }
    const slot = bPlan.slots.find((x) => x.start <= t && x.end > t);
    return slot ? slot.energyStorage.value : 0;
  });

  // (c) perfect foresight over the week
  const truth = (from, n) => ({
    pv: Array.from({ length: n }, (_, k) => past.pv[qi(from) + k]),
    load: Array.from({ length: n }, (_, k) => past.load[qi(from) + k]),
  });
  const tw = truth(T0, weekPrices.length);
  const cPlan = planSite({
    prices: weekPrices,
    ...FORMULAS,
    pvForecast: tw.pv,
    loadForecast: tw.load,
    site: SITE,
    battery: {
      capacityKWh: CAP,
      maxChargeKW: KW,
      socMin: 5,
      socMax: 95,
      efficiency: 0.9,
      endValue: END_VALUE,
      soc: HOME.battery.initialSoc,
    },
  });
  const foresight = run(T0, weekPrices, (t, _m, q) =>
    cPlan.slots[q].selfConsumption ? undefined : cPlan.slots[q].energyStorage.value,
  );

  // (d) re-planning each quarter hour with forecasts from history; (e) with perfect forecasts
  const mpc = (perfect, selfSlots = true, endValue = PLAN_END_VALUE) =>
    run(T0, weekPrices, (t, model) => {
      const ps = known(prices, t);
      const slots = ps.map((p) => ({ start: Math.max(p.start, t), end: p.end }));
      let pv;
      let load;
      if (perfect) ({ pv, load } = truth(ps[0].start, ps.length));
      else {
        load = loadForecastFromHistory(loadHistory, { slots, weeks: 4 });
        pv = ps.map((p) => {
          const back = p.start - DAY >= t - QUARTER ? 2 * DAY : DAY;
          return past.pv[qi(p.start - back)];
        });
      }
      const t0 = process.hrtime.bigint();
      const plan = planSite({
        prices: ps,
        ...FORMULAS,
        pvForecast: pv,
        loadForecast: load,
        site: SITE,
        now: t,
        battery: {
          capacityKWh: CAP,
          maxChargeKW: KW,
          socMin: 10,
          socMax: 90,
          efficiency: 0.9,
          cycleCost: 0.02,
          endValue,
          soc: socOf(model),
        },
      });
      timings.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const s0 = plan.slots[0];
      if (selfSlots && s0.selfConsumption) return undefined; // left to the site (ems-plan's idle: 'self-consumption')
      return s0.energyStorage.value;
    });
  const replanned = mpc(false);
  const replannedPerfect = mpc(true);
  const allSteered = mpc(false, false);
  const previousExample = mpc(false, false, END_VALUE);
  return {
    a: selfConsumption,
    b: priceOnly,
    c: foresight,
    d: replanned,
    e: replannedPerfect,
    f: allSteered,
    g: previousExample,
    bound: cPlan.cost.total,
    plans: timings.length / 4,
    planMs: timings.sort((x, y) => x - y)[Math.floor(timings.length / 2)],
  };
}

function main() {
  guard(Number(process.env.BENCH_GUARD_MS) || 300_000, 'plan-week');
  const T0 = process.env.BENCH_WEEK ? Date.parse(`${process.env.BENCH_WEEK}T00:00:00Z`) : Date.UTC(2026, 4, 4); // Monday 4 May 2026
  const T1 = Date.UTC(2026, 10, 16); // Monday 16 November 2026
  const T2 = Date.UTC(2026, 4, 11); // Monday 11 May 2026: negative-price middays under the fixed feed-in tariff
  const weeks = [
    [T0, week(T0)],
    [T1, week(T1)],
    [T2, week(T2, true)],
  ];
  const tag = (t) => `${new Date(t).toISOString().slice(0, 10)}${t === T2 ? ' (negative middays)' : ''}`;
  const names = {
    a: '(a) no battery control (self-consumption)',
    b: '(b) price-only plan, daily at 14:00',
    c: '(c) perfect foresight',
    d: '(d) re-planning, forecasts from history',
    e: '(e) re-planning, perfect forecasts',
    f: '(f) as (d), every slot steered (idle: steer)',
    g: '(g) the previous example 12 (every slot steered, end value 0.10)',
  };
  const alternatives = {};
  for (const [t, w] of weeks) {
    const day = tag(t);
    for (const k of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) {
      const result = w[k];
      alternatives[`${day}: ${names[k]}`] = {
        'cost (EUR)': round(result.cost, 2),
        'with the end SOC (EUR)': round(result.withEnd, 2),
        'saved against (a) (EUR)': round(w.a.withEnd - result.withEnd, 2),
        'import (kWh)': round(result.imported, 1),
        'export (kWh)': round(result.exported, 1),
        'battery throughput (kWh)': round(result.throughput, 1),
        'SOC at the end (%)': round(result.socEnd, 1),
      };
    }
    alternatives[`${day}: (c) planned objective (bound)`] = { 'with the end SOC (EUR)': round(w.bound, 2) };
  }
  const fmt = (x) => `${round(x, 2)} EUR`;
  const each = (f) => weeks.map(([t, w]) => `${tag(t)}: ${f(w)}`).join('; ');
  const nov = weeks[1][1];
  const [, w] = weeks[0];
  const report = {
    id: 'plan-week',
    title: 'Re-planning over a simulated week: realised cost',
    machine: machine(),
    settings: {
      site: `the simulator's Home site (PV ${HOME.pv.peakW / 1000} kWp, load ${HOME.load.minW}-${HOME.load.maxW} W residential, battery ${CAP} kWh / ${KW} kW, round trip 90 %, SOC 5-95 %, grid ${HOME.grid.maxImportW / 1000} kW / ${HOME.grid.maxExportW / 1000} kW), seed ${SEED}`,
      weeks: weeks.map(([t]) => tag(t)).join(', '),
      prices: `the sample day × (0.8-1.2) ± 20 EUR/MWh per day ± 10 per quarter hour, at least -80 (seed ${PRICE_SEED}); the third week minus a midday dip of 150-250 a day, at least -400 (import below the feed-in tariff at midday, below zero on some); import (spot + ${FEE}) × ${VAT}, export ${FEED_IN} per kWh`,
      replanning: `planSite each quarter hour (${w.plans} plans a week, median ${round(w.planMs, 1)} ms), SOC 10-90 %, wear 0.02 per kWh, end value ${PLAN_END_VALUE} per kWh, self-consumption slots left to the site`,
      costs:
        'realised from the grid meter\'s counters; "with the end SOC": minus 0.10 per kWh stored more at the end than at the start',
    },
    alternatives,
    goals: [
      {
        goal: 're-planning (d) realises less than the price-only plan (b), each week',
        measured: each((x) => `(d) ${fmt(x.d.withEnd)}, (b) ${fmt(x.b.withEnd)}`),
        met: weeks.every(([, x]) => x.d.withEnd < x.b.withEnd),
      },
      {
        goal: 're-planning (d) realises no more than no battery control (a), each week, and less where (a) is above the bound (c)',
        measured: each((x) => `(d) ${fmt(x.d.withEnd)}, (a) ${fmt(x.a.withEnd)}, bound ${fmt(x.bound)}`),
        met: weeks.every(
          ([, x]) => x.d.withEnd <= x.a.withEnd + 0.005 && (x.a.withEnd - x.bound < 0.01 || x.d.withEnd < x.a.withEnd),
        ),
      },
      {
        goal: "re-planning (d) within 15 % of perfect foresight's bound (c) in November",
        measured: `(d) ${fmt(nov.d.withEnd)}, bound ${fmt(nov.bound)}: ${round((100 * (nov.d.withEnd - nov.bound)) / Math.abs(nov.bound), 1)} %`,
        met: nov.d.withEnd - nov.bound <= 0.15 * Math.abs(nov.bound),
      },
      {
        goal: 'report: what perfect foresight (c) realises, and its planned bound',
        measured: each((x) => `(c) ${fmt(x.c.withEnd)}, bound ${fmt(x.bound)}`),
        met: true,
      },
    ],
  };
  output(report);
  for (const [name, v] of Object.entries(alternatives)) process.stdout.write(`${name}: ${JSON.stringify(v)}\n`);
  process.exit(0);
}

main();
