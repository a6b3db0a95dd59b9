import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  parseTime,
  endOfQuarterHour,
  quarterHourValidUntil,
  splitRange,
  toIsoSeconds,
  parseIsoTime,
  HOUR_MS,
  DAY_MS,
  MAX_SPAN_MS,
  ValidationError,
} from '../../src/protocol';

describe('time', () => {
  it('accepts epoch ms, ISO strings (read as UTC without offset) and Dates', () => {
    const time = Date.UTC(2026, 10, 22, 10, 15);
    assert.equal(parseTime(time, 'x'), time);
    assert.equal(parseTime('2026-11-22T10:15:00Z', 'x'), time);
    assert.equal(parseTime('2026-11-22T11:15:00+01:00', 'x'), time);
    assert.equal(parseTime('2026-11-22T10:15:00', 'x'), time);
    assert.equal(parseTime(new Date(time), 'x'), time);
    assert.equal(parseTime(String(time), 'x'), time);
    assert.throws(
      () => parseTime('tomorrow', 'validUntil'),
      /validUntil must be epoch milliseconds, an ISO 8601 string or a Date/,
    );
    assert.throws(() => parseTime(new Date(NaN), 'x'), ValidationError);
  });

  it('finds the end of the quarter hour, or the next one when under 60 s remain', () => {
    const base = Date.UTC(2026, 10, 22, 14, 0);
    assert.equal(endOfQuarterHour(base + 7 * 60_000), base + 15 * 60_000);
    assert.equal(endOfQuarterHour(base), base + 15 * 60_000);
    assert.equal(quarterHourValidUntil(base + 14 * 60_000 + 30_000), base + 30 * 60_000);
    assert.equal(quarterHourValidUntil(base + 13 * 60_000), base + 15 * 60_000);
  });

  function checkSpans(start: number, end: number, step: number) {
    const spans = splitRange(start, end, step);
    assert.equal(spans[0].start, start);
    assert.equal(spans[spans.length - 1].end, end);
    for (let i = 0; i < spans.length; i++) {
      assert.ok(spans[i].end - spans[i].start <= MAX_SPAN_MS, 'at most 30 days');
      assert.equal((spans[i].start - start) % step, 0, 'span starts on the grid');
      if (i > 0) assert.equal(spans[i].start, spans[i - 1].end, 'no gap, no overlap');
    }
    return spans;
  }

  it('splits a 95-day range into 4 spans with neither gaps nor overlaps', () => {
    const start = Date.UTC(2026, 0, 1);
    assert.equal(checkSpans(start, start + 95 * DAY_MS, HOUR_MS).length, 4);
  });

  it('splits across month ends and DST changes without shifting a point (ranges are UTC)', () => {
    // Europe's DST changes: 2026-03-29 and 2026-10-25; month ends with 28, 30 and 31 days.
    const start = Date.parse('2026-01-31T23:00:00Z');
    const end = Date.parse('2026-11-01T01:00:00Z');
    const spans = checkSpans(start, end, HOUR_MS);
    const points = spans.flatMap((s) => {
      const hours = [];
      for (let t = s.start; t < s.end; t += HOUR_MS) hours.push(t);
      return hours;
    });
    assert.equal(points.length, (end - start) / HOUR_MS);
    assert.equal(new Set(points).size, points.length);
    assert.ok(spans.map((s) => toIsoSeconds(s.start)).every((iso) => iso.endsWith(':00:00Z')));
    // A 7-hour resolution does not divide 30 days: spans stay on the 7-hour grid.
    checkSpans(start, end, 7 * HOUR_MS);
  });

  it('returns no span for an empty range', () => {
    assert.deepEqual(splitRange(10, 10), []);
  });
});

describe('toIsoSeconds', () => {
  const plain = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');

  it('formats like Date#toISOString without milliseconds, for any time a Date can hold', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (t) => toIsoSeconds(t) === plain(t)),
      { numRuns: 20_000 },
    );
    for (const t of [
      0,
      -1,
      999,
      1000,
      DAY_MS - 1,
      -DAY_MS,
      Date.parse('9999-12-31T23:59:59.999Z'),
      Date.UTC(10000, 0, 1),
      -62_167_219_200_001,
      8.64e15,
      -8.64e15,
    ]) {
      assert.equal(toIsoSeconds(t), plain(t), String(t));
    }
    // Consecutive points of one day, as the simulator formats them.
    for (let t = Date.parse('2026-03-29T00:00:00Z'); t < Date.parse('2026-03-30T01:00:00Z'); t += 15 * 60_000 + 7)
      assert.equal(toIsoSeconds(t), plain(t));
  });

  it('throws like Date#toISOString for times a Date cannot hold', () => {
    for (const t of [Number.NaN, Infinity, 8.64e15 + 1, -8.64e15 - 1]) assert.throws(() => toIsoSeconds(t), RangeError);
  });
});

describe('parseIsoTime', () => {
  it("parses like Date.parse: the API's own form, other ISO forms and junk", () => {
    const iso = fc.integer({ min: Date.UTC(0, 0, 1), max: Date.UTC(9999, 11, 31) }).map((t) => toIsoSeconds(t));
    fc.assert(
      fc.property(iso, (s) => parseIsoTime(s) === Date.parse(s)),
      { numRuns: 20_000 },
    );
    const digits = fc.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    fc.assert(
      fc.property(digits, (s) => Object.is(parseIsoTime(s), Date.parse(s))),
      { numRuns: 20_000 },
    );
    for (const s of [
      '2026-11-22T10:15:00.123Z',
      '2026-11-22T11:15:00+01:00',
      '2026-11-22T24:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-11-22T1a:00:00Z',
      '2026-11-22 10:00:00Z',
      'xxxx-xx-xxTxx:xx:xxZ',
      '',
      '2026-11-22T10:15:60Z',
    ]) {
      assert.ok(Object.is(parseIsoTime(s), Date.parse(s)), s);
    }
  });
});
