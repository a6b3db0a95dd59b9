/**
 * The planner's refusals renamed to where each value came from: `prices[3].end` becomes
 * `msg.payload[3].end`, `battery.socMax` the node's `socMax` (from gather's record of sources).
 * Pure: the build serves it (through check.ts) to the editor in resources/plan-input.js.
 */
import { ValidationError } from '../../protocol/errors';

/** Planner fields whose refusals name a part (`prices[3].end`, `loadForecast[17]`, `importFormula.vat`), longest first when renamed. */
const FIELD_RE =
  /(?<![\w.])(?:prices|pvForecast|loadForecast|gridImportMax|gridExportMax|importFormula|exportFormula|site|battery)(?:\[\d+\]|\.\w+)+/g;

/** A planner field (`prices[3].end`, `battery.socMax`, `site.exportLimitW`) as where its value came from. */
function renamer(from: Record<string, string>): (field: string) => string {
  return (field) => {
    let best = '';
    for (const k of Object.keys(from)) {
      if ((field === k || field.startsWith(`${k}.`) || field.startsWith(`${k}[`)) && k.length > best.length) best = k;
    }
    if (best) return from[best] + field.slice(best.length);
    return field.replace(/^battery\./, '');
  };
}

/** The planner's refusal, its field and the fields it mentions renamed to where the values came from. */
export function located(err: unknown, from: Record<string, string>): unknown {
  if (!(err instanceof ValidationError)) return err;
  const name = renamer(from);
  const rest = err.message.slice(err.field.length + 1).replace(FIELD_RE, (f) => name(f));
  return new ValidationError(name(err.field), rest, err.kind);
}
