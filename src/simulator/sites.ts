/**
 * Site definitions: which devices a simulated site has, their sizes and initial values, and
 * the default two sites (a commercial site and a home). References follow the vendor format
 * (vendor notes): `ste_`/`dvc_` plus 12 base-62 characters, derived deterministically.
 */
import { validateReference } from '../protocol';
import { makeReference } from './prng';

export type LoadProfile = 'commercial' | 'residential';
export type DeviceKind = 'battery' | 'pv' | 'meter';

export interface SiteDefinition {
  siteReference: string;
  name: string;
  battery: {
    deviceReference: string;
    name: string;
    /** Maximum charge and discharge power, W. */
    maxPowerW: number;
    /** Usable capacity, Wh. */
    capacityWh: number;
    /** State of charge at the simulator's start, % (0-100): the warm-up of the history ends there. */
    initialSoc: number;
    /** Counter values at the start, Wh. */
    initialConsumedWh: number;
    initialProducedWh: number;
    /** Round-trip efficiency, 0-1 (default BATTERY_DEFAULTS.efficiency): the counters are AC side. */
    efficiency?: number;
    /** SOC window the battery is operated in, % (defaults BATTERY_DEFAULTS): full at maxSoc, empty at minSoc. */
    minSoc?: number;
    maxSoc?: number;
  };
  pv: { deviceReference: string; name: string; peakW: number; initialProducedWh: number };
  meter: { deviceReference: string; name: string; initialImportWh: number; initialExportWh: number };
  /** Site consumption between minW and maxW following weekday and weekend profiles over the UTC day. */
  load: { profile: LoadProfile; minW: number; maxW: number };
  /**
   * Contractual grid limits, W (both >= 0): the most the site may import and export. The
   * physics keeps within them where its assets can (battery first, then PV), steered or not;
   * grid-limits steering narrows them. Default (checkSites): what the site can reach at most,
   * load plus battery for import, PV plus battery for export, so they never bind.
   */
  grid?: { maxImportW: number; maxExportW: number };
}

/** Battery defaults where a site definition leaves them out. */
export const BATTERY_DEFAULTS = Object.freeze({ efficiency: 0.9, minSoc: 5, maxSoc: 95 });

export const PROPERTY_UNITS: Readonly<Record<DeviceKind, ReadonlyArray<{ name: string; unit: string }>>> = {
  battery: [
    { name: 'soc', unit: '%' },
    { name: 'power', unit: 'W' },
    { name: 'totalEnergyConsumed', unit: 'Wh' },
    { name: 'totalEnergyProduced', unit: 'Wh' },
  ],
  pv: [
    { name: 'power', unit: 'W' },
    { name: 'totalEnergyProduced', unit: 'Wh' },
  ],
  meter: [
    { name: 'power', unit: 'W' },
    { name: 'totalEnergyConsumed', unit: 'Wh' },
    { name: 'totalEnergyProduced', unit: 'Wh' },
  ],
};

/**
 * The default sites. Initial counters are about eight years of operation, so the 400-day
 * warm-up of the history (history-warmup.ts) stays above zero before the simulator's start.
 */
export const DEFAULT_SITES: ReadonlyArray<SiteDefinition> = Object.freeze([
  {
    siteReference: makeReference('ste', 'commercial'),
    name: 'Commercial site',
    battery: {
      deviceReference: makeReference('dvc', 'commercial/battery'),
      name: 'Commercial battery 500 kW / 1 MWh',
      maxPowerW: 500_000,
      capacityWh: 1_000_000,
      initialSoc: 65,
      initialConsumedWh: 912_750_000,
      initialProducedWh: 868_300_000,
    },
    pv: {
      deviceReference: makeReference('dvc', 'commercial/pv'),
      name: 'Commercial PV 1 MWp',
      peakW: 1_000_000,
      initialProducedWh: 15_870_000_000,
    },
    meter: {
      deviceReference: makeReference('dvc', 'commercial/meter'),
      name: 'Commercial grid meter',
      initialImportWh: 7_760_000_000,
      initialExportWh: 6_080_000_000,
    },
    load: { profile: 'commercial', minW: 150_000, maxW: 350_000 },
    // A medium-voltage connection of 1 MW with feed-in approved up to 800 kW.
    grid: { maxImportW: 1_000_000, maxExportW: 800_000 },
  },
  {
    siteReference: makeReference('ste', 'home'),
    name: 'Home',
    battery: {
      deviceReference: makeReference('dvc', 'home/battery'),
      name: 'Home battery 10 kW / 20 kWh',
      maxPowerW: 10_000,
      capacityWh: 20_000,
      initialSoc: 50,
      initialConsumedWh: 17_600_000,
      initialProducedWh: 16_950_000,
    },
    pv: {
      deviceReference: makeReference('dvc', 'home/pv'),
      name: 'Home PV 10 kWp',
      peakW: 10_000,
      initialProducedWh: 150_400_000,
    },
    meter: {
      deviceReference: makeReference('dvc', 'home/meter'),
      name: 'Home grid meter',
      initialImportWh: 31_200_000,
      initialExportWh: 110_400_000,
    },
    load: { profile: 'residential', minW: 500, maxW: 3_000 },
    // A three-phase 25 A house connection (17 kW); feed-in capped at 70 % of the PV peak (7 kW).
    grid: { maxImportW: 17_000, maxExportW: 7_000 },
  },
] satisfies SiteDefinition[]);

/**
 * The sites of the shipped examples that steer (examples/*.json): each steers a site
 * of its own, so that examples imported together never steer the same battery or overwrite each
 * other's curtailment. Copies of the default Home (example 07's % limit: of the Commercial site)
 * under their own references and names; the default sites stay as they are. The built-in
 * simulator (BUILT_IN_SITES) simulates them next to the default two; `new Simulator()` does not.
 */
function exampleCopy(base: SiteDefinition, key: string, example: string): SiteDefinition {
  const of = (label: string) => `${label} (example ${example})`;
  return {
    ...base,
    siteReference: makeReference('ste', key),
    name: of(base.name),
    battery: { ...base.battery, deviceReference: makeReference('dvc', `${key}/battery`), name: of(base.battery.name) },
    pv: { ...base.pv, deviceReference: makeReference('dvc', `${key}/pv`), name: of(base.pv.name) },
    meter: { ...base.meter, deviceReference: makeReference('dvc', `${key}/meter`), name: of(base.meter.name) },
    load: { ...base.load },
    ...(base.grid ? { grid: { ...base.grid } } : {}),
  };
}

const [COMMERCIAL, HOME] = DEFAULT_SITES as SiteDefinition[];

/** One site per steering example (08 steers the default Commercial site, which no other example steers). */
export const EXAMPLE_SITES: ReadonlyArray<SiteDefinition> = Object.freeze([
  exampleCopy(HOME, 'example-04', '04'),
  exampleCopy(HOME, 'example-05', '05'),
  exampleCopy(HOME, 'example-06', '06'),
  exampleCopy(COMMERCIAL, 'example-07', '07'),
  exampleCopy(HOME, 'example-07-home', '07'),
  exampleCopy(HOME, 'example-09', '09'),
  exampleCopy(HOME, 'example-10', '10'),
  exampleCopy(HOME, 'example-12', '12'),
]);

/** What the built-in simulator (config node "Use built-in simulator", npm start) simulates: the default sites, then the examples'. */
export const BUILT_IN_SITES: ReadonlyArray<SiteDefinition> = Object.freeze([...DEFAULT_SITES, ...EXAMPLE_SITES]);

function positive(v: unknown, field: string, allowZero = false): void {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (!allowZero && v === 0)) {
    throw new TypeError(
      `site definition: ${field} must be a ${allowZero ? 'non-negative' : 'positive'} number; got ${String(v)}`,
    );
  }
}

/** The battery's efficiency and SOC window, where given: efficiency in (0, 1], 0 <= minSoc < maxSoc <= 100. */
function checkBatteryWindow(b: SiteDefinition['battery'], at: string): void {
  const {
    efficiency = BATTERY_DEFAULTS.efficiency,
    minSoc = BATTERY_DEFAULTS.minSoc,
    maxSoc = BATTERY_DEFAULTS.maxSoc,
  } = b;
  if (typeof efficiency !== 'number' || !(efficiency > 0 && efficiency <= 1))
    throw new TypeError(`site definition: ${at}.efficiency must be a number in (0, 1]; got ${String(efficiency)}`);
  for (const [name, v] of [
    ['minSoc', minSoc],
    ['maxSoc', maxSoc],
  ] as const) {
    if (typeof v !== 'number' || !(v >= 0 && v <= 100))
      throw new TypeError(`site definition: ${at}.${name} must be a number within 0-100; got ${String(v)}`);
  }
  if (!(minSoc < maxSoc))
    throw new TypeError(`site definition: ${at}.minSoc must be below maxSoc; got ${minSoc} and ${maxSoc}`);
}

/** The contractual grid limits of a checked site (checkSites fills them in), W. */
export function contractOf(def: SiteDefinition): { maxImportW: number; maxExportW: number } {
  return (
    def.grid ?? { maxImportW: def.load.maxW + def.battery.maxPowerW, maxExportW: def.pv.peakW + def.battery.maxPowerW }
  );
}

/** Checks custom site definitions; throws a TypeError naming the field. Returns deep copies. */
export function checkSites(sites: ReadonlyArray<SiteDefinition>): SiteDefinition[] {
  if (!Array.isArray(sites) || sites.length === 0) throw new TypeError('sites must be a non-empty array');
  const seen = new Set<string>();
  const out: SiteDefinition[] = [];
  sites.forEach((s, i) => {
    const at = `sites[${i}]`;
    const refs = [s.siteReference, s.battery?.deviceReference, s.pv?.deviceReference, s.meter?.deviceReference];
    for (const r of refs) {
      validateReference(r, `${at} reference`);
      if (seen.has(r)) throw new TypeError(`site definition: duplicate reference ${r}`);
      seen.add(r);
    }
    positive(s.battery.maxPowerW, `${at}.battery.maxPowerW`);
    positive(s.battery.capacityWh, `${at}.battery.capacityWh`);
    if (!(s.battery.initialSoc >= 0 && s.battery.initialSoc <= 100))
      throw new TypeError(`site definition: ${at}.battery.initialSoc must be within 0-100`);
    positive(s.battery.initialConsumedWh, `${at}.battery.initialConsumedWh`, true);
    positive(s.battery.initialProducedWh, `${at}.battery.initialProducedWh`, true);
    positive(s.pv.peakW, `${at}.pv.peakW`, true);
    positive(s.pv.initialProducedWh, `${at}.pv.initialProducedWh`, true);
    positive(s.meter.initialImportWh, `${at}.meter.initialImportWh`, true);
    positive(s.meter.initialExportWh, `${at}.meter.initialExportWh`, true);
    positive(s.load.minW, `${at}.load.minW`, true);
    positive(s.load.maxW, `${at}.load.maxW`, true);
    if (s.load.maxW < s.load.minW) throw new TypeError(`site definition: ${at}.load.maxW must be >= minW`);
    if (s.load.profile !== 'commercial' && s.load.profile !== 'residential')
      throw new TypeError(`site definition: ${at}.load.profile must be commercial or residential`);
    checkBatteryWindow(s.battery, `${at}.battery`);
    const grid = s.grid ?? {
      maxImportW: s.load.maxW + s.battery.maxPowerW,
      maxExportW: s.pv.peakW + s.battery.maxPowerW,
    };
    if (grid === null || typeof grid !== 'object')
      throw new TypeError(`site definition: ${at}.grid must be { maxImportW, maxExportW } (W)`);
    positive(grid.maxImportW, `${at}.grid.maxImportW`, true);
    positive(grid.maxExportW, `${at}.grid.maxExportW`, true);
    out.push({
      ...s,
      battery: { ...s.battery },
      pv: { ...s.pv },
      meter: { ...s.meter },
      load: { ...s.load },
      grid: { maxImportW: grid.maxImportW, maxExportW: grid.maxExportW },
    });
  });
  return out;
}
