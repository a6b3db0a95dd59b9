/**
 * The upgrade steps of ems-partner-config's saved properties, in order of version. The machinery and
 * the one table of every node type are ../shared/migrations.ts; the editor gets these steps
 * bundled into resources/migrations.js, so this file imports only ../shared/migration-step.
 */
import { withDefaults, type Migration } from '../shared/migration-step';

export const STEPS: readonly Migration[] = [
  // 0.2.0: answer size and steering validity limits.
  { version: 2, up: (c) => withDefaults(c, { maxBodyMB: 10, maxValidity: 1440 }) },
  // 0.3.0: the paths the specification does not show ('' = the assumed default),
  // and how a % curtailment goes out. A config saved before sent `%` as it is, so it keeps
  // 'send'; a new config node starts at 'convert' (the published type has no %).
  {
    version: 3,
    up: (c) =>
      withDefaults(c, {
        pathDevices: '',
        pathSites: '',
        pathCurtailment: '',
        pathGridLimits: '',
        percentCurtailment: 'send',
      }),
  },
  // 0.3.0: the request budget: caps per minute and per day (0 = none), and what a
  // read does at a cap (refused, as a new config node starts).
  { version: 4, up: (c) => withDefaults(c, { maxPerMinute: 0, maxPerDay: 0, budgetMode: 'refuse' }) },
  // 0.3.0: the most messages a node holds at once; a flow saved before gets the default too, as no
  // node may hold an unbounded number.
  { version: 5, up: (c) => withDefaults(c, { maxWaiting: 10_000 }) },
  // The group of instances on one Redis: '' = no group (every instance alone, as before). Its
  // password is a credential, which needs no step.
  { version: 6, up: (c) => withDefaults(c, { redisUrl: '' }) },
];
