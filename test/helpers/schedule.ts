/**
 * An `ems-schedule` node as the editor saves it with its defaults (shared by the schedule's Node-RED tests):
 * the current version, its power limits empty (the site's rating, on by default).
 */
import { DEFAULT_SITES } from '../../src/simulator';
import { currentVersion } from '../../src/nodes/shared/migrations';

export function scheduleNode(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'ems-schedule',
    site: DEFAULT_SITES[0].siteReference,
    siteType: 'str',
    essUnit: 'kW',
    curtailmentUnit: 'kW',
    gridUnit: 'kW',
    maxEssPower: '',
    maxCurtailment: '',
    maxGridPower: '',
    maxGridLimit: '',
    allowMaximizeGridImport: true,
    pvPeakPower: '',
    store: '',
    dryRun: false,
    verify: false,
    batteryDevice: '',
    batteryDeviceType: 'str',
    pvDevice: '',
    pvDeviceType: 'str',
    meterDevice: '',
    meterDeviceType: 'str',
    tolerance: 10,
    toleranceMin: 1000,
    version: currentVersion('ems-schedule'),
    wires: [['out'], ['reports']],
    ...extra,
  };
}
