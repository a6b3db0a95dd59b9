/** What the `ems-schedule` node's status says of a run: what it sets and until when, or when it starts. */
import { formatClock } from '../../protocol';
import type { PlayRun, SteeringCommand } from '../../runtime';
import { describeCommand, type Translate } from '../shared';

/** A run as one command, for its description ("ESS −200 kW until 09:15"). */
function asCommand(r: PlayRun): SteeringCommand {
  return { site: r.site, kind: 'combined', ...r.setting, validUntil: r.end };
}

/** "slot 12/96 · ESS −200 kW until 09:15", or "slots 12–20/96 · …" for a merged run. */
export function describeRun(r: PlayRun, t: Translate): string {
  const what = describeCommand(asCommand(r), true, t);
  return r.first === r.last
    ? t('slot', { slot: r.first + 1, total: r.total, what })
    : t('slots', { first: r.first + 1, last: r.last + 1, total: r.total, what });
}

/** "waiting: slot 1/96 at 09:00". */
export function describeNext(r: PlayRun, t: Translate): string {
  return t('waiting', { slot: r.first + 1, total: r.total, time: formatClock(r.start) });
}
