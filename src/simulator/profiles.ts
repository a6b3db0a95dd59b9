/**
 * Deterministic day profiles: PV potential (UTC sunrise ~6 h, sunset ~18 h, peak at 12 h,
 * a seeded daily cloud factor) and site load. Pure functions of (seed, site key, time), so
 * the live model and the baseline of the past see the same weather and consumption.
 */
import { DAY_MS, HOUR_MS, QUARTER_HOUR_MS } from '../protocol/time';
import { hash01 } from './prng';
import type { LoadProfile } from './sites';

/** Linearly interpolated noise in [0, 1) with knots every `knotMs`. */
function valueNoise(seed: number, key: number, channel: number, t: number, knotMs: number): number {
  const x = t / knotMs;
  const k = Math.floor(x);
  const f = x - k;
  const a = hash01(seed, key, channel, k);
  const b = hash01(seed, key, channel, k + 1);
  return a + (b - a) * f;
}

/** Hour of the UTC day, 0 <= h < 24. */
export function utcHour(t: number): number {
  const m = t % DAY_MS;
  return (m < 0 ? m + DAY_MS : m) / HOUR_MS;
}

/** Cloud factor of a UTC day, 0.3-1.0, skewed towards sunny days. */
export function dailyCloudFactor(seed: number, key: number, t: number): number {
  const day = Math.floor(t / DAY_MS);
  return 0.3 + 0.7 * Math.sqrt(hash01(seed, key, 101, day));
}

/** PV power available at instant t, W (before curtailment). */
export function pvPotentialW(seed: number, key: number, peakW: number, t: number): number {
  const h = utcHour(t);
  if (h <= 6 || h >= 18 || peakW <= 0) return 0;
  const clearSky = Math.pow(Math.sin((Math.PI * (h - 6)) / 12), 1.3);
  const passing = 0.85 + 0.15 * valueNoise(seed, key, 102, t, HOUR_MS);
  return peakW * clearSky * dailyCloudFactor(seed, key, t) * passing;
}

function bump(h: number, centre: number, width: number): number {
  const d = (h - centre) / width;
  return Math.exp(-d * d);
}

/** Shape of the load over the UTC day, 0-1. */
function loadShape(profile: LoadProfile, h: number): number {
  if (profile === 'commercial') {
    // Business hours 7-19 with smooth ramps; a little night load from cooling and servers.
    const up = 1 / (1 + Math.exp(-(h - 7) * 2.5));
    const down = 1 / (1 + Math.exp((h - 19) * 2.5));
    return 0.1 + 0.8 * up * down;
  }
  // Residential: morning and evening peaks, a small midday plateau.
  return Math.min(1, 0.55 * bump(h, 7, 1.2) + 0.8 * bump(h, 19, 2) + 0.15 * bump(h, 13, 3));
}

/** Site consumption at instant t, W, within [minW, maxW]. */
export function loadW(seed: number, key: number, profile: LoadProfile, minW: number, maxW: number, t: number): number {
  const noise = valueNoise(seed, key, 201, t, QUARTER_HOUR_MS) - 0.5;
  const s = Math.min(1, Math.max(0, loadShape(profile, utcHour(t)) + 0.12 * noise));
  return minW + (maxW - minW) * s;
}
