/**
 * Flow nodes on the first default site (its battery) as the node tests configure them: a device
 * read of the SOC, a time series of the SOC over the last 2 hours, a site steer in ess mode from
 * msg.payload in kW. `extra` overrides or adds settings.
 */
import { DEFAULT_SITES } from '../../src/simulator/index';

const COM = DEFAULT_SITES[0];
const BAT = COM.battery.deviceReference;

export const read = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-device-read',
  device: BAT,
  deviceType: 'str',
  mode: 'map',
  properties: 'soc',
  propertiesType: 'str',
  ...extra,
});
export const series = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-time-series',
  device: BAT,
  property: 'soc',
  range: 'last',
  last: 2,
  lastUnit: 'hours',
  resolution: 1,
  output: 'points',
  ...extra,
});
export const steer = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-site-steer',
  site: COM.siteReference,
  mode: 'ess',
  essValue: 'payload',
  essValueType: 'msg',
  essUnit: 'kW',
  validity: 'quarter-hour',
  ...extra,
});
