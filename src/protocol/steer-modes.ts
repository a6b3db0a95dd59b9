/**
 * The site steer node's modes, the one table of what each mode steers, and the node's power
 * limits, checked. Pure, no I/O: the runtime builds its commands with it
 * (nodes/shared/steer-command.ts), and `npm run build` bundles it (with steer-rules.ts, its
 * editor entry) into resources/steer-rules.js, so the editor shows each mode's rows and
 * refuses a value beyond a limit with this very code and these very words.
 */
import { ValidationError } from './errors';
import { toWatts } from './units';
import type { CurtailmentValue, PowerValue } from './types';

/** `portfolio`: one ESS power for a fleet, split over its sites (site-steer/portfolio.ts); each site then gets an ESS command. */
export type SteerMode = 'combined' | 'ess' | 'curtailment' | 'grid-target' | 'grid-limits' | 'portfolio';
export const STEER_MODES: readonly SteerMode[] = [
  'combined',
  'ess',
  'curtailment',
  'grid-target',
  'grid-limits',
  'portfolio',
];

/** A component of a steering message (a key of the message object, and of the editor's value rows). */
export type SteerComponent =
  'energyStorage' | 'curtailment' | 'maximizeGridImport' | 'gridTarget' | 'deadband' | 'upperLimit' | 'lowerLimit';

/** The components each mode sends; a component set in another mode is refused (nothing is sent). */
export const MODE_COMPONENTS: Readonly<Record<SteerMode, readonly SteerComponent[]>> = {
  combined: ['energyStorage', 'curtailment', 'maximizeGridImport'],
  ess: ['energyStorage'],
  curtailment: ['curtailment'],
  'grid-target': ['gridTarget', 'deadband'],
  'grid-limits': ['upperLimit', 'lowerLimit'],
  portfolio: ['energyStorage'],
};

/** The editor's rows: one per component (energyStorage's is `ess`), and the settings that go with them. */
export type PanelRow = Exclude<SteerComponent, 'energyStorage'> | 'ess' | 'stopAction' | 'portfolioSplit';

/**
 * The value rows the editor shows in a mode (an unknown mode as `ess`), derived from
 * MODE_COMPONENTS: each component's row; `stopAction` where curtailment is steered (what stop
 * does to it); `portfolioSplit` in mode portfolio (how the fleet's power is split).
 */
export function panelRows(mode: unknown): PanelRow[] {
  const steerMode: SteerMode = STEER_MODES.includes(mode as SteerMode) ? (mode as SteerMode) : 'ess';
  const rows: PanelRow[] = MODE_COMPONENTS[steerMode].map((c) => (c === 'energyStorage' ? 'ess' : c));
  if (rows.includes('curtailment')) rows.push('stopAction');
  if (steerMode === 'portfolio') rows.push('portfolioSplit');
  return rows;
}

/** The node's power limits, W (0 = none). */
export interface PowerLimits {
  maxEssPower: number;
  maxCurtailment: number;
  /** Bound of |grid setpoint| and of the deadband. */
  maxGridPower: number;
}

/**
 * Refuses (ValidationError naming the component) a value beyond the node's limit: the battery
 * power and the grid setpoint in either sign, the curtailment (not a %) and the deadband.
 */
export function checkPowerLimits(
  s: PowerLimits,
  ess?: PowerValue,
  curt?: CurtailmentValue,
  grid?: { setpoint: PowerValue; deadband?: PowerValue },
): void {
  if (ess && s.maxEssPower > 0 && Math.abs(toWatts(ess)) > s.maxEssPower) {
    throw new ValidationError(
      'energyStorage',
      `must be within the node's limit maxEssPower = ${s.maxEssPower} W (either sign); got ${ess.value} ${ess.unit}; nothing was sent`,
    );
  }
  if (curt && curt.unit !== '%' && s.maxCurtailment > 0 && toWatts(curt as PowerValue) > s.maxCurtailment) {
    throw new ValidationError(
      'curtailment',
      `must be within the node's limit maxCurtailment = ${s.maxCurtailment} W; got ${curt.value} ${curt.unit}; nothing was sent`,
    );
  }
  if (grid && s.maxGridPower > 0 && Math.abs(toWatts(grid.setpoint)) > s.maxGridPower) {
    throw new ValidationError(
      'gridTarget',
      `must be within the node's limit maxGridPower = ${s.maxGridPower} W (either sign); got ${grid.setpoint.value} ${grid.setpoint.unit}; nothing was sent`,
    );
  }
  if (grid?.deadband && s.maxGridPower > 0 && toWatts(grid.deadband) > s.maxGridPower) {
    throw new ValidationError(
      'deadband',
      `must be within the node's limit maxGridPower = ${s.maxGridPower} W; got ${grid.deadband.value} ${grid.deadband.unit}; nothing was sent`,
    );
  }
}
