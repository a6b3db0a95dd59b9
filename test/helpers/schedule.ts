/** An `ems-schedule` node as the editor saves it with its defaults (shared by the schedule's Node-RED tests). */
import { DEFAULT_SITES } from '../../src/simulator';

export function scheduleNode(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'ems-schedule', site: DEFAULT_SITES[0].siteReference, siteType: 'str', essUnit: 'kW', curtailmentUnit: 'kW', gridUnit: 'kW',
    maxEssPower: 0, maxCurtailment: 0, maxGridPower: '', maxGridLimit: '', allowMaximizeGridImport: true, pvPeakPower: '',
    store: '', dryRun: false, verify: false, batteryDevice: '', batteryDeviceType: 'str', pvDevice: '', pvDeviceType: 'str',
    meterDevice: '', meterDeviceType: 'str', tolerance: 10, toleranceMin: 1000, wires: [['out'], ['reports']], ...extra,
  };
}
