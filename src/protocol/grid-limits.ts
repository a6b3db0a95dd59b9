/**
 * The grid limits of a site steer node (mode grid-limits; vendor notes): the upper and
 * lower limit of the site's grid power (positive imports, negative exports), each a number in the
 * node's unit or {value, unit}. Refused before sending: neither limit set, lowerLimit above
 * upperLimit, a limit beyond the node's maxGridLimit. Pure, leaf imports only: the runtime
 * (src/nodes/shared/steer-grid-limits.ts) and the editor (resources/steer-rules.js, through
 * steer-rules.ts) check with this one rule.
 */
import { ValidationError } from './errors';
import type { PowerUnit, PowerValue } from './types';
import { parsePowerValue, toWatts } from './units';

/** The limits one steering command sets (the API's gridLimits body without its validity). */
export interface GridLimits {
  upperLimit?: PowerValue;
  lowerLimit?: PowerValue;
}

/** What the grid-limits part of a node's settings holds. */
export interface GridLimitSettings {
  upperLimitUnit: PowerUnit;
  lowerLimitUnit: PowerUnit;
  /** Bound of |upperLimit| and |lowerLimit|, W (0 = none). */
  maxGridLimit: number;
}

/** Where each limit came from (msg.payload.upperLimit or the node's upperLimit), for refusals. */
export interface GridLimitFields {
  upper: string;
  lower: string;
}

const FORMS = "a number in the node's unit or {value, unit: W|kW|MW}; grid power, positive imports, negative exports";

/**
 * The limits a message sets (each `undefined`, null or '' = not set), checked against each
 * other and the node's maxGridLimit.
 */
export function parseGridLimits(
  s: GridLimitSettings,
  upper: unknown,
  lower: unknown,
  fields: GridLimitFields,
): GridLimits {
  const set = (v: unknown) => v !== undefined && v !== null && v !== '';
  const out: GridLimits = {};
  if (set(upper)) out.upperLimit = parsePowerValue(upper, fields.upper, s.upperLimitUnit);
  if (set(lower)) out.lowerLimit = parsePowerValue(lower, fields.lower, s.lowerLimitUnit);
  if (!out.upperLimit && !out.lowerLimit) {
    throw new ValidationError(
      'msg.payload',
      `sets no grid limit: send {upperLimit, lowerLimit} (at least one; each ${FORMS}), a body in the API's shape, or set the node's upper or lower limit; nothing was sent`,
    );
  }
  for (const [v, field] of [
    [out.upperLimit, fields.upper],
    [out.lowerLimit, fields.lower],
  ] as const) {
    if (v && s.maxGridLimit > 0 && Math.abs(toWatts(v)) > s.maxGridLimit) {
      throw new ValidationError(
        field,
        `must be within the node's limit maxGridLimit = ${s.maxGridLimit} W (either sign); got ${show(v)}; nothing was sent`,
      );
    }
  }
  if (out.upperLimit && out.lowerLimit && toWatts(out.lowerLimit) > toWatts(out.upperLimit)) {
    throw new ValidationError(
      fields.lower,
      `must not be above upperLimit (${show(out.upperLimit)}); got ${show(out.lowerLimit)}; nothing was sent`,
      'unprocessable',
    );
  }
  return out;
}

function show(v: PowerValue): string {
  return `${v.value} ${v.unit}`;
}
