/** What the `ems-schedule` node's status says of a run: what it sets and until when, or when it starts. */
import { formatClock } from '../../protocol';
import type { PlayRun, SteeringCommand } from '../../runtime';
import { describeCommand, type Translate } from '../shared';

/** A run as one command, for its description ("ESS −200 kW until 09:15"). */
function asCommand(run: PlayRun): SteeringCommand {
  return { site: run.site, kind: 'combined', ...run.setting, validUntil: run.end };
}

/** "slot 12/96 · ESS −200 kW until 09:15", or "slots 12–20/96 · …" for a merged run. */
export function describeRun(run: PlayRun, t: Translate): string {
  const what = describeCommand(asCommand(run), true, t);
  return run.first === run.last
    ? t('slot', { slot: run.first + 1, total: run.total, what })
    : t('slots', { first: run.first + 1, last: run.last + 1, total: run.total, what });
}

/** "waiting: slot 1/96 at 09:00". */
export function describeNext(run: PlayRun, t: Translate): string {
  return t('waiting', { slot: run.first + 1, total: run.total, time: formatClock(run.start) });
}
