/**
 * No silent keys: a key the planner does not know is refused, naming it and the nearest key it
 * knows (a misspelt `loadForcast` would otherwise plan as if there were no load). Pure.
 */
import { ValidationError } from '../protocol/errors';

/** Every top-level field of the planners' input (planBattery, planSite, planFromPrices). */
export const PLANNER_FIELDS = [
  'prices',
  'battery',
  'priceUnit',
  'socEnd',
  'steps',
  'now',
  'solver',
  'currency',
  'slotMinutes',
  'importFormula',
  'exportFormula',
  'pvForecast',
  'loadForecast',
  'gridImportMax',
  'gridExportMax',
  'site',
] as const;
/** Every field of `battery` (the price-only planner reads the first seven). */
export const BATTERY_FIELDS = [
  'capacityKWh',
  'maxChargeKW',
  'maxDischargeKW',
  'socMin',
  'socMax',
  'efficiency',
  'soc',
  'chargeEfficiency',
  'dischargeEfficiency',
  'cycleCost',
  'socTarget',
  'endValue',
  'gridCharge',
  'gridDischarge',
  'sellSocMin',
] as const;
/** The fields of a price slot in this package's own form (and the {start, value} of price sources). */
export const SLOT_FIELDS = ['start', 'end', 'duration', 'price', 'importPrice', 'exportPrice', 'value'] as const;

/** Edit distance, case-insensitive (a transposition counts as one). */
function distance(a: string, b: string): number {
  const lowerA = a.toLowerCase();
  const lowerB = b.toLowerCase();
  const table: number[][] = Array.from({ length: lowerA.length + 1 }, (_, i) =>
    Array.from({ length: lowerB.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= lowerA.length; i++) {
    for (let j = 1; j <= lowerB.length; j++) {
      const cost = lowerA[i - 1] === lowerB[j - 1] ? 0 : 1;
      table[i][j] = Math.min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && lowerA[i - 1] === lowerB[j - 2] && lowerA[i - 2] === lowerB[j - 1])
        table[i][j] = Math.min(table[i][j], table[i - 2][j - 2] + 1);
    }
  }
  return table[lowerA.length][lowerB.length];
}

/** The known key nearest to `key`. */
function nearest(key: string, known: readonly string[]): string {
  let best = known[0];
  let bestDistance = Infinity;
  for (const k of known) {
    const candidateDistance = distance(key, k);
    if (candidateDistance < bestDistance) {
      bestDistance = candidateDistance;
      best = k;
    }
  }
  return best;
}

/** A known key `key` is a likely misspelling of (within 2 edits, or differing in case only), or undefined. */
export function misspelt(key: string, known: readonly string[]): string | undefined {
  if (known.includes(key)) return undefined;
  const closest = nearest(key, known);
  return distance(key, closest) <= Math.min(2, Math.floor(closest.length / 3)) ? closest : undefined;
}

/**
 * Refuses the first key of `obj` not in `known` (and not undefined): `{at}.{key} is not {what}; did you mean
 * {nearest}? Accepted: …` (`at` empty: the key alone).
 */
export function refuseUnknownKeys(
  obj: Record<string, unknown>,
  known: readonly string[],
  at: string,
  what: string,
): void {
  for (const k of Object.keys(obj)) {
    if (known.includes(k) || obj[k] === undefined) continue; // undefined: absent (JSON drops it)
    throw new ValidationError(
      at ? `${at}.${k}` : k,
      `is not ${what}; did you mean ${nearest(k, known)}? Accepted: ${known.join(', ')}`,
    );
  }
}
