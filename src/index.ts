/**
 * Public entry of @ems-partner/node-red for use from code (README "Use the client from code"):
 * the typed client of the partner API, its error classes, the protocol's types, units, time
 * helpers and validators, the price → battery planner, and the reference simulator. The
 * Node-RED nodes and the runtime they share are internal.
 */
export * from './protocol';
export {
  EmsClient, mergeSeries, toTimeSeriesRequest, MAX_SPANS, type ClientOptions, type CallOptions, type TimeSeriesQuery,
  type ConnectionState, type AuthConfig, type AuthType,
  ApiError, HttpError, RateLimitError, AuthenticationError, NotFoundError, RefusedError, ServerError,
  NetworkError, TimeoutError, AbortedError, DroppedError, BadResponseError, BudgetError, EmptyRequestError, type RequestInfo,
} from './client';
export { planFromPrices, parsePriceUnit, MAX_PRICE_SLOTS, type PricePlan, type PlanSlot, type PricePlanInput, type PriceSlotInput, type BatteryInput } from './plan';
export { startSimulator, type StartOptions, type StartedSimulator } from './simulator';
