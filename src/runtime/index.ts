/**
 * Runtime room: what the nodes on one config node share: the client, the read coalescer,
 * the per-site steering queue and the poll scheduler, built from the config node's settings.
 */
export * from './coalescer';
export * from './steering-queue';
export * from './poll-scheduler';
export * from './runtime';
export * from './schedule-player';
export * from './schedules';
export * from './delivery-check';
export * from './budget';
export * from './budget-registry';
export { builtInSimulatorState, setSimulatorLog } from './builtin-simulator';
export { FleetReadError, batteryCapacities, readFleet, reasonOf } from './fleet-read';
export { fleetWindow, mapBounded, type Settled } from './fleet';
export { SharedClock } from './shared-clock';
export { SteerGate, NotSteeringError, isNotSteering, type LeaderAnswer } from './group';
