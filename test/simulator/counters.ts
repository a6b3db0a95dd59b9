/**
 * What the simulator's physics and time-series tests share: a fixed March morning, the two default
 * sites and their energy counters, and posting to / reading one measurement from a running simulator.
 */
import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../../src/simulator/index';

export const T0 = Date.UTC(2026, 2, 10, 6, 0, 0); // a March morning, UTC
export const COM = DEFAULT_SITES[0];
export const HOME = DEFAULT_SITES[1];
export const COUNTERS: Array<[string, string]> = [
  [COM.battery.deviceReference, 'totalEnergyConsumed'],
  [COM.battery.deviceReference, 'totalEnergyProduced'],
  [COM.pv.deviceReference, 'totalEnergyProduced'],
  [COM.meter.deviceReference, 'totalEnergyConsumed'],
  [COM.meter.deviceReference, 'totalEnergyProduced'],
  [HOME.battery.deviceReference, 'totalEnergyConsumed'],
  [HOME.pv.deviceReference, 'totalEnergyProduced'],
  [HOME.meter.deviceReference, 'totalEnergyProduced'],
];

export async function post(base: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  return json;
}

export async function read(base: string, ref: string, property: string): Promise<number> {
  const res = await fetch(`${base}/devices/${ref}/measurement?property=${property}`);
  const json = (await res.json()) as { value: number };
  assert.equal(res.status, 200);
  return json.value;
}
