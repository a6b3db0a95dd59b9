/**
 * A checked schedule's slots turned into the runs a player sends: consecutive slots with
 * identical settings become one run, and a run longer than the config node's maxValidity is
 * split, so every signal ends. Pure (no I/O; `now` is passed in).
 */
import type { ScheduleRun, ScheduleSlot, SlotSetting } from './schedule';

/** A setting as a string: equal strings are equal settings (the parsers build them in one key order). */
export function settingKey(c: SlotSetting): string {
  return JSON.stringify(c);
}

/**
 * The runs of a schedule: consecutive slots (each starting where the one before ended) with
 * identical settings are merged; a run longer than `maxValidityMs` is split into runs of at most
 * that length. Slots that ended by `now` are left out (when given).
 */
export function runsOf(slots: readonly ScheduleSlot[], maxValidityMs?: number, now?: number): ScheduleRun[] {
  const merged: ScheduleRun[] = [];
  for (const s of slots) {
    if (now !== undefined && s.end <= now) continue;
    const prev = merged[merged.length - 1];
    if (prev && prev.end === s.start && settingKey(prev.setting) === settingKey(s.setting)) {
      prev.end = s.end;
      prev.last = s.index;
      prev.slots.push({ index: s.index, start: s.start, end: s.end });
    } else
      merged.push({
        start: s.start,
        end: s.end,
        first: s.index,
        last: s.index,
        setting: s.setting,
        slots: [{ index: s.index, start: s.start, end: s.end }],
      });
  }
  return maxValidityMs && maxValidityMs > 0 ? merged.flatMap((r) => splitRun(r, maxValidityMs)) : merged;
}

/** A run cut into runs of at most `maxMs` (each with the part of its slots within it). */
export function splitRun<R extends ScheduleRun>(r: R, maxMs: number): R[] {
  if (r.end - r.start <= maxMs) return [r];
  const out: R[] = [];
  for (let from = r.start; from < r.end; from += maxMs) {
    const to = Math.min(from + maxMs, r.end);
    const slots = r.slots
      .filter((s) => s.end > from && s.start < to)
      .map((s) => ({ index: s.index, start: Math.max(s.start, from), end: Math.min(s.end, to) }));
    out.push({ ...r, start: from, end: to, first: slots[0].index, last: slots[slots.length - 1].index, slots });
  }
  return out;
}
