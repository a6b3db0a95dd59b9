/**
 * Deterministic randomness for the simulator: a seeded PRNG (mulberry32) for streams of
 * draws (faults, latency) and a stateless integer hash for values that must depend only on
 * (seed, site, time bucket), so any instant can be evaluated in any order.
 */

/** mulberry32: a small, fast 32-bit PRNG. Returns a function giving floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
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
  let h = fmix((a | 0) ^ 0x9e3779b9);
  h = fmix(h ^ Math.imul(b | 0, 0xcc9e2d51));
  h = fmix(h ^ Math.imul(c | 0, 0x1b873593));
  h = fmix(h ^ Math.imul(d | 0, 0xe6546b64));
  return h;
}

/** A float in [0, 1) from up to four integers. */
export function hash01(a: number, b: number, c = 0, d = 0): number {
  return hash32(a, b, c, d) / 4294967296;
}

/** FNV-1a hash of a string, 32 bits. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
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
    const a = fmix(fmix(h1 ^ cHi));
    const b = fmix(fmix(h1 ^ cLo));
    return String.fromCharCode(
      114,
      101,
      113,
      95, // "req_"
      HEX[a >>> 28],
      HEX[(a >>> 24) & 15],
      HEX[(a >>> 20) & 15],
      HEX[(a >>> 16) & 15],
      HEX[(a >>> 12) & 15],
      HEX[(a >>> 8) & 15],
      HEX[(a >>> 4) & 15],
      HEX[a & 15],
      HEX[b >>> 28],
      HEX[(b >>> 24) & 15],
      HEX[(b >>> 20) & 15],
      HEX[(b >>> 16) & 15],
      HEX[(b >>> 12) & 15],
      HEX[(b >>> 8) & 15],
      HEX[(b >>> 4) & 15],
      HEX[b & 15],
    );
  };
}
