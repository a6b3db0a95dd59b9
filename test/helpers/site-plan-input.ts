/** slots, a battery and a tolerance shared by the site planner tests (from plan-site). */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

export const HOUR_MS = 3_600_000;
export const QUARTER_MS = 900_000;
export const T0 = Date.UTC(2026, 5, 1);
export const SAMPLE = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'prices-sample-day.json'), 'utf8'),
);
export const slotsOf = (prices: number[], lenMs = HOUR_MS) =>
  prices.map((price, k) => ({ start: T0 + k * lenMs, end: T0 + (k + 1) * lenMs, price }));
export const battery = (o: Record<string, unknown> = {}) => ({
  capacityKWh: 10,
  maxChargeKW: 5,
  maxDischargeKW: 5,
  socMin: 10,
  socMax: 90,
  efficiency: 0.9,
  soc: 50,
  ...o,
});
export const close = (a: number, b: number, tol = 1e-9) =>
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${a} ≠ ${b}`);
