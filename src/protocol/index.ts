/**
 * Protocol room: the partner API's data model (types, units, time, validation of what is
 * sent, the choices for what the specification does not show). No I/O, no Node-RED.
 */
export * from './types';
export * from './errors';
export * from './units';
export * from './time';
export * from './validate';
export { refusedProperties } from './depth';
export * from './devices';
export { INPUTS, LIMITS, SERVICE, accepts, numberOf, refusal, type Limit } from './limits';
export {
  POWER_LIMIT_KEYS,
  checkRatings,
  limitKeysOf,
  noLimitWarning,
  powerLimitsOf,
  ratingNeeded,
  ratingsOf,
  type PowerLimitKey,
  type RatedComponents,
} from './site-ratings';
export { limited } from './limit-check';
export {
  parseFleetSites,
  parseSiteList,
  portfolioSplitOf,
  splitPower,
  weightOf,
  type FleetSite,
  type PortfolioSplit,
} from './portfolio';
export { MODE_COMPONENTS, STEER_MODES, checkPowerLimits, panelRows, type SteerMode } from './steer-modes';
export { FleetAggregator } from './aggregate';
export * from './paths';
export * from './endpoints';
export * from './schedule';
export * from './schedule-runs';
export * from './delivery';
export { parseGridLimits, type GridLimitSettings } from './grid-limits';
