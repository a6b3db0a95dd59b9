/**
 * The fleet the fleet-steering tests run on: 20 simulator sites with batteries of 5 to 20 kW and
 * SOCs from 10 to 86 %, their references, and a reference the service does not know.
 */
import type { SiteDefinition } from '../../../src/simulator';
import { makeReference } from '../../../src/simulator/prng';

/** A site with a battery of `kw` kW at `soc` %, no PV, a small constant load. */
function site(i: number, kw: number, soc = 50): SiteDefinition {
  const name = `fleet/${i}`;
  return {
    siteReference: makeReference('ste', name),
    name: `fleet ${i}`,
    battery: {
      deviceReference: makeReference('dvc', `${name}/b`),
      name: 'battery',
      maxPowerW: kw * 1000,
      capacityWh: kw * 2000,
      initialSoc: soc,
      initialConsumedWh: 1_000_000,
      initialProducedWh: 900_000,
    },
    pv: { deviceReference: makeReference('dvc', `${name}/p`), name: 'pv', peakW: 10_000, initialProducedWh: 5_000_000 },
    meter: {
      deviceReference: makeReference('dvc', `${name}/m`),
      name: 'meter',
      initialImportWh: 3_000_000,
      initialExportWh: 2_000_000,
    },
    load: { profile: 'residential', minW: 500, maxW: 500 },
    grid: { maxImportW: 1_000_000, maxExportW: 1_000_000 },
  };
}

// 20 sites: batteries of 5, 10, 15, 20 kW (repeating), SOC from 10 to 86 %.
export const SITES = Array.from({ length: 20 }, (_, i) => site(i, 5 * (1 + (i % 4)), 10 + 4 * i));
export const REFS = SITES.map((s) => s.siteReference);
export const UNKNOWN = 'ste_NotOnTheService';
