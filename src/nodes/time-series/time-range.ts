/**
 * Resolves a time-series node's range settings to [start, end) in epoch ms. `today` and
 * `yesterday` are days in the Node-RED server's local time zone; `last` is aligned down to
 * a whole hour so repeated reads give the same grid of points.
 */
import { DAY_MS, HOUR_MS, limited, LIMITS, parseTime, show, ValidationError } from '../../protocol';

export type RangeKind = 'last' | 'today' | 'yesterday' | 'absolute';

export interface RangeSettings {
  range: RangeKind;
  last?: number | string;
  lastUnit?: 'hours' | 'days';
  start?: unknown;
  end?: unknown;
}

function localMidnight(time: number, daysBack = 0): number {
  const date = new Date(time);
  date.setHours(0, 0, 0, 0);
  date.setDate(date.getDate() - daysBack);
  return date.getTime();
}

/** `prefix` goes before the field names in errors ("msg." when the times came from the message). */
export function resolveRange(settings: RangeSettings, now: number, prefix = ''): { start: number; end: number } {
  switch (settings.range) {
    case 'today':
      return { start: localMidnight(now), end: now };
    case 'yesterday':
      return { start: localMidnight(now, 1), end: localMidnight(now) };
    case 'absolute': {
      const start = parseTime(settings.start, `${prefix}start`);
      const end = settings.end === undefined || settings.end === '' ? now : parseTime(settings.end, `${prefix}end`);
      if (!(end > start))
        throw new ValidationError(`${prefix}end`, `must be after ${prefix}start (${new Date(start).toISOString()})`);
      return { start, end };
    }
    case 'last': {
      // Range and default from the table of limits, by the unit (`lastUnit` other than days counts as hours).
      const days = settings.lastUnit === 'days';
      const count = limited(settings.last, days ? LIMITS.lastDays : LIMITS.lastHours, 'last');
      const span = count * (days ? DAY_MS : HOUR_MS);
      return { start: Math.floor((now - span) / HOUR_MS) * HOUR_MS, end: now };
    }
    default:
      throw new ValidationError(
        'range',
        `must be one of last, today, yesterday, absolute; got ${show(settings.range)}`,
      );
  }
}
