/**
 * What the warm-up (history-warmup.ts) and the site model (model.ts) share: where a warm-up
 * must end (SocTarget) and what the warm-up needs of a model (WarmUpModel, which SiteModel
 * is). Both import it from here, so neither imports the other's types.
 */
import type { History } from './history';

/** Where a warm-up must end: stored energy `storedWh` at `at`, approached at most `rateWhPerH` from either side. */
export interface SocTarget {
  at: number;
  storedWh: number;
  rateWhPerH: number;
}

/** The site model as the warm-up runs it: advanced over the past, then read (counters, samples, state). */
export interface WarmUpModel {
  readonly history: History;
  readonly battInWh: number;
  readonly battOutWh: number;
  readonly pvOutWh: number;
  readonly gridInWh: number;
  readonly gridOutWh: number;
  readonly loadWh: number;
  advanceTo(target: number, minStepMs?: number): void;
  /** The state in model-quantities.ts order. */
  snapshot(): Float64Array;
}
