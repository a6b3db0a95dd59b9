/**
 * Simulated sites for the delivery-check tests: a 20 kWh / 10 kW battery at a
 * chosen SOC, no PV unless asked, a constant 1 kW load and wide grid limits, so what the site
 * delivers does not depend on the time of day the tests run at.
 */
import type { SiteDefinition } from '../../src/simulator';
import { makeReference } from '../../src/simulator/prng';

export function testSite(name: string, soc: number, pvW = 0): SiteDefinition {
  return {
    siteReference: makeReference('ste', `t/${name}`),
    name,
    battery: {
      deviceReference: makeReference('dvc', `t/${name}/b`),
      name: 'battery',
      maxPowerW: 10_000,
      capacityWh: 20_000,
      initialSoc: soc,
      initialConsumedWh: 1_000_000,
      initialProducedWh: 900_000,
    },
    pv: { deviceReference: makeReference('dvc', `t/${name}/p`), name: 'pv', peakW: pvW, initialProducedWh: 5_000_000 },
    meter: {
      deviceReference: makeReference('dvc', `t/${name}/m`),
      name: 'meter',
      initialImportWh: 3_000_000,
      initialExportWh: 2_000_000,
    },
    load: { profile: 'residential', minW: 1000, maxW: 1000 },
    grid: { maxImportW: 100_000, maxExportW: 100_000 },
  };
}

/** The three sites the tests use: room to follow (SOC 50 %), nearly empty (10 %), full (95 %). */
export const DELIVERY_SITES = { ok: testSite('ok', 50), low: testSite('low', 10), full: testSite('full', 95) };
