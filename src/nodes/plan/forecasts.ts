/**
 * Forecasts given as points (and a load history) turned into one value per price slot of the
 * planner's input. Pure: the build serves it (through check.ts) to the editor in resources/plan-input.js.
 */
import { tooLong } from '../../protocol/errors';
import { INPUTS } from '../../protocol/limits';
import { readPriceFeed, type FeedSlot } from '../../plan/price-feed';
import { loadForecastFromHistory, resampleForecast } from '../../plan/forecast';
import { located } from './located';

type Rec = Record<string, unknown>;
const isObject = (v: unknown): v is Rec =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
const isSet = (v: unknown) => v !== undefined && v !== null && v !== '';

/**
 * Forecasts given as points (and a load history) turned into one value per price slot, in
 * place; returns the end of the last price slot (undefined when the prices cannot be read:
 * the planner then refuses them in its own words). Slots that have ended get 0.
 */
export function forecasts(input: Rec, from: Record<string, string>, now: number): number | undefined {
  // Counted before asPoints looks at any element: per-slot values are checked against the slots
  // by the planner, points against INPUTS.seriesPoints by readSeries; more than either is refused.
  for (const k of ['pvForecast', 'loadForecast']) {
    const values = input[k];
    if (Array.isArray(values) && values.length > INPUTS.seriesPoints)
      throw tooLong(from[k], INPUTS.seriesPoints, values.length, 'values (one per price slot, or points)');
  }
  const asPoints = (v: unknown) =>
    Array.isArray(v)
      ? v.some((x) => isObject(x))
      : isObject(v) && (Array.isArray(v.time) || Array.isArray(v.forecasts) || isObject(v.result));
  const history = input.loadHistory;
  delete input.loadHistory; // (not the planner's: it becomes loadForecast)
  const fromHistory = isSet(history) && !isSet(input.loadForecast);
  const need = ['pvForecast', 'loadForecast'].some((k) => asPoints(input[k])) || fromHistory;
  let slots: FeedSlot[] | undefined;
  try {
    const minutes = isSet(input.slotMinutes) ? Number(input.slotMinutes) : undefined;
    slots = readPriceFeed(
      input.prices,
      'prices',
      minutes !== undefined && Number.isInteger(minutes) && minutes > 0 ? minutes : undefined,
    ).slots;
  } catch (err) {
    if (need) throw located(err, from);
    return undefined;
  }
  if (need) {
    const ahead = slots.map((s) => s.end > now);
    const future = slots.filter((_s, k) => ahead[k]);
    const fill = (values: number[]) => {
      let taken = 0;
      return ahead.map((a) => (a ? values[taken++] : 0));
    };
    if (future.length) {
      for (const k of ['pvForecast', 'loadForecast']) {
        if (asPoints(input[k])) input[k] = fill(resampleForecast(input[k], future, from[k], 0));
      }
      if (fromHistory) {
        input.loadForecast = fill(
          loadForecastFromHistory(history, { slots: future, weeks: 4, field: from.loadHistory }),
        );
        from.loadForecast = `${from.loadHistory} → loadForecast`;
      }
    }
  }
  return slots.reduce((m, s) => Math.max(m, s.end), -Infinity);
}
