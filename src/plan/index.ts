/**
 * Plan room: pure planning functions beside the protocol (they import src/protocol only; no
 * I/O, no clock, no Node-RED). The price → battery planner makes slots the `ems-schedule`
 * node plays.
 */
export { planFromPrices, type PricePlan, type PlanSlot } from './price-plan';
export { parsePriceUnit, MAX_PRICE_SLOTS, DEFAULT_STEPS, type PricePlanInput, type PriceSlotInput, type BatteryInput } from './price-input';
