/** the LP of a seeded site day for GLPK (from plan-lp-exact). */
import type { SitePlan } from '../../src/plan';
import { mulberry32 } from '../../src/simulator/prng';

const QUARTER_MS = 900_000;
const T0 = Date.UTC(2026, 5, 1);

/** A random day (or week) as raw numbers: W, kW, kWh, %, prices per kWh after the formula. */
export interface Day {
  n: number;
  spot: number[]; // EUR/MWh
  imp: { multiplier: number; fee: number; vat: number };
  exp: { multiplier: number; fee: number; vat: number };
  pv: number[];
  load: number[];
  imax: Array<number | null>;
  xmax: Array<number | null>;
  site: { importLimitW?: number; exportLimitW: number; peakCost: number; peakSoFarW?: number };
  bat: {
    capacityKWh: number;
    maxChargeKW: number;
    maxDischargeKW: number;
    socMin: number;
    socMax: number;
    chargeEfficiency: number;
    dischargeEfficiency: number;
    cycleCost: number;
    soc: number;
    endValue: number;
    target: { soc: number; boundary: number };
  };
  socEnd?: number;
  feed: 'entsoe' | 'slots';
}

export function randomDay(seed: number, n = 96, negative = false): Day {
  const random = mulberry32(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
  const pvPeak = random() * 12000;
  const cloud = 0.3 + random() * 0.7;
  const base = 150 + random() * 600;
  const spot: number[] = [];
  const pv: number[] = [];
  const load: number[] = [];
  for (let k = 0; k < n; k++) {
    const hourOfDay = (k / 4) % 24;
    const midday = Math.exp(-(((hourOfDay - 13) / 2.5) ** 2));
    spot.push(
      Math.round(
        (90 +
          60 * Math.sin(((hourOfDay - 8) / 24) * 2 * Math.PI) +
          40 * Math.exp(-(((hourOfDay - 19) / 1.5) ** 2)) -
          (negative ? 220 : 120 * random()) * midday +
          (random() - 0.5) * 40) *
          100,
      ) / 100,
    );
    pv.push(Math.max(0, pvPeak * Math.sin(((hourOfDay - 6) / 14) * Math.PI)) * (cloud + (1 - cloud) * random()));
    load.push(
      base + (hourOfDay >= 17 && hourOfDay < 22 ? 1500 * random() : 0) + (random() < 0.05 ? 3000 * random() : 0),
    );
  }
  const imp = { multiplier: pick([1, 1.02]), fee: 0.1 + random() * 0.15, vat: pick([1, 1.19, 1.25]) };
  const exp = { multiplier: pick([1, 0.9]), fee: -random() * 0.02, vat: 1 };
  const imax = load.map((l, k) => (random() < 0.3 ? Math.round(Math.max(0, l - pv[k]) + 500 + random() * 6000) : null));
  const xmax = load.map(() => (random() < 0.3 ? Math.round(random() * 6000) : null));
  const capacityKWh = 5 + random() * 25;
  const socMin = Math.floor(random() * 20);
  const socMax = 80 + Math.floor(random() * 21);
  const soc = random() < 0.15 ? random() * 100 : socMin + random() * (socMax - socMin);
  const bat = {
    capacityKWh,
    maxChargeKW: 2 + random() * 10,
    maxDischargeKW: 2 + random() * 10,
    socMin,
    socMax,
    chargeEfficiency: 0.9 + random() * 0.1,
    dischargeEfficiency: 0.9 + random() * 0.1,
    cycleCost: random() * 0.05,
    soc,
    endValue: random() * 0.2,
    target: { soc: socMin + random() * (socMax - socMin) * 0.8, boundary: 1 + Math.floor(random() * n) },
  };
  const site = {
    exportLimitW: 2000 + Math.round(random() * 8000),
    peakCost: 0.05 + random() * 1.5,
    ...(random() < 0.3 ? { importLimitW: 8000 + Math.round(random() * 8000) } : {}),
    ...(random() < 0.3 ? { peakSoFarW: Math.round(random() * 3000) } : {}),
  };
  if (seed % 10 === 0) Object.assign(bat, { chargeEfficiency: 1, dischargeEfficiency: 1 }); // lossless: no loss to take energy into
  return {
    n,
    spot,
    imp,
    exp,
    pv,
    load,
    imax,
    xmax,
    site,
    bat,
    socEnd: random() < 0.4 ? socMin + random() * (socMax - socMin) * 0.5 : undefined,
    feed: random() < 0.4 ? 'entsoe' : 'slots',
  };
}

/** The day as the planner's input: an ENTSO-E style feed in EUR/MWh with formulas, or slots in ct/kWh. */
export function inputOf(d: Day): any {
  const start = (k: number) => new Date(T0 + k * QUARTER_MS).toISOString();
  const common = {
    pvForecast: d.pv,
    loadForecast: d.load,
    gridImportMax: d.imax,
    gridExportMax: d.xmax,
    site: d.site,
    socEnd: d.socEnd,
    battery: {
      ...d.bat,
      target: undefined,
      socTarget: { soc: d.bat.target.soc, time: T0 + d.bat.target.boundary * QUARTER_MS },
    },
  };
  if (d.feed === 'entsoe') {
    return {
      ...common,
      prices: d.spot.map((value, k) => ({ start: start(k), value })),
      priceUnit: 'EUR/MWh',
      importFormula: d.imp,
      exportFormula: d.exp,
    };
  }
  // ct/kWh: the formula applied here, the fee in ct
  return {
    ...common,
    priceUnit: 'ct/kWh',
    prices: d.spot.map((_, k) => ({
      start: start(k),
      duration: 15,
      importPrice: 100 * priceOf(d, k, 'imp'),
      exportPrice: 100 * priceOf(d, k, 'exp'),
    })),
    battery: { ...common.battery, cycleCost: d.bat.cycleCost * 100, endValue: d.bat.endValue * 100 },
    site: { ...d.site, peakCost: d.site.peakCost * 100 },
  };
}

/** The price per kWh (EUR) of slot k: (spot/1000 × multiplier + fee) × vat. */
function priceOf(d: Day, k: number, dir: 'imp' | 'exp'): number {
  const tariff = d[dir];
  return ((d.spot[k] / 1000) * tariff.multiplier + tariff.fee) * tariff.vat;
}

/** The same day as GLPK's LP (in EUR; ×100 for the ct days), built from the raw numbers; `mip`: no charge and discharge at once. */
export function lpOf(glpk: any, d: Day, mip = false): { lp: any; offset: number; scale: number } {
  const { n, bat } = d;
  const dt = 0.25;
  const cap = bat.capacityKWh;
  const e0 = (bat.soc / 100) * cap;
  const scale = d.feed === 'slots' ? 100 : 1;
  const obj: any[] = [];
  const rows: any[] = [];
  const bounds: any[] = [];
  const binaries: string[] = [];
  const bound = (name: string, lb: number, ub: number) =>
    bounds.push({
      name,
      type: ub === Infinity ? glpk.GLP_LO : ub === lb ? glpk.GLP_FX : glpk.GLP_DB,
      lb,
      ub: ub === Infinity ? 0 : ub,
    });
  const row = (name: string, vars: Array<[string, number]>, type: number, lb: number, ub: number) =>
    rows.push({ name, vars: vars.map(([v, coef]) => ({ name: v, coef })), bnds: { type, lb, ub } });
  for (let k = 0; k < n; k++) {
    const pv = d.pv[k] / 1000;
    const load = d.load[k] / 1000;
    const imax = Math.min(d.imax[k] ?? Infinity, d.site.importLimitW ?? Infinity) / 1000;
    const xmax = Math.min(d.xmax[k] ?? Infinity, d.site.exportLimitW) / 1000;
    bound(`c${k}`, 0, bat.maxChargeKW);
    bound(`d${k}`, 0, bat.maxDischargeKW);
    bound(`u${k}`, 0, pv);
    bound(`i${k}`, 0, imax);
    bound(`x${k}`, 0, xmax);
    let lb = Math.min((bat.socMin / 100) * cap, e0);
    const ub = Math.max((bat.socMax / 100) * cap, e0);
    if (k + 1 === bat.target.boundary) lb = Math.max(lb, (bat.target.soc / 100) * cap);
    if (k + 1 === n && d.socEnd !== undefined) lb = Math.max(lb, (d.socEnd / 100) * cap);
    bound(`e${k + 1}`, lb, ub);
    obj.push(
      { name: `i${k}`, coef: dt * priceOf(d, k, 'imp') * scale },
      { name: `x${k}`, coef: -dt * priceOf(d, k, 'exp') * scale },
    );
    obj.push({ name: `c${k}`, coef: dt * bat.cycleCost * scale }, { name: `d${k}`, coef: dt * bat.cycleCost * scale });
    // pv − u + i + d = load + x + c
    row(
      `balance${k}`,
      [
        [`u${k}`, -1],
        [`i${k}`, 1],
        [`d${k}`, 1],
        [`x${k}`, -1],
        [`c${k}`, -1],
      ],
      glpk.GLP_FX,
      load - pv,
      load - pv,
    );
    // e_{k+1} = e_k + dt (ηc c − d / ηd)
    const soc: Array<[string, number]> = [
      [`e${k + 1}`, 1],
      [`c${k}`, -dt * bat.chargeEfficiency],
      [`d${k}`, dt / bat.dischargeEfficiency],
    ];
    if (k > 0) soc.push([`e${k}`, -1]);
    row(`soc${k}`, soc, glpk.GLP_FX, k === 0 ? e0 : 0, k === 0 ? e0 : 0);
    row(
      `peak${k}`,
      [
        [`i${k}`, 1],
        ['P', -1],
      ],
      glpk.GLP_UP,
      0,
      0,
    );
    if (mip) {
      binaries.push(`z${k}`);
      row(
        `zc${k}`,
        [
          [`c${k}`, 1],
          [`z${k}`, -bat.maxChargeKW],
        ],
        glpk.GLP_UP,
        0,
        0,
      );
      row(
        `zd${k}`,
        [
          [`d${k}`, 1],
          [`z${k}`, bat.maxDischargeKW],
        ],
        glpk.GLP_UP,
        0,
        bat.maxDischargeKW,
      );
    }
  }
  bound('P', (d.site.peakSoFarW ?? 0) / 1000, Infinity);
  obj.push({ name: 'P', coef: d.site.peakCost * scale }, { name: `e${n}`, coef: -bat.endValue * scale });
  const lp = {
    name: 'day',
    objective: { direction: glpk.GLP_MIN, name: 'cost', vars: obj },
    subjectTo: rows,
    bounds,
    ...(mip ? { binaries } : {}),
  };
  return { lp, offset: bat.endValue * scale * e0, scale };
}

/** Every constraint of the model, checked from the plan's own output; returns the largest violation. */
export function violation(d: Day, plan: SitePlan): number {
  const { bat } = d;
  const cap = bat.capacityKWh;
  let worst = 0;
  const note = (x: number) => {
    worst = Math.max(worst, x);
  };
  let soc = bat.soc;
  plan.slots.forEach((s, k) => {
    const imax = Math.min(d.imax[k] ?? Infinity, d.site.importLimitW ?? Infinity) / 1000;
    const xmax = Math.min(d.xmax[k] ?? Infinity, d.site.exportLimitW) / 1000;
    for (const x of [s.chargeKW, s.dischargeKW, s.importKW, s.exportKW, s.curtailKW]) note(-x);
    note(s.chargeKW - bat.maxChargeKW);
    note(s.dischargeKW - bat.maxDischargeKW);
    note(s.importKW - imax);
    note(s.exportKW - xmax);
    note(s.curtailKW - d.pv[k] / 1000);
    note(
      Math.abs(d.pv[k] / 1000 - s.curtailKW + s.importKW + s.dischargeKW - d.load[k] / 1000 - s.exportKW - s.chargeKW),
    );
    note(Math.abs(s.energyStorage.value - (s.dischargeKW - s.chargeKW)));
    note(Math.abs(s.socStart - soc));
    const stored = 0.25 * (bat.chargeEfficiency * s.chargeKW - s.dischargeKW / bat.dischargeEfficiency);
    note(Math.abs(((s.socEnd - s.socStart) / 100) * cap - stored));
    note(Math.min(bat.socMin, bat.soc) - s.socEnd);
    note(s.socEnd - Math.max(bat.socMax, bat.soc));
    if (k + 1 === bat.target.boundary) note(bat.target.soc - s.socEnd);
    soc = s.socEnd;
  });
  if (d.socEnd !== undefined) note(d.socEnd - soc);
  const cost = plan.cost;
  note(
    Math.abs(cost.import - cost.export + cost.wear + cost.peak - cost.endValue - cost.total) /
      Math.max(1, Math.abs(cost.total)),
  );
  note(
    Math.abs(plan.slots.reduce((a, s) => a + s.cost, 0) - (cost.import - cost.export + cost.wear)) /
      Math.max(1, Math.abs(cost.total)),
  );
  return worst;
}
