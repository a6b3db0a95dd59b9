/**
 * The past of a site: the same physics as the live state (SiteModel with dispatch, and no
 * steering: self-consumption), run forward over a warm-up of `days` days that ends at the
 * simulator's start. The live state at the start is the site definition's (initial SOC and
 * counters); how the warm-up meets it: above computePast.
 */
import { DAY_MS, MINUTE_MS, QUARTER_HOUR_MS } from './time-units';
import { COUNTER_FIELDS, F_BATT_IN, F_BATT_OUT, F_GRID_IN, F_GRID_OUT, F_PV_OUT } from './model-quantities';
import { H_COLS, H_LOAD, History } from './history';
import { hash01 } from './prng';
import { BATTERY_DEFAULTS, type SiteDefinition } from './sites';
import type { SocTarget, WarmUpModel } from './warmup-model';

/** Days of history the simulator computes before its start (a year and a month). */
export const HISTORY_DAYS = 400;
/** Integration step of the warm-up. */
const WARMUP_STEP_MS = 5 * MINUTE_MS;
/** Width of the target cone per hour before the start, share of capacity (4 %/h: within 1 % a quarter hour before). */
const CONE_SHARE_PER_H = 0.04;

export interface Past {
  /** The warm-up's samples; [from, to) are the usable ones (before the start, counters >= 0). */
  history: History;
  from: number;
  to: number;
  /** Added to each column of the samples (counters: to meet the initial values). */
  offsets: Float64Array;
  /** The warm-up's state at the start (model-quantities.ts order, offsets applied): the live state's. */
  end: Float64Array;
}

type ModelFactory = (def: SiteDefinition, seed: number, t0: number, startSoc: number, target: SocTarget) => WarmUpModel;

/** The warm-up's seeded start SOC, %, within the SOC window. */
function warmUpStartSoc(def: SiteDefinition, seed: number, key: number): number {
  const lo = def.battery.minSoc ?? BATTERY_DEFAULTS.minSoc;
  const hi = def.battery.maxSoc ?? BATTERY_DEFAULTS.maxSoc;
  return lo + (hi - lo) * hash01(seed, key, 401);
}

/**
 * Runs the warm-up of a site for the `days` days before `start`. `make` builds the warm-up model
 * (model.ts). Samples are quarter-hourly; the warm-up integrates in steps of WARMUP_STEP_MS.
 */
export function computePast(
  def: SiteDefinition,
  seed: number,
  key: number,
  start: number,
  days: number,
  make: ModelFactory,
): Past {
  const battery = def.battery;
  const t0 = Math.floor(start / QUARTER_HOUR_MS) * QUARTER_HOUR_MS - days * DAY_MS;
  const rateWhPerH = Math.min(
    CONE_SHARE_PER_H * battery.capacityWh,
    0.5 * battery.maxPowerW * Math.sqrt(battery.efficiency ?? BATTERY_DEFAULTS.efficiency),
  );
  // The warm-up starts at a seeded SOC within the window; over its last hours the store is kept
  // within a cone narrowing to the initial SOC (SocTarget), so it ends there exactly.
  const target: SocTarget = { at: start, storedWh: (battery.initialSoc / 100) * battery.capacityWh, rateWhPerH };
  const model = make(def, seed, t0, warmUpStartSoc(def, seed, key), target);
  model.advanceTo(start, WARMUP_STEP_MS);
  const recorded = model.history;
  // The warm-up counts from 0; its samples get the offsets that make its end equal the initial counters.
  const offsets = new Float64Array(H_COLS);
  const initial: Array<[number, number, number]> = [
    [F_BATT_IN, battery.initialConsumedWh, model.battInWh],
    [F_BATT_OUT, battery.initialProducedWh, model.battOutWh],
    [F_PV_OUT, def.pv.initialProducedWh, model.pvOutWh],
    [F_GRID_IN, def.meter.initialImportWh, model.gridInWh],
    [F_GRID_OUT, def.meter.initialExportWh, model.gridOutWh],
  ];
  for (const [col, atStart, counted] of initial) offsets[col] = atStart - counted;
  offsets[H_LOAD] = -model.loadWh; // the live load counter starts at 0
  let to = recorded.length;
  while (to > 0 && recorded.time(to - 1) >= start) to--;
  // Where the initial counters are smaller than the warm-up's energy, the samples before all counters
  // are >= 0 are left out (the history starts later).
  let from = 0;
  const negative = (i: number) => [...COUNTER_FIELDS].some((col) => recorded.value(col, i) + offsets[col] < 0);
  while (from < to && negative(from)) from++;
  const end = Float64Array.from(model.snapshot(), (v, col) => v + offsets[col]);
  return { history: recorded, from, to, offsets, end };
}
