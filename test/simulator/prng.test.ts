/**
 * The simulator's request ids: requestIds() unrolls hash32 for speed (one per request), so it
 * must give what hash32 gives: "req_" + hash32(seed, n, 0x51ed) and hash32(seed, n, 0x2705),
 * each as 8 lowercase hex digits. A change to hash32 that requestIds does not follow fails here.
 */
import assert from 'node:assert/strict';
import { hash32, requestIds } from '../../src/simulator/prng';

const slow = (seed: number, n: number) =>
  `req_${(hash32(seed, n, 0x51ed) >>> 0).toString(16).padStart(8, '0')}${(hash32(seed, n, 0x2705) >>> 0).toString(16).padStart(8, '0')}`;

describe('simulator: request ids', () => {
  it('are the two hash32 values of (seed, n) in hex, for seeds and counters of every size', () => {
    for (const seed of [0, 1, 42, -7, 0x7fffffff, 2 ** 31, 123456789]) {
      const ids = requestIds(seed);
      for (const n of [1, 2, 3, 255, 65_536, 1_000_000, 2 ** 31 - 1, 2 ** 32 + 5])
        assert.equal(ids(n), slow(seed, n), `seed ${seed}, n ${n}`);
      for (let n = 1; n <= 2000; n++) assert.equal(ids(n), slow(seed, n));
    }
  });

  it('have the form req_ + 16 lowercase hex digits and differ from one request to the next', () => {
    const ids = requestIds(1);
    const seen = new Set<string>();
    for (let n = 1; n <= 10_000; n++) {
      const id = ids(n);
      assert.match(id, /^req_[0-9a-f]{16}$/);
      seen.add(id);
    }
    assert.equal(seen.size, 10_000);
  });
});
