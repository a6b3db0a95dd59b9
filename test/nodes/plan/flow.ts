/**
 * What every `ems-plan` node test builds on: the day the plans start (midnight UTC a day or two
 * ahead), hourly prices from it, and the standard flow around the node under test.
 */
import { HOUR_MS } from '../../../src/protocol/time';

/** Midnight (UTC) a day or two ahead: the sample day's start. */
export const T0 = Math.ceil((Date.now() + 24 * HOUR_MS) / (24 * HOUR_MS)) * 24 * HOUR_MS;
export const hours = (prices: number[], start = T0) =>
  prices.map((price, k) => ({ start: start + k * HOUR_MS, end: start + (k + 1) * HOUR_MS, price }));

/** The standard flow without a config node: the plan node `n` wired to `out`, a Catch node to `caught`. */
export function planFlow(node: Record<string, unknown>): object[] {
  const at = { z: 'tab', x: 100, y: 100 };
  return [
    { id: 'tab', type: 'tab', label: 'test' },
    { id: 'n', ...at, wires: [['out']], ...node },
    { id: 'out', ...at, type: 'helper', wires: [] },
    { id: 'c', ...at, type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', ...at, type: 'helper', wires: [] },
  ];
}
