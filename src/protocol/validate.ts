/**
 * Validation of everything the client sends, used by the client before a request and by
 * the simulator on what it receives: one source of truth for what is well-formed.
 * Each function returns a normalised copy (units normalised, times as epoch ms) and
 * throws a ValidationError naming the field and the accepted forms.
 */
import { ValidationError } from './errors';
import { parseCurtailmentValue, parsePowerValue, show, toWatts } from './units';
import { MAX_SPAN_MS, checkFuture, parseOptionalTime, parseTime, toIsoSeconds } from './time';
import { INPUTS, LIMITS, SERVICE, accepts, refusal } from './limits';
import type {
  ActiveSteeringRequest,
  CurtailmentSteeringRequest,
  EssSteeringRequest,
  GridLimitsRequest,
  GridTargetRequest,
  ReadRequest,
  ReadShape,
  TimeSeriesRequest,
} from './types';

/**
 * A reference becomes one path segment (URL-encoded, which leaves "." as it is). It must start
 * with a letter or digit: so "." and ".." (which a URL parser resolves, turning
 * /devices/../measurement into /measurement) can never be one, and neither can ".x", which
 * no reference of the service has (they start with a type prefix such as "dvc_").
 */
const REFERENCE_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
/** A property goes into the query; it starts with a letter, so it is never "." or ".." either. */
const PROPERTY_RE = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** A device or site reference: a non-empty string safe to put in a path (never "." or ".."). */
export function validateReference(input: unknown, field: string): string {
  const trimmed = typeof input === 'string' ? input.trim() : input;
  if (typeof trimmed !== 'string' || !REFERENCE_RE.test(trimmed)) {
    throw new ValidationError(
      field,
      `must be a reference such as "dvc_WTUv8brR7DnH" or "ste_6snE1E3xQLLg" (letters, digits, _ . : -, starting with a letter or digit); got ${show(input)}`,
    );
  }
  return trimmed;
}

export function validateProperty(input: unknown, field: string): string {
  const trimmed = typeof input === 'string' ? input.trim() : input;
  if (typeof trimmed !== 'string' || !PROPERTY_RE.test(trimmed)) {
    throw new ValidationError(
      field,
      `must be a property name such as "soc" or "totalEnergyConsumed"; got ${show(input)}`,
    );
  }
  return trimmed;
}

/** Most property names one request may carry (keeps every URL short: 100 names of at most 64 characters). */
export const MAX_PROPERTIES = SERVICE.maxProperties;

/**
 * One or more property names: an array, or a comma-separated string. Duplicates are dropped.
 * At most MAX_PROPERTIES distinct names (ValidationError naming the field and the limit). A
 * list of more than ten times that is refused before any name is looked at, so a million
 * names cost about as little as a hundred and no long URL is ever built.
 */
export function validateProperties(input: unknown, field: string): string[] {
  let parts: unknown[];
  if (Array.isArray(input)) {
    // More than ten times the limit is refused before any name is looked at, duplicates or not.
    if (input.length > INPUTS.propertyNames) throw tooMany(field, `${input.length}`);
    parts = input;
  } else if (typeof input === 'string') {
    // 100 names of at most 64 characters, with separators and blanks: far below this length.
    if (input.length > MAX_PROPERTIES * 80) {
      const count = input.split(',', MAX_PROPERTIES * 10 + 1).length;
      if (count > MAX_PROPERTIES)
        throw tooMany(field, count > MAX_PROPERTIES * 10 ? `more than ${MAX_PROPERTIES * 10}` : `${count}`);
    }
    parts = input
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '');
  } else
    throw new ValidationError(
      field,
      `must be a comma-separated string or an array of property names; got ${show(input)}`,
    );
  if (parts.length === 0)
    throw new ValidationError(field, 'must name at least one property, e.g. "soc,totalEnergyConsumed"');
  const out = [...new Set(parts.map((p, i) => validateProperty(p, `${field}[${i}]`)))];
  if (out.length > MAX_PROPERTIES) throw tooMany(field, `${out.length}`);
  return out;
}

/**
 * A measurement read as code gives it (the client's public methods): the device reference
 * (field deviceReference) and the property (single, field property) or properties (map and
 * list, field properties). The typed result is trusted from there on.
 */
export function validateReadRequest<S extends ReadShape>(
  shape: S,
  device: unknown,
  properties: unknown,
): ReadRequest<S> {
  const ref = validateReference(device, 'deviceReference');
  const props =
    shape === 'single' ? [validateProperty(properties, 'property')] : validateProperties(properties, 'properties');
  return { device: ref, shape, properties: props };
}

function tooMany(field: string, n: string): ValidationError {
  return new ValidationError(field, `must name at most ${MAX_PROPERTIES} properties per request; got ${n}`);
}

function plainObject(input: unknown, field: string): Record<string, unknown> {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || input instanceof Date) {
    throw new ValidationError(field, `must be a JSON object; got ${show(input)}`);
  }
  return input as Record<string, unknown>;
}

/** Validity window; with `now`, a validUntil that is not in the future is refused too. */
export function validateValidity(o: Record<string, unknown>, now?: number): { validFrom?: number; validUntil: number } {
  if (o.validUntil === undefined || o.validUntil === null) {
    throw new ValidationError('validUntil', 'is required: epoch milliseconds, an ISO 8601 string or a Date');
  }
  const validUntil = parseTime(o.validUntil, 'validUntil');
  const validFrom = parseOptionalTime(o.validFrom, 'validFrom');
  if (validFrom !== undefined && !(validUntil > validFrom)) {
    throw new ValidationError(
      'validUntil',
      `must be after validFrom (${new Date(validFrom).toISOString()}); got ${new Date(validUntil).toISOString()}`,
      'unprocessable',
    );
  }
  if (now !== undefined) checkFuture(validUntil, now);
  return validFrom === undefined ? { validUntil } : { validFrom, validUntil };
}

const STEERING_FIELDS = [
  'energyStorageSetting',
  'productionCurtailment',
  'maximizeGridImport',
  'validFrom',
  'validUntil',
];

/** Body of the combined steering endpoint. Components that are absent stay absent. */
export function validateActiveSteering(input: unknown, now?: number): ActiveSteeringRequest {
  const body = plainObject(input, 'body');
  for (const k of Object.keys(body)) {
    if (!STEERING_FIELDS.includes(k))
      throw new ValidationError(k, `is not a field of a steering request; accepted: ${STEERING_FIELDS.join(', ')}`);
  }
  const out: Partial<ActiveSteeringRequest> = {};
  if (body.energyStorageSetting !== undefined)
    out.energyStorageSetting = parsePowerValue(body.energyStorageSetting, 'energyStorageSetting');
  if (body.productionCurtailment !== undefined)
    out.productionCurtailment = parseCurtailmentValue(body.productionCurtailment, 'productionCurtailment');
  if (body.maximizeGridImport !== undefined) {
    if (typeof body.maximizeGridImport !== 'boolean')
      throw new ValidationError('maximizeGridImport', `must be true or false; got ${show(body.maximizeGridImport)}`);
    out.maximizeGridImport = body.maximizeGridImport;
  }
  if (
    out.energyStorageSetting === undefined &&
    out.productionCurtailment === undefined &&
    out.maximizeGridImport === undefined
  ) {
    throw new ValidationError(
      'body',
      'must set at least one of energyStorageSetting, productionCurtailment, maximizeGridImport',
    );
  }
  return { ...out, ...validateValidity(body, now) } as ActiveSteeringRequest;
}

function settingRequest<T>(
  input: unknown,
  now: number | undefined,
  parse: (v: unknown) => T,
): { setting: T; validFrom?: number; validUntil: number } {
  const body = plainObject(input, 'body');
  for (const k of Object.keys(body)) {
    if (!['setting', 'validFrom', 'validUntil'].includes(k))
      throw new ValidationError(k, 'is not a field of this request; accepted: setting, validFrom, validUntil');
  }
  if (body.setting === undefined) throw new ValidationError('setting', 'is required: {value: number, unit}');
  return { setting: parse(body.setting), ...validateValidity(body, now) };
}

export function validateEssRequest(input: unknown, now?: number): EssSteeringRequest {
  return settingRequest(input, now, (v) => parsePowerValue(v, 'setting'));
}

export function validateCurtailmentRequest(input: unknown, now?: number): CurtailmentSteeringRequest {
  return settingRequest(input, now, (v) => parseCurtailmentValue(v, 'setting'));
}

export function validateGridTargetRequest(input: unknown, now?: number): GridTargetRequest {
  const body = plainObject(input, 'body');
  for (const k of Object.keys(body)) {
    if (!['setpoint', 'deadband', 'validFrom', 'validUntil'].includes(k))
      throw new ValidationError(
        k,
        'is not a field of a grid-target request; accepted: setpoint, deadband, validFrom, validUntil',
      );
  }
  if (body.setpoint === undefined) throw new ValidationError('setpoint', 'is required: {value: number, unit: W|kW|MW}');
  const out: GridTargetRequest = {
    setpoint: parsePowerValue(body.setpoint, 'setpoint'),
    ...validateValidity(body, now),
  };
  if (body.deadband !== undefined) {
    out.deadband = parsePowerValue(body.deadband, 'deadband');
    if (out.deadband.value < 0)
      throw new ValidationError('deadband.value', `must be 0 or more; got ${out.deadband.value}`);
  }
  return out;
}

/** Body of grid-limits steering: at least one limit, and lowerLimit not above upperLimit. */
export function validateGridLimitsRequest(input: unknown, now?: number): GridLimitsRequest {
  const body = plainObject(input, 'body');
  for (const k of Object.keys(body)) {
    if (!['upperLimit', 'lowerLimit', 'validFrom', 'validUntil'].includes(k))
      throw new ValidationError(
        k,
        'is not a field of a grid-limits request; accepted: upperLimit, lowerLimit, validFrom, validUntil',
      );
  }
  const out: Partial<GridLimitsRequest> = {};
  if (body.upperLimit !== undefined && body.upperLimit !== null)
    out.upperLimit = parsePowerValue(body.upperLimit, 'upperLimit');
  if (body.lowerLimit !== undefined && body.lowerLimit !== null)
    out.lowerLimit = parsePowerValue(body.lowerLimit, 'lowerLimit');
  if (!out.upperLimit && !out.lowerLimit) {
    throw new ValidationError(
      'body',
      'must set upperLimit or lowerLimit (or both): {value: number, unit: W|kW|MW}, grid power, positive imports',
    );
  }
  if (out.upperLimit && out.lowerLimit && toWatts(out.lowerLimit) > toWatts(out.upperLimit)) {
    throw new ValidationError(
      'lowerLimit',
      `must not be above upperLimit (${out.upperLimit.value} ${out.upperLimit.unit}); got ${out.lowerLimit.value} ${out.lowerLimit.unit}`,
      'unprocessable',
    );
  }
  return { ...out, ...validateValidity(body, now) } as GridLimitsRequest;
}

/**
 * Time-series request. Accepts the API shape; range.start/end may be any time form and are
 * normalised to ISO 8601 UTC. Enforces one property and at most 30 days (spec 4.5, 8).
 */
export function validateTimeSeriesRequest(input: unknown): TimeSeriesRequest {
  const body = plainObject(input, 'body');
  if (Array.isArray(body.property) || (typeof body.property === 'string' && body.property.includes(','))) {
    throw new ValidationError('property', 'must be exactly one property per time-series request', 'unprocessable');
  }
  const property = validateProperty(body.property, 'property');
  const range = plainObject(body.range, 'range');
  if (range.type !== 'absolute') throw new ValidationError('range.type', `must be "absolute"; got ${show(range.type)}`);
  const start = parseTime(range.start, 'range.start');
  const end = parseTime(range.end, 'range.end');
  if (!(end > start)) throw new ValidationError('range.end', 'must be after range.start', 'unprocessable');
  if (end - start > MAX_SPAN_MS) {
    throw new ValidationError(
      'range',
      `must span at most 30 days; got ${((end - start) / 86_400_000).toFixed(2)} days`,
      'unprocessable',
    );
  }
  const res = plainObject(body.resolution, 'resolution');
  if (res.unit !== 'h') throw new ValidationError('resolution.unit', `must be "h"; got ${show(res.unit)}`);
  const value = res.value;
  if (typeof value !== 'number' || !accepts(LIMITS.resolution, value)) {
    throw new ValidationError('resolution.value', `${refusal(LIMITS.resolution, { dflt: false })}; got ${show(value)}`);
  }
  return {
    property,
    range: { type: 'absolute', start: toIsoSeconds(start), end: toIsoSeconds(end) },
    resolution: { value, unit: 'h' },
  };
}
