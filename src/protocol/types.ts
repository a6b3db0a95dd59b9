/**
 * Types of the partner API (partner-api-spec.md, section 2) and of the assumptions
 * this package makes where the specification says "not shown" (README, assumptions table).
 * This file is the single source of truth for resource shapes; it has no runtime code
 * besides the unit and property constant lists.
 */

import { CURTAILMENT_UNITS, POWER_UNITS } from './limits';

/** The unit lists live in limits.ts, the table the editor gets too (one source for both). */
export { CURTAILMENT_UNITS, POWER_UNITS };
export type PowerUnit = (typeof POWER_UNITS)[number];
export type CurtailmentUnit = (typeof CURTAILMENT_UNITS)[number];

/** A timestamp in epoch milliseconds. */
export type EpochMs = number;

/** Anything the package accepts as a point in time: epoch ms, ISO 8601 string, or Date. */
export type TimeInput = number | string | Date;

// ---------------------------------------------------------------- devices (2.1)

export interface DeviceProperty {
  name: string;
  unit: string;
}

/** A device after normalisation of the Get Devices response (assumption A1, tolerant reading). */
export interface Device {
  deviceReference: string;
  properties: DeviceProperty[];
  /** Any other fields of the service's device record are kept as they are. */
  [extra: string]: unknown;
}

// ----------------------------------------------------------- measurements (2.2-2.4)

/** Single measurement (spec 2.2, 4.2). */
export interface Measurement {
  timestamp: EpochMs;
  property: string;
  value: number;
  unit: string;
  reference: string;
}

/** An item of the list response (spec 2.3). */
export interface MeasurementListItem {
  timestamp: EpochMs;
  property: string;
  value: number;
  unit: string;
}

/** Response of GET /devices/{ref}/measurements (spec 4.4). */
export interface MeasurementList {
  reference: string;
  measurements: MeasurementListItem[];
}

/** A value of the map response (spec 2.4). */
export interface MeasurementMapValue {
  value: number;
  unit: string;
}

/** Response of GET /devices/{ref}/measurements/map (spec 4.3). */
export interface MeasurementMap {
  reference: string;
  measurements: Record<string, MeasurementMapValue>;
}

/** The three measurement reads: one property, a map of properties, a list of properties. */
export type ReadShape = 'single' | 'map' | 'list';

/**
 * A measurement read whose device reference and property names are validated already (by
 * the node that took them from a message, or by validateReadRequest for code): the runtime's
 * coalescer and the client's trusted read path send it as it is, without validating again.
 * `single` carries exactly one property.
 */
export interface ReadRequest<S extends ReadShape = ReadShape> {
  device: string;
  shape: S;
  properties: readonly string[];
}

/** What each read answers. */
export interface ReadAnswers {
  single: Measurement;
  map: MeasurementMap;
  list: MeasurementList;
}

// ------------------------------------------------------------ time series (2.5, 2.6)

export interface TimeSeriesRequest {
  property: string;
  range: { type: 'absolute'; start: string; end: string };
  resolution: { value: number; unit: 'h' };
}

export interface TimeSeriesResponse {
  /** ISO 8601 UTC timestamps. */
  time: string[];
  /** Values; data[i] belongs to time[i]. */
  data: number[];
}

// --------------------------------------------------------------- steering (2.8, 2.9)

export interface PowerValue {
  value: number;
  unit: PowerUnit;
}

/** Same shape as PowerValue; `%` is an assumption (A4): percent of installed production power. */
export interface CurtailmentValue {
  value: number;
  unit: CurtailmentUnit;
}

/** Body of POST /sites/{ref}/steering (spec 2.8, 4.6). Omitted components are not replaced. */
export interface ActiveSteeringRequest {
  /** Positive discharges, negative charges. */
  energyStorageSetting?: PowerValue;
  productionCurtailment?: CurtailmentValue;
  /** Assumption A3: the field name of the maximize-grid-import component. */
  maximizeGridImport?: boolean;
  validFrom?: EpochMs;
  validUntil: EpochMs;
}

/** Body of POST /sites/{ref}/steering/ess (spec 2.9, 4.7). */
export interface EssSteeringRequest {
  setting: PowerValue;
  validFrom?: EpochMs;
  validUntil: EpochMs;
}

/** Body of POST /sites/{ref}/steering/curtailment (assumption A2). */
export interface CurtailmentSteeringRequest {
  setting: CurtailmentValue;
  validFrom?: EpochMs;
  validUntil: EpochMs;
}

/** Body of POST /sites/{ref}/steering/grid-target (vendor notes). */
export interface GridTargetRequest {
  setpoint: PowerValue;
  deadband?: PowerValue;
  validFrom?: EpochMs;
  validUntil: EpochMs;
}

/**
 * Body of grid-limits steering (vendor notes; path assumed, configurable). Grid power: positive
 * imports, negative exports; at least one limit is set, and lowerLimit <= upperLimit.
 */
export interface GridLimitsRequest {
  upperLimit?: PowerValue;
  lowerLimit?: PowerValue;
  validFrom?: EpochMs;
  validUntil: EpochMs;
}

/** Steering responses echo the accepted payload plus a request ID (assumption A5). */
export type SteeringResponse<T> = T & { requestId: string };

/** Response of DELETE /sites/{ref}/steering/grid-target (assumption A5). */
export interface GridTargetCancelResponse {
  requestId: string;
  cancelled: boolean;
}

// --------------------------------------------------------- simulator-only resources

export interface SiteSummary {
  siteReference: string;
  name: string;
  devices: Array<{ deviceReference: string; kind: string }>;
  /** Installed PV power, W (the simulator lists it; a `%` curtailment is converted with it). */
  pvPeakPower?: number;
  /** Battery power rating, W, and usable capacity, Wh. */
  batteryMaxPower?: number;
  batteryCapacity?: number;
  /** Contractual grid limits, W: `upper` the most import (>= 0), `lower` the most export (<= 0). */
  gridLimits?: { upper: number; lower: number };
}

export interface ComponentState<V = number> {
  value: V;
  unit?: string;
  validFrom: EpochMs;
  validUntil: EpochMs;
}

/** GET /sites/{ref}/steering on the simulator: only the components that currently apply. */
export interface SteeringState {
  siteReference: string;
  components: {
    energyStorageSetting: ComponentState | null;
    productionCurtailment: ComponentState | null;
    maximizeGridImport: ComponentState<boolean> | null;
    gridTarget: (ComponentState & { deadband?: PowerValue }) | null;
    /** Limits in force, W (clamped to the contractual limits), and what the request asked. */
    gridLimits?: {
      upperW: number;
      lowerW: number;
      validFrom: EpochMs;
      validUntil: EpochMs;
      requested: Pick<GridLimitsRequest, 'upperLimit' | 'lowerLimit'>;
    } | null;
  };
}

/** GET /sites/{ref}/state on the simulator: live power flows in W (positive = as named). */
export interface SiteState {
  siteReference: string;
  timestamp: EpochMs;
  /** PV production, W (>= 0). */
  pvW: number;
  /** Site consumption, W (>= 0). */
  loadW: number;
  /** Battery power, W: positive discharges, negative charges (spec sign convention). */
  batteryW: number;
  /** Grid power, W: positive imports, negative exports. */
  gridW: number;
  /** Battery state of charge, % (0-100). */
  soc: number;
}
