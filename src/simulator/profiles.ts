/**
 * Deterministic profiles of a site: the PV power available (the sun's position by day and
 * season and seeded weather, weather.ts) and the site's load (weekday and weekend profiles
 * over the UTC day, a seasonal level, a seeded level per day and quarter-hour noise). Pure
 * functions of (seed, site key, time), so the live model and its warm-up of the past
 * (history-warmup.ts) see the same weather and consumption.
 */
import { DAY_MS, HOUR_MS, QUARTER_HOUR_MS } from './time-units';
import { hash01 } from './prng';
import type { LoadProfile } from './sites';
import { clearSkyShare, cloudFactor, sinSunElevation, summerness, valueNoise } from './weather';

/** Hour of the UTC day, 0 <= h < 24. */
function utcHour(t: number): number {
  const msOfDay = t % DAY_MS;
  return (msOfDay < 0 ? msOfDay + DAY_MS : msOfDay) / HOUR_MS;
}

/** Day of the week of the UTC day containing t: 0 Sunday ... 6 Saturday. */
function weekday(t: number): number {
  const day = (Math.floor(t / DAY_MS) + 4) % 7; // 1 January 1970 was a Thursday
  return day < 0 ? day + 7 : day;
}

/** PV power available at instant t, W (before curtailment). */
export function pvPotentialW(seed: number, key: number, peakW: number, t: number): number {
  if (peakW <= 0) return 0;
  const share = clearSkyShare(sinSunElevation(t));
  if (share === 0) return 0;
  return peakW * share * cloudFactor(seed, key, t);
}

function bump(h: number, centre: number, width: number): number {
  const offset = (h - centre) / width;
  return Math.exp(-offset * offset);
}

function ramp(h: number, at: number, steep: number): number {
  return 1 / (1 + Math.exp(-(h - at) * steep));
}

/** Shape of the load over the UTC day, 0-1, by profile and day of the week. */
function loadShape(profile: LoadProfile, h: number, dow: number): number {
  if (profile === 'commercial') {
    // Business hours 7-19 on weekdays, 8-14 on Saturdays, closed on Sundays; a little night
    // load from cooling and servers.
    if (dow === 0) return 0.1 + 0.05 * bump(h, 13, 3);
    if (dow === 6) return 0.1 + 0.45 * ramp(h, 8, 2.5) * (1 - ramp(h, 14, 2.5));
    return 0.1 + 0.8 * ramp(h, 7, 2.5) * (1 - ramp(h, 19, 2.5));
  }
  // Residential: morning and evening peaks and a small midday plateau on weekdays; a later,
  // broader morning and more load at midday at weekends.
  if (dow === 0 || dow === 6)
    return Math.min(1, 0.4 * bump(h, 9.5, 1.8) + 0.8 * bump(h, 19, 2) + 0.35 * bump(h, 13, 2.5));
  return Math.min(1, 0.55 * bump(h, 7, 1.2) + 0.8 * bump(h, 19, 2) + 0.15 * bump(h, 13, 3));
}

/** Site consumption at instant t, W, within [minW, maxW]. */
export function loadW(seed: number, key: number, profile: LoadProfile, minW: number, maxW: number, t: number): number {
  const day = Math.floor(t / DAY_MS);
  // Homes use more in winter (light, heating pumps), businesses a little more in summer (cooling).
  const season = profile === 'residential' ? 1.1 - 0.2 * summerness(t) : 0.97 + 0.06 * summerness(t);
  const level = season * (0.92 + 0.16 * hash01(seed, key, 202, day));
  const noise = valueNoise(seed, key, 201, t, QUARTER_HOUR_MS) - 0.5;
  const shape = Math.min(1, Math.max(0, loadShape(profile, utcHour(t), weekday(t)) * level + 0.12 * noise));
  return minW + (maxW - minW) * shape;
}
