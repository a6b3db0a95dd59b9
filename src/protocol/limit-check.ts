/**
 * The runtime's check of a numeric setting against the table of limits (limits.ts): the one
 * place that turns a refusal into a ValidationError, "<field> <refusal>; got <value>".
 */
import { ValidationError } from './errors';
import { show } from './units';
import { accepts, numberOf, refusal, type Limit, type UnitKey } from './limits';

export interface SettingOptions {
  /** Text between the field and the refusal, e.g. "(config node) ". */
  prefix?: string;
  /** The unit the value is in, when not the limit's own (e.g. `last` in days). */
  unit?: UnitKey;
  /** true: a value that is not set is refused too (no default applies here, e.g. a message field). */
  required?: boolean;
}

/**
 * A numeric setting's value: its default when it is not set (undefined, null or ''), the
 * number when it lies within the limit; otherwise a ValidationError naming `field` with the
 * table's refusal, the same text the editor shows.
 */
export function limited(v: unknown, l: Limit, field: string, o: SettingOptions = {}): number {
  const value = numberOf(v, o.required ? undefined : l.dflt);
  if (!accepts(l, value))
    throw new ValidationError(field, `${o.prefix ?? ''}${refusal(l, { unit: o.unit })}; got ${show(v)}`);
  return value;
}
