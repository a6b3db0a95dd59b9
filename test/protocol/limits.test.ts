/**
 * One table of limits (src/protocol/limits.ts): a config node, and each node, set
 * to each limit the editor allows deploys and works; a value just outside is refused by the
 * runtime with "<field> <the table's refusal>; got <value>" (the editor shows the same refusal
 * after the field's label: test/browser/editor-limits.test.ts). The table the editor loads
 * (resources/limits.js, made by `npm run build`) is the runtime's.
 */
import assert from 'node:assert/strict';
import { LIMITS, NOTES, UNITS, accepts, numberOf, refusal, type Limit, type LimitKey } from '../../src/protocol/limits';

describe('one table of limits: the runtime', () => {
  it('the table is sound: defaults within their limits, an excluded minimum only at 0, units and notes worded', () => {
    for (const [key, l] of Object.entries(LIMITS) as Array<[LimitKey, Limit]>) {
      if (l.dflt !== undefined) assert.ok(accepts(l, l.dflt), `${key}: default ${l.dflt}`);
      if (l.minExclusive) assert.equal(l.min, 0, key);
      if (l.max !== undefined) assert.ok(l.max > l.min, key);
      assert.ok(UNITS[l.unit] && (!l.note || NOTES[l.note]), key);
      const text = refusal(l);
      assert.match(text, /^must be /, key);
      assert.ok(
        text.includes(String(l.min)) && (l.max === undefined || text.includes(String(l.max))),
        `${key}: ${text}`,
      );
    }
    assert.equal(refusal(LIMITS.timeout), 'must be a whole number of milliseconds from 100 to 600000 (default 10000)');
    assert.equal(
      refusal(LIMITS.coalesceMs),
      'must be a whole number of milliseconds from 0 to 1000 (0 = off; default 2)',
    );
    assert.equal(refusal(LIMITS.maxEssPower), 'must be more than 0 W (empty = the site\'s rating; "none" = no limit)');
    assert.equal(refusal(LIMITS.duration), 'must be more than 0 minutes (default 15)');
    assert.equal(refusal(LIMITS.lastDays), 'must be a positive number of days, at most 1830 (default 24)');
    assert.equal(refusal(LIMITS.resolution, { dflt: false }), 'must be a whole number of hours from 1 to 720');
    // The ranges that deploy, where the editor of 0.1.0 allowed others.
    assert.deepEqual(
      [LIMITS.timeout, LIMITS.retries, LIMITS.concurrency, LIMITS.coalesceMs].map((l) => [l.min, l.max]),
      [
        [100, 600_000],
        [0, 20],
        [1, 256],
        [0, 1000],
      ],
    );
    // Not set is the default; a number or numeric string is its number; anything else is refused.
    assert.deepEqual(
      [undefined, null, '', 5, ' 7 ', '1e3', true, {}, '  ', 'x'].map((v) => numberOf(v, 3)),
      [3, 3, 3, 5, 7, 1000, NaN, NaN, NaN, NaN],
    );
  });
});
