/**
 * Seeded days for the site planner's MILP check, with a generator of their own (not the planner
 * tests'): raw numbers first (kW, kWh, %, prices per kWh), then the planner's input made from
 * them. Each day draws its kinds at random: mixed slot lengths (15, 30, 60 min), negative-price
 * middays, a fixed feed-in tariff above the import price, negative export prices, tight and zero
 * export limits, import limits, a peak cost with a peak so far, SOC targets, socEnd, cycle cost,
 * end value and a SOC outside the window.
 */

/** xorshift32, seeded: independent of the simulator's PRNG. */
export function rng(seed: number): () => number {
  let state = (seed * 2654435761) >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 4294967296;
  };
}

export interface RawSlot {
  start: number;
  /** Hours. */
  dt: number;
  pi: number;
  px: number;
  pvKW: number;
  loadKW: number;
  /** kW, Infinity when none. */
  imaxKW: number;
}

export interface RawDay {
  seed: number;
  kinds: string[];
  slots: RawSlot[];
  capacityKWh: number;
  C: number;
  D: number;
  etaC: number;
  etaD: number;
  socMin: number;
  socMax: number;
  soc: number;
  cycleCost: number;
  endValue: number;
  /** SOC (%) at least at boundary b (1..n). */
  targets: Array<{ soc: number; boundary: number }>;
  socEnd?: number;
  exportLimitKW: number;
  importLimitKW: number;
  peakCost: number;
  peakSoFarKW: number;
  /** false: charge only from the PV surplus; discharge only into the load net of PV. */
  gridCharge: boolean;
  gridDischarge: boolean;
  /** A least SOC before selling (%), or undefined. */
  sellSocMin?: number;
}

const T0 = Date.UTC(2026, 2, 14, 23);
const r2 = (v: number) => Math.round(v * 1e4) / 1e4;

export function makeDay(seed: number): RawDay {
  const random = rng(seed);
  const chance = (p: number) => random() < p;
  const kinds: string[] = [];
  const negMidday = chance(0.45);
  const fit = chance(0.45); // a fixed feed-in tariff: above the import price on cheap slots
  const negExport = !fit && chance(0.3);
  if (negMidday) kinds.push('negative midday');
  if (fit) kinds.push('feed-in tariff');
  if (negExport) kinds.push('negative export');
  const tariff = 0.06 + random() * 0.08;
  const pvPeak = chance(0.85) ? 2 + random() * 9 : 0;
  const base = 0.2 + random() * 0.6;
  const slots: RawSlot[] = [];
  let slotStart = T0;
  const hours = 12 + Math.floor(random() * 13);
  const endT = T0 + hours * 3_600_000;
  while (slotStart < endT) {
    const minutes = [15, 15, 30, 60][Math.floor(random() * 4)];
    const dt = minutes / 60;
    const hourOfDay = ((slotStart - T0) / 3_600_000 + 5) % 24; // the day starts at 05:00
    const sun = Math.max(0, Math.sin(((hourOfDay - 6) / 14) * Math.PI));
    const midday = Math.exp(-(((hourOfDay - 13) / 2.5) ** 2));
    let spot =
      0.08 +
      0.05 * Math.sin(((hourOfDay - 8) / 24) * 2 * Math.PI) +
      0.06 * Math.exp(-(((hourOfDay - 19) / 1.5) ** 2)) +
      (random() - 0.5) * 0.04;
    if (negMidday) spot -= 0.2 * midday;
    const pi = r2(spot + 0.05 + random() * 0.1);
    const px = fit ? tariff : negExport ? r2(spot - 0.02) : r2(Math.min(pi, spot * 0.9));
    slots.push({
      start: slotStart,
      dt,
      pi,
      px,
      pvKW: r2(pvPeak * sun * (0.4 + 0.6 * random())),
      loadKW: r2(base + (hourOfDay >= 17 && hourOfDay < 22 ? 1.5 * random() : 0) + (chance(0.05) ? 3 * random() : 0)),
      imaxKW: chance(0.15) ? r2(4 + random() * 6) : Infinity,
    });
    slotStart += minutes * 60_000;
  }
  if (new Set(slots.map((s) => s.dt)).size > 1) kinds.push('mixed slots');
  const slotCount = slots.length;
  const capacityKWh = r2(4 + random() * 16);
  const socMin = Math.floor(random() * 20);
  const socMax = 85 + Math.floor(random() * 16);
  const outside = chance(0.08);
  const soc = r2(outside ? random() * 100 : socMin + random() * (socMax - socMin));
  const lossless = chance(0.06);
  const targets: RawDay['targets'] = [];
  if (chance(0.35)) {
    targets.push({
      soc: r2(socMin + random() * (socMax - socMin) * 0.8),
      boundary: 1 + Math.floor(random() * slotCount),
    });
    kinds.push('target');
  }
  const exportKind = random();
  const exportLimitKW =
    exportKind < 0.15
      ? 0
      : exportKind < 0.4
        ? r2(0.2 + random() * 1.5)
        : exportKind < 0.55
          ? r2(2 + random() * 5)
          : Infinity;
  if (exportLimitKW === 0) kinds.push('zero export');
  else if (exportLimitKW < 2) kinds.push('tight export');
  const peak = chance(0.35);
  if (peak) kinds.push('peak');
  const day: RawDay = {
    seed,
    kinds,
    slots,
    capacityKWh,
    C: r2(1 + random() * 5),
    D: r2(1 + random() * 5),
    etaC: lossless ? 1 : r2(0.88 + random() * 0.11),
    etaD: lossless ? 1 : r2(0.88 + random() * 0.11),
    socMin,
    socMax,
    soc,
    cycleCost: chance(0.6) ? r2(random() * 0.05) : 0,
    endValue: chance(0.5) ? r2(random() * 0.2) : 0,
    targets,
    socEnd: chance(0.3) ? r2(socMin + random() * (socMax - socMin) * 0.6) : undefined,
    exportLimitKW,
    importLimitKW: chance(0.15) ? r2(5 + random() * 8) : Infinity,
    peakCost: peak ? r2(0.05 + random() * 0.6) : 0,
    peakSoFarKW: peak && chance(0.6) ? r2(random() * 4) : 0,
    gridCharge: true,
    gridDischarge: true,
  };
  // drawn after the rest, so the days without them stay as they were
  day.gridCharge = !chance(0.15);
  day.gridDischarge = !chance(0.15);
  if (!day.gridCharge) kinds.push('no grid charge');
  if (!day.gridDischarge) kinds.push('no grid discharge');
  if (day.gridDischarge && chance(0.2)) {
    day.sellSocMin = r2(socMin + random() * (socMax - socMin));
    kinds.push('least SOC before selling');
  }
  if (day.cycleCost > 0) kinds.push('cycle cost');
  if (day.endValue > 0) kinds.push('end value');
  if (day.socEnd !== undefined) kinds.push('socEnd');
  if (peak && day.peakSoFarKW > 0) kinds.push('peak so far');
  return day;
}

/** The day as the planner's input (W for site powers, price slots per kWh). */
export function plannerInput(d: RawDay): Record<string, unknown> {
  const watts = (kW: number) => Math.round(kW * 1e7) / 1e4;
  const end = (k: number) => d.slots[k].start + d.slots[k].dt * 3_600_000;
  return {
    prices: d.slots.map((s, k) => ({ start: s.start, end: end(k), importPrice: s.pi, exportPrice: s.px })),
    priceUnit: 'kWh',
    currency: 'EUR',
    pvForecast: d.slots.map((s) => watts(s.pvKW)),
    loadForecast: d.slots.map((s) => watts(s.loadKW)),
    gridImportMax: d.slots.map((s) => (s.imaxKW === Infinity ? null : watts(s.imaxKW))),
    site: {
      ...(d.exportLimitKW < Infinity ? { exportLimitW: watts(d.exportLimitKW) } : {}),
      ...(d.importLimitKW < Infinity ? { importLimitW: watts(d.importLimitKW) } : {}),
      ...(d.peakCost > 0 ? { peakCost: d.peakCost, peakSoFarW: watts(d.peakSoFarKW) } : {}),
    },
    battery: {
      capacityKWh: d.capacityKWh,
      maxChargeKW: d.C,
      maxDischargeKW: d.D,
      socMin: d.socMin,
      socMax: d.socMax,
      soc: d.soc,
      chargeEfficiency: d.etaC,
      dischargeEfficiency: d.etaD,
      cycleCost: d.cycleCost,
      endValue: d.endValue,
      ...(d.gridCharge ? {} : { gridCharge: false }),
      ...(d.gridDischarge ? {} : { gridDischarge: false }),
      ...(d.sellSocMin === undefined ? {} : { sellSocMin: d.sellSocMin }),
      ...(d.targets.length ? { socTarget: d.targets.map((t) => ({ soc: t.soc, time: end(t.boundary - 1) })) } : {}),
    },
    ...(d.socEnd !== undefined ? { socEnd: d.socEnd } : {}),
  };
}
