'use strict';
/** Generated simulator sites for fleet benchmarks: n sites of 3 devices (battery, pv, meter). */
const path = require('node:path');
const { DIST } = require('./common');

const { makeReference } = require(path.join(DIST, 'simulator', 'prng'));

function fleetSites(n) {
  const sites = [];
  for (let i = 0; i < n; i++) {
    const refKey = `fleet/${i}`;
    sites.push({
      siteReference: makeReference('ste', refKey),
      name: `Fleet site ${i}`,
      battery: {
        deviceReference: makeReference('dvc', `${refKey}/battery`),
        name: `Battery ${i}`,
        maxPowerW: 10_000,
        capacityWh: 20_000,
        initialSoc: 20 + (i % 60),
        initialConsumedWh: 17_600_000,
        initialProducedWh: 16_950_000,
      },
      pv: {
        deviceReference: makeReference('dvc', `${refKey}/pv`),
        name: `PV ${i}`,
        peakW: 10_000,
        initialProducedWh: 150_400_000,
      },
      meter: {
        deviceReference: makeReference('dvc', `${refKey}/meter`),
        name: `Meter ${i}`,
        initialImportWh: 31_200_000,
        initialExportWh: 110_400_000,
      },
      load: { profile: i % 2 ? 'residential' : 'commercial', minW: 500, maxW: 3_000 },
    });
  }
  return sites;
}

/** Device references of the generated sites, by kind. */
function fleetDevices(n) {
  const sites = fleetSites(n);
  return {
    batteries: sites.map((s) => s.battery.deviceReference),
    all: sites.flatMap((s) => [s.battery.deviceReference, s.pv.deviceReference, s.meter.deviceReference]),
  };
}

module.exports = { fleetSites, fleetDevices };
