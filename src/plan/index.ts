/**
 * Plan room: pure planning functions beside the protocol (they import src/protocol only; no
 * I/O, no clock, no Node-RED). The price → battery planner makes slots the `ems-schedule`
 * node plays; the site planner adds PV, load, import and export prices and grid limits and
 * finds the exact optimum of that LP; planBattery routes between them.
 */
// Tagged lazy: used only by the ems-plan node, which calls it by name and loads this module on its first plan
// (lazyFunctions), so knip sees no use of it (knip.jsonc).
export { planFromPrices, type PricePlan, type PlanSlot } from './price-plan';
export {
  parsePriceUnit,
  /** @lazy */
  numberIn,
  MAX_PRICE_SLOTS,
  type PricePlanInput,
  type PriceSlotInput,
  type BatteryInput,
} from './price-input';
export { planSite, type SitePlan, type SitePlanSlot } from './site-plan';
export { planBattery, isSitePlan, type BatteryPlanInput } from './battery-plan';
export { type SitePlanInput, type SiteBatteryInput, type SiteLimitsInput, type SocTargetInput } from './site-input';
export {
  readPriceFeed,
  applyPriceFormula,
  parsePriceFormula,
  type PriceFormula,
  type PriceFeed,
  type FeedSlot,
} from './price-feed';
export {
  loadForecastFromHistory,
  resampleForecast,
  readSeries,
  type HistoryForecastOptions,
  type ForecastSlots,
} from './forecast';
export {
  scheduleSlots,
  changedSlots,
  /** @lazy */
  changeTolerance,
  /** @lazy */
  deliveryShiftKWh,
  handOn,
  /** @lazy */
  socAt,
  type ScheduleSlot,
  type DeliveryReport,
} from './replan';
