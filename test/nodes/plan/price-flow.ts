/**
 * The price plan's test inputs, shared by its node tests: the sample day of 96 quarter-hour prices,
 * quarter-hourly price lists and the `ems-plan` node as the editor saves it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { MINUTE_MS, QUARTER_HOUR_MS } from '../../../src/protocol/time';
import { T0 } from './flow';

const SAMPLE = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'prices-sample-day.json'), 'utf8'),
);
/** The sample day from `start`: 96 slots {start, end, price} (EUR/MWh). */
export const day = (start = T0) =>
  SAMPLE.slots.map((s: any) => ({
    start: start + s.offsetMinutes * MINUTE_MS,
    end: start + (s.offsetMinutes + 15) * MINUTE_MS,
    price: s.price,
  }));
export const quarters = (prices: number[], start = T0) =>
  prices.map((price, k) => ({ start: start + k * QUARTER_HOUR_MS, end: start + (k + 1) * QUARTER_HOUR_MS, price }));

/** An `ems-plan` node as the editor saves it with its defaults (capacity and power typed in). */
export const planNode = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-plan',
  name: '',
  capacityKWh: '100',
  maxChargeKW: '50',
  maxDischargeKW: '',
  socMin: '5',
  socMax: '95',
  efficiency: '0.9',
  socEnd: '',
  priceUnit: 'MWh',
  steps: '',
  ...extra,
});
