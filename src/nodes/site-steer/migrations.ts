/**
 * The upgrade steps of ems-site-steer's saved properties, in order of version. The machinery and
 * the one table of every node type are ../shared/migrations.ts; the editor gets these steps
 * bundled into resources/migrations.js, so this file imports only ../shared/migration-step.
 */
import { keepNoLimit, withDefaults, type Migration } from '../shared/migration-step';

export const STEPS: readonly Migration[] = [
  // 0.2.0: grid limit ('' = none, as the panel's default), maximize grid import
  // allowed, what stop does, the PV peak power a 'lift' stop sends ('' = unknown).
  {
    version: 2,
    up: (c) =>
      withDefaults(c, { maxGridPower: '', allowMaximizeGridImport: true, stopAction: 'expire', pvPeakPower: '' }),
  },
  // 0.3.0: grid-limits mode (its values, '' = from msg.payload) and its node limit ('' = none).
  {
    version: 3,
    up: (c) =>
      withDefaults(c, {
        upperLimitValue: '',
        upperLimitValueType: 'num',
        upperLimitUnit: 'kW',
        lowerLimitValue: '',
        lowerLimitValueType: 'num',
        lowerLimitUnit: 'kW',
        maxGridLimit: '',
      }),
  },
  // 0.3.0: the delivery check (off), the devices it measures with ('' = none),
  // how often while a signal lasts (0 = only when it ends) and its tolerance (% of the asked
  // power, at least toleranceMin W).
  {
    version: 4,
    up: (c) =>
      withDefaults(c, {
        verify: false,
        batteryDevice: '',
        batteryDeviceType: 'str',
        pvDevice: '',
        pvDeviceType: 'str',
        meterDevice: '',
        meterDeviceType: 'str',
        verifyEvery: 0,
        tolerance: 10,
        toleranceMin: 1000,
      }),
  },
  // 0.3.0: fleets: the node's site list ('' = the one site of `site`, or msg.sites)
  // and how portfolio mode splits the fleet's power (by battery rating).
  { version: 5, up: (c) => withDefaults(c, { sites: '', portfolioSplit: 'rating' }) },
  // Power limits on by default: an empty limit is now the site's rating, so a limit this flow
  // had off (not set, empty or 0) becomes "none" and stays off (the node warns at deploy).
  { version: 6, up: keepNoLimit },
];
