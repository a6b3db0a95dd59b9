/**
 * fmt, the rounding of values in status texts: digit for digit what String(Math.round(v * 100) / 100)
 * gives (it is made from whole hundredths instead), on edge values and on many generated ones.
 */
import assert from 'node:assert/strict';
import { fmt } from '../../../src/nodes/shared/status';

const reference = (v: number) => String(Math.round(v * 100) / 100);

describe('nodes: shared status, fmt', () => {
  it('edge values: zero and negative zero, halves, whole numbers, large and non-finite values', () => {
    const edges = [0, -0, 0.004, -0.004, 0.005, -0.005, 1.005, -1.005, 0.1, 0.29, 1.5, -1.5, 12.34, -12.3, 99.99, 100];
    const large = [1e12 + 0.01, 9.99e12 + 0.07, 1e13 - 0.01, 1e15, 1e21, 123456.785, NaN, Infinity, -Infinity];
    for (const value of [...edges, ...large]) assert.equal(fmt(value), reference(value), String(value));
    assert.equal(fmt(-0.05), '-0.05');
    assert.equal(fmt(50), '50');
    assert.equal(fmt('n/a'), 'n/a');
  });

  it('200,000 values over 16 orders of magnitude: the same text as String()', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let i = 0; i < 200_000; i++) {
      const value = (random() - 0.5) * 10 ** (Math.floor(random() * 16) - 3);
      assert.equal(fmt(value), reference(value), String(value));
    }
  });
});
