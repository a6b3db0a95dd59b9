/**
 * Sun and weather of the simulated sites: the sun's elevation by day and season at a fixed
 * place (50° N on the UTC meridian, so solar noon is about 12:00 UTC), the clear-sky share of
 * a PV system's peak power, and seeded weather: each day is clear, mixed or cloudy by a
 * seasonal Markov chain, with passing clouds within mixed days. Pure functions of
 * (seed, site key, time), so any instant can be evaluated in any order.
 */
import { DAY_MS, HOUR_MS, MINUTE_MS } from './time-units';
import { hash01 } from './prng';

/** Latitude of every simulated site, degrees north. */
const SITE_LATITUDE_DEG = 50;
/** Longitude, degrees east: on the UTC meridian, so UTC is local solar time (± the equation of time). */
const SITE_LONGITUDE_DEG = 0;

const RAD = Math.PI / 180;
const SIN_LAT = Math.sin(SITE_LATITUDE_DEG * RAD);
const COS_LAT = Math.cos(SITE_LATITUDE_DEG * RAD);
const YEAR_MS = 365.2422 * DAY_MS;
const Y2000 = Date.UTC(2000, 0, 1);

/** Fractional year, radians (0 on 1 January). */
function yearAngle(t: number): number {
  const fraction = ((t - Y2000) % YEAR_MS) / YEAR_MS;
  return 2 * Math.PI * (fraction < 0 ? fraction + 1 : fraction);
}

const SOLSTICE_ANGLE = yearAngle(Date.UTC(2000, 5, 21));

/** 1 at the summer solstice, 0 at the winter solstice, for a UTC day (at its noon). */
function summerOfDay(day: number): number {
  return 0.5 + 0.5 * Math.cos(yearAngle(day * DAY_MS + DAY_MS / 2) - SOLSTICE_ANGLE);
}

/** The sun's declination (its sine and cosine) and the equation of time (hours) of a UTC day, at its noon. */
interface SunDay {
  day: number;
  sinDecl: number;
  cosDecl: number;
  eotH: number;
  summer: number;
}
let sunDay: SunDay = { day: NaN, sinDecl: 0, cosDecl: 1, eotH: 0, summer: 0 };

/** The day's sun parameters (NOAA's series for declination and equation of time), cached for the last day asked. */
function sunOfDay(day: number): SunDay {
  if (sunDay.day === day) return sunDay;
  const angle = yearAngle(day * DAY_MS + DAY_MS / 2);
  const c1 = Math.cos(angle);
  const s1 = Math.sin(angle);
  const c2 = c1 * c1 - s1 * s1;
  const s2 = 2 * s1 * c1;
  const declination =
    0.006918 -
    0.399912 * c1 +
    0.070257 * s1 -
    0.006758 * c2 +
    0.000907 * s2 -
    0.002697 * Math.cos(3 * angle) +
    0.00148 * Math.sin(3 * angle);
  const eotMin = 229.18 * (0.000075 + 0.001868 * c1 - 0.032077 * s1 - 0.014615 * c2 - 0.040849 * s2);
  sunDay = {
    day,
    sinDecl: Math.sin(declination),
    cosDecl: Math.cos(declination),
    eotH: eotMin / 60,
    summer: summerOfDay(day),
  };
  return sunDay;
}

/** Sine of the sun's elevation at instant t (negative at night). */
export function sinSunElevation(t: number): number {
  const day = Math.floor(t / DAY_MS);
  const sun = sunOfDay(day);
  const solarH = (t - day * DAY_MS) / HOUR_MS + SITE_LONGITUDE_DEG / 15 + sun.eotH;
  const hourAngle = (solarH - 12) * 15 * RAD;
  return SIN_LAT * sun.sinDecl + COS_LAT * sun.cosDecl * Math.cos(hourAngle);
}

/**
 * Clear-sky output of a PV system as a share of its peak power, from the sun's elevation: an
 * air-mass damped irradiance on south-facing, tilted modules (about 0.8 at a summer noon,
 * 0.55 at an equinox noon and 0.28 at a winter noon at 50° N).
 */
export function clearSkyShare(sinElev: number): number {
  if (sinElev <= 0.01) return 0;
  return 0.88 * Math.pow(sinElev, 0.8) * Math.exp(0.057 - 0.057 / sinElev);
}

const CLEAR = 0;
const MIXED = 1;
const CLOUDY = 2;
type DayType = typeof CLEAR | typeof MIXED | typeof CLOUDY;

/** Cumulative transition probabilities [to clear, to clear or mixed] from each day type, summer and winter. */
const SUMMER = [
  [0.62, 0.9],
  [0.38, 0.78],
  [0.25, 0.65],
];
const WINTER = [
  [0.45, 0.75],
  [0.22, 0.6],
  [0.1, 0.4],
];
/** Days the chain is run for each evaluation; its start state is forgotten well within them. */
const CHAIN_DAYS = 12;

/** 1 at the summer solstice, 0 at the winter solstice (by UTC day). */
export function summerness(t: number): number {
  return sunOfDay(Math.floor(t / DAY_MS)).summer;
}

function transition(from: number, u: number, s: number): DayType {
  const summer = SUMMER[from];
  const winter = WINTER[from];
  if (u < s * summer[0] + (1 - s) * winter[0]) return CLEAR;
  if (u < s * summer[1] + (1 - s) * winter[1]) return MIXED;
  return CLOUDY;
}

let cacheSeed = NaN;
let cacheKey = NaN;
let cacheDay = NaN;
let cacheType: DayType = CLEAR;

/**
 * Weather type of the UTC day containing t: a Markov chain over days (persistent weather,
 * sunnier in summer), run from a hashed state CHAIN_DAYS before the day, so it is the same
 * whatever order days are asked in.
 */
function dayType(seed: number, key: number, t: number): DayType {
  const day = Math.floor(t / DAY_MS);
  if (day === cacheDay && key === cacheKey && seed === cacheSeed) return cacheType;
  let state = Math.floor(hash01(seed, key, 301, day - CHAIN_DAYS) * 3) as DayType;
  for (let d = day - CHAIN_DAYS + 1; d <= day; d++)
    state = transition(state, hash01(seed, key, 302, d), summerOfDay(d));
  cacheSeed = seed;
  cacheKey = key;
  cacheDay = day;
  cacheType = state;
  return state;
}

/** Linearly interpolated noise in [0, 1) with knots every `knotMs`. */
export function valueNoise(seed: number, key: number, channel: number, t: number, knotMs: number): number {
  const knots = t / knotMs;
  const knot = Math.floor(knots);
  const fraction = knots - knot;
  const atKnot = hash01(seed, key, channel, knot);
  const atNextKnot = hash01(seed, key, channel, knot + 1);
  return atKnot + (atNextKnot - atKnot) * fraction;
}

/**
 * Share of the clear-sky output that gets through the clouds at t: 0.9-1 on clear days,
 * 0.2-0.4 on cloudy ones, and passing clouds (0.28-1, changing within tens of minutes) on
 * mixed days.
 */
export function cloudFactor(seed: number, key: number, t: number): number {
  const type = dayType(seed, key, t);
  if (type === CLEAR) return 0.9 + 0.1 * valueNoise(seed, key, 303, t, 2 * HOUR_MS);
  if (type === CLOUDY) return 0.2 + 0.2 * valueNoise(seed, key, 304, t, HOUR_MS);
  const cloudNoise =
    0.65 * valueNoise(seed, key, 305, t, 20 * MINUTE_MS) + 0.35 * valueNoise(seed, key, 306, t, 2 * HOUR_MS);
  const cover = 1 / (1 + Math.exp(-(cloudNoise - 0.5) * 12));
  return 1 - 0.72 * cover;
}
