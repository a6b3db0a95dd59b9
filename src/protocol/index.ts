/**
 * Protocol room: the partner API's data model (types, units, time, validation of what is
 * sent, the choices for what the specification does not show). No I/O, no Node-RED.
 */
export * from './types';
export * from './errors';
export * from './units';
export * from './time';
export * from './validate';
export { deepProperties, inputProblem, nestedDeeperThan, refusedProperties, type InputProblem } from './depth';
export * from './devices';
export {
  STEERING_ENDPOINTS,
  STEERING_ENDPOINT_NAMES,
  STEERING_TYPES,
  DISPLACES,
  steeringPath,
  steeringRequest,
  steeringTypeOf,
  type SteeringType,
  type SteeringRequest,
  type SteeringEndpoint,
  type SteeringBodies,
  type SteeringAnswers,
  type SteeringCommand,
} from './endpoints';
export { INPUTS, LIMITS, NO_LIMIT, SERVICE, accepts, numberOf, refusal, type Limit } from './limits';
export {
  LIMIT_OF,
  POWER_LIMIT_FORMS,
  POWER_LIMIT_KEYS,
  checkRatings,
  limitKeysOf,
  noLimitWarning,
  powerLimitsOf,
  ratingNeeded,
  ratingsOf,
  type PowerLimitKey,
  type PowerLimitSettings,
  type RatedComponents,
  type SiteRatings,
} from './site-ratings';
export { limited } from './limit-check';
export { DEFAULT_PATHS, PATH_SETTINGS, validatePath, resolvePaths, type ApiPaths } from './paths';
export {
  parseFleetSites,
  parseSiteList,
  portfolioSplitOf,
  splitPower,
  weightOf,
  PORTFOLIO_SPLITS,
  type FleetSite,
  type PortfolioSplit,
  type SplitSite,
  type Split,
} from './portfolio';
export {
  MODE_COMPONENTS,
  STEER_MODES,
  checkPowerLimits,
  panelRows,
  type PanelRow,
  type PowerLimits,
  type SteerComponent,
  type SteerMode,
} from './steer-modes';
export { MAX_SLOTS, parseSetting, parseSlots, storedTime, type ScheduleSettings, type ScheduleSlot } from './schedule';
export { runsOf, splitRun } from './schedule-runs';
export {
  DEFAULT_TOLERANCE,
  DEVICE_ROLE,
  type Asked,
  type DeliveryComponent,
  type DeliveryReport,
  type DeviceRole,
  type Tolerance,
} from './delivery';
export { FleetAggregator } from './aggregate';
export * from './paths';
export * from './endpoints';
export * from './schedule';
export * from './schedule-runs';
export * from './delivery';
export { parseGridLimits, type GridLimitFields, type GridLimitSettings, type GridLimits } from './grid-limits';
