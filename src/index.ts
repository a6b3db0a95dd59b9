/**
 * Public entry of @ems-partner/node-red for use from code (README "Use the client from code"):
 * the typed client of the partner API, its error classes, the protocol's types, units, time
 * helpers and validators, the battery planners (price-only and site), price feeds and
 * formulas, forecasts from history, and the reference simulator. The
 * Node-RED nodes and the runtime they share are internal.
 */
// The protocol's types, units, time helpers and the validators of what is sent; its tables and
// internal helpers (limits, paths, portfolio weights, show/accepts/refusal) stay internal.
export type * from './protocol/types';
export {
  EmsError,
  ValidationError,
  POWER_UNITS,
  CURTAILMENT_UNITS,
  parsePowerUnit,
  parseCurtailmentUnit,
  toWatts,
  curtailmentToWatts,
  parsePowerValue,
  parseCurtailmentValue,
  formatPower,
  MINUTE_MS,
  HOUR_MS,
  DAY_MS,
  QUARTER_HOUR_MS,
  parseTime,
  toIsoSeconds,
  endOfQuarterHour,
  quarterHourValidUntil,
  validateReference,
  validateProperty,
  validateActiveSteering,
  validateEssRequest,
  validateCurtailmentRequest,
  validateGridTargetRequest,
  validateGridLimitsRequest,
  validateTimeSeriesRequest,
} from './protocol';
export {
  EmsClient,
  mergeSeries,
  toTimeSeriesRequest,
  MAX_SPANS,
  type ClientOptions,
  type CallOptions,
  type TimeSeriesQuery,
  type ConnectionState,
  type AuthConfig,
  type AuthType,
  ApiError,
  HttpError,
  RateLimitError,
  AuthenticationError,
  NotFoundError,
  RefusedError,
  ServerError,
  NetworkError,
  TimeoutError,
  AbortedError,
  DroppedError,
  BadResponseError,
  BudgetError,
  EmptyRequestError,
  type RequestInfo,
} from './client';
export {
  planFromPrices,
  parsePriceUnit,
  MAX_PRICE_SLOTS,
  type PricePlan,
  type PlanSlot,
  type PricePlanInput,
  type PriceSlotInput,
  type BatteryInput,
} from './plan';
export {
  planBattery,
  planSite,
  isSitePlan,
  readPriceFeed,
  applyPriceFormula,
  parsePriceFormula,
  loadForecastFromHistory,
  resampleForecast,
  type BatteryPlanInput,
  type SitePlan,
  type SitePlanSlot,
  type SitePlanInput,
  type SiteBatteryInput,
  type SiteLimitsInput,
  type SocTargetInput,
  type PriceFormula,
  type PriceFeed,
  type FeedSlot,
  type HistoryForecastOptions,
  type ForecastSlots,
} from './plan';
export { startSimulator, type StartOptions, type StartedSimulator } from './simulator';
// Types the exported classes and functions above refer to (type-only: nothing more at run time).
export type { SteeringRequest, SteeringBodies, SteeringAnswers, SteeringEndpoint, ApiPaths } from './protocol';
export type {
  BudgetRefusal,
  Redactor,
  ApiErrorOptions,
  RawResponse,
  ResponseShape,
  Attempt,
  AttemptHook,
  AttemptOutcome,
  Listener,
  RawOptions,
} from './client';
export type { SimulatorOptions, FaultConfig, OAuthOptions, SiteDefinition, LoadProfile } from './simulator';
