/**
 * The upgrade steps of ems-plan's saved properties, in order of version. The machinery and
 * the one table of every node type are ../shared/migrations.ts; the editor gets these steps
 * bundled into resources/migrations.js, so this file imports only ../shared/migration-step.
 */
import { withDefaults, type Migration } from '../shared/migration-step';

export const STEPS: readonly Migration[] = [
  // the site model's settings ('' = the planner's default: √efficiency each way, no
  // wear, no SOC target, no end value, prices as given, no limit, no peak cost) and
  // re-planning (off: one plan per message, all its slots, as before).
  {
    version: 2,
    up: (c) =>
      withDefaults(c, {
        chargeEfficiency: '',
        dischargeEfficiency: '',
        cycleCost: '',
        endValue: '',
        socTarget: '',
        socTargetTime: '',
        importMultiplier: '',
        importFee: '',
        importVat: '',
        exportMultiplier: '',
        exportFee: '',
        exportVat: '',
        importLimitKW: '',
        exportLimitKW: '',
        peakCost: '',
        replan: false,
      }),
  },
  // So that re-planning does not lose against no control: slots whose battery just follows PV
  // and load are left to the site's own control ('self-consumption', a new node's default) or
  // steered like every other ('steer': what a saved node did before).
  { version: 3, up: (c) => withDefaults(c, { idle: 'steer' }) },
  // may the battery charge from the grid and discharge into it (both yes: what a saved node did before),
  // and a least SOC before selling ('' = none)
  { version: 4, up: (c) => withDefaults(c, { gridCharge: true, gridDischarge: true, sellSocMin: '' }) },
];
