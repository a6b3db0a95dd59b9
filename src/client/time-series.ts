/**
 * Time series over any range: the checks of a query, its split into spans of at most 30 days
 * (each one request, aligned on the resolution) and the merge of their answers in order.
 */
import {
  accepts,
  HOUR_MS,
  LIMITS,
  parseIsoTime,
  parseTime,
  refusal,
  SERVICE,
  splitRange,
  type TimeInput,
  type TimeSeriesRequest,
  type TimeSeriesResponse,
  toIsoSeconds,
  validateProperty,
} from '../protocol';
import { ValidationError } from './errors';

export interface TimeSeriesQuery {
  property: string;
  start: TimeInput;
  end: TimeInput;
  /** Hours between points (default 1). */
  resolutionHours?: number;
}

/** At most this many 30-day requests for one time series (about 5 years). */
export const MAX_SPANS = SERVICE.maxSpans;

/** A query checked: its property and resolution, and the spans of at most 30 days it takes (at most MAX_SPANS). */
export function spansOf(q: TimeSeriesQuery): {
  property: string;
  resolutionHours: number;
  start: number;
  end: number;
  spans: Array<{ start: number; end: number }>;
} {
  const property = validateProperty(q.property, 'property');
  const res = resolutionOf(q.resolutionHours);
  // The API takes whole seconds: round up, so a start with milliseconds keeps its first point.
  const start = Math.ceil(parseTime(q.start, 'start') / 1000) * 1000;
  const end = Math.ceil(parseTime(q.end, 'end') / 1000) * 1000;
  if (!(end > start)) throw new ValidationError('end', `must be after start (${toIsoSeconds(start)})`);
  const spans = splitRange(start, end, res * HOUR_MS);
  if (spans.length > MAX_SPANS) {
    throw new ValidationError(
      'range',
      `must span at most ${MAX_SPANS} requests of ${SERVICE.maxSpanDays} days (about 5 years); got ${((end - start) / 86_400_000).toFixed(0)} days`,
    );
  }
  return { property, resolutionHours: res, start, end, spans };
}

/** Hours between points: a number within LIMITS.resolution (its default when not given). */
function resolutionOf(h: unknown): number {
  if (h === undefined) return LIMITS.resolution.dflt;
  if (typeof h !== 'number' || !accepts(LIMITS.resolution, h))
    throw new ValidationError('resolution', `${refusal(LIMITS.resolution)}; got ${String(h)}`);
  return h;
}

export function toTimeSeriesRequest(q: TimeSeriesQuery): TimeSeriesRequest {
  return {
    property: q.property,
    range: {
      type: 'absolute',
      start: toIsoSeconds(parseTime(q.start, 'start')),
      end: toIsoSeconds(parseTime(q.end, 'end')),
    },
    resolution: { value: resolutionOf(q.resolutionHours), unit: 'h' },
  };
}

/** Concatenates span responses in order, keeping only points in [start, end) and dropping repeats at seams. */
export function mergeSeries(parts: TimeSeriesResponse[], start: number, end: number): TimeSeriesResponse {
  const time: string[] = [];
  const data: number[] = [];
  let last = Number.NEGATIVE_INFINITY;
  for (const p of parts) {
    const count = Math.min(p.time?.length ?? 0, p.data?.length ?? 0);
    for (let i = 0; i < count; i++) {
      const stamp = parseIsoTime(p.time[i]);
      if (!(stamp > last) || stamp < start || stamp >= end) continue;
      last = stamp;
      time.push(p.time[i]);
      data.push(p.data[i]);
    }
  }
  return { time, data };
}
