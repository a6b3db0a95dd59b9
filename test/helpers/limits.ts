/**
 * The values a test of the table of limits sets (src/protocol/limits.ts), as the editor saves
 * them (strings): each limit the editor allows, and the values just outside it.
 */
import { LIMITS, type Limit, type LimitKey } from '../../src/protocol/limits';
import { show } from '../../src/protocol/units';

/** Smallest step "just outside" a limit: 1 for whole numbers, else a thousandth. */
const stepOf = (l: Limit) => (l.whole ? 1 : 0.001);
const str = (n: number) => String(Math.round(n * 1000) / 1000);

/** The limits the editor allows: the minimum (the least step above an excluded one) and the maximum (none: a large value). */
export function atLimits(l: Limit): string[] {
  return [str(l.minExclusive ? l.min + stepOf(l) : l.min), str(l.max ?? 1e9)];
}

/** Just outside: below the minimum (an excluded one itself), above the maximum, and a fraction for whole numbers. */
export function outside(l: Limit): string[] {
  const out = [str(l.minExclusive ? l.min : l.min - stepOf(l))];
  if (l.max !== undefined) out.push(str(l.max + stepOf(l)));
  if (l.whole) out.push(str(l.min + 0.5));
  return out;
}

/** The runtime's refusal of `value` for `field`: "<field> <refusal>; got <value>". */
export function runtimeMessage(field: string, refusal: string, value: unknown): string {
  return `${field} ${refusal}; got ${show(value)}`;
}

/** The refusal part of a runtime message about `field` ("<field> <refusal>; got <value>"), or undefined. */
export function refusalOf(message: string, field: string): string | undefined {
  const end = message.lastIndexOf('; got ');
  return message.startsWith(`${field} `) && end > field.length ? message.slice(field.length + 1, end) : undefined;
}

/** The numeric settings of the config node, in the order the runtime checks them. */
export const CONFIG_KEYS = [
  'maxBodyMB',
  'maxValidity',
  'timeout',
  'retries',
  'concurrency',
  'coalesceMs',
  'maxPerMinute',
  'maxPerDay',
] as const satisfies readonly LimitKey[];
/** The numeric settings of the site-steer node that are checked at deploy whatever its mode. */
export const STEER_POWER_KEYS = [
  'maxEssPower',
  'maxCurtailment',
  'maxGridPower',
  'maxGridLimit',
  'pvPeakPower',
] as const satisfies readonly LimitKey[];

export { LIMITS };
