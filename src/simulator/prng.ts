/**
 * Deterministic randomness for the simulator: a seeded PRNG (mulberry32) for streams of
 * draws (faults, latency) and a stateless integer hash for values that must depend only on
 * (seed, site, time bucket), so any instant can be evaluated in any order.
 */

/** mulberry32: a small, fast 32-bit PRNG. Returns a function giving floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

/** murmur3 finaliser: mixes a 32-bit integer. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A 32-bit hash of up to four integers (each taken modulo 2^32). */
export function hash32(a: number, b: number, c = 0, d = 0): number {
  let hash = fmix((a | 0) ^ 0x9e3779b9);
  hash = fmix(hash ^ Math.imul(b | 0, 0xcc9e2d51));
  hash = fmix(hash ^ Math.imul(c | 0, 0x1b873593));
  hash = fmix(hash ^ Math.imul(d | 0, 0xe6546b64));
  return hash;
}

/** A float in [0, 1) from up to four integers. */
export function hash01(a: number, b: number, c = 0, d = 0): number {
  return hash32(a, b, c, d) / 4294967296;
}

/** FNV-1a hash of a string, 32 bits. */
export function hashString(s: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    hash ^= s.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A reference in the vendor format (vendor notes): a three-letter type prefix, an underscore
 * and 12 base-62 characters, derived deterministically from `key`.
 */
export function makeReference(prefix: string, key: string): string {
  const next = mulberry32(hashString(`${prefix}:${key}`));
  let out = `${prefix}_`;
  for (let i = 0; i < 12; i++) out += BASE62[Math.floor(next() * 62)];
  return out;
}

/** Character codes of "0".."9", "a".."f". */
const HEX = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/**
 * Request IDs of a seed: n -> "req_" and 16 lowercase hex characters, hash32(seed, n, 0x51ed)
 * then hash32(seed, n, 0x2705), each as 8 digits. On the simulator's hot path (one per
 * request): the hash steps that depend only on the seed are done once, those that depend on
 * (seed, n) once for both halves, and the ID is made in one piece (a header value is checked
 * with a regular expression, which would first copy a concatenation into one string).
 */
export function requestIds(seed: number): (n: number) => string {
  const h0 = fmix((seed | 0) ^ 0x9e3779b9);
  const cHi = Math.imul(0x51ed, 0x1b873593);
  const cLo = Math.imul(0x2705, 0x1b873593);
  return (n) => {
    const h1 = fmix(h0 ^ Math.imul(n | 0, 0xcc9e2d51));
    // hash32's last step mixes d = 0: fmix(h ^ Math.imul(0, k)) = fmix(h).
    const hiWord = fmix(fmix(h1 ^ cHi));
    const loWord = fmix(fmix(h1 ^ cLo));
    return String.fromCharCode(
      114,
      101,
      113,
      95, // "req_"
      HEX[hiWord >>> 28],
      HEX[(hiWord >>> 24) & 15],
      HEX[(hiWord >>> 20) & 15],
      HEX[(hiWord >>> 16) & 15],
      HEX[(hiWord >>> 12) & 15],
      HEX[(hiWord >>> 8) & 15],
      HEX[(hiWord >>> 4) & 15],
      HEX[hiWord & 15],
      HEX[loWord >>> 28],
      HEX[(loWord >>> 24) & 15],
      HEX[(loWord >>> 20) & 15],
      HEX[(loWord >>> 16) & 15],
      HEX[(loWord >>> 12) & 15],
      HEX[(loWord >>> 8) & 15],
      HEX[(loWord >>> 4) & 15],
      HEX[loWord & 15],
    );
  };
}
