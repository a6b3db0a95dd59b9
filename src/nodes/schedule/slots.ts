/**
 * What the `ems-schedule` node makes of a checked schedule's slots before they play: each `%`
 * curtailment in W of the site's PV power, and a dry run's plan of the requests it would send.
 */
import { type ApiPaths, parseSlots, type ScheduleSlot, type SiteSummary, ValidationError } from '../../protocol';
import { commandsOf, type PercentCurtailment, type PlayRun, requestForCommand, type SentRequest } from '../../runtime';
import { checkSiteRatings, convertPercent } from '../shared';
import type { NodeSettings } from './settings';

/** Where the PV power for a `%` curtailment comes from (as in site steer). */
export interface PercentSources {
  mode: PercentCurtailment;
  msg: unknown;
  sites?: () => Promise<SiteSummary[]>;
}

/**
 * The slots with each `%` curtailment in W of the site's PV power (config node percentCurtailment
 * "convert"); a refusal names the slot (`msg.payload[3].curtailment`). Unchanged with "send".
 */
async function convertSlots(
  slots: ScheduleSlot[],
  site: string,
  at: string,
  settings: NodeSettings,
  pv: PercentSources,
): Promise<ScheduleSlot[]> {
  if (pv.mode === 'send' || !slots.some((x) => x.setting.productionCurtailment?.unit === '%')) return slots;
  const out: ScheduleSlot[] = [];
  for (const slot of slots) {
    const curtailment = slot.setting.productionCurtailment;
    if (curtailment?.unit !== '%') {
      out.push(slot);
      continue;
    }
    const field = `${at}[${slot.index}].curtailment`;
    try {
      const cmd = await convertPercent(
        { site, kind: 'curtailment', productionCurtailment: curtailment },
        pv.mode,
        { node: settings.pvPeakPower, msg: pv.msg, sites: pv.sites },
        { maxCurtailment: settings.maxCurtailment },
      );
      out.push({ ...slot, setting: { ...slot.setting, productionCurtailment: cmd.productionCurtailment } });
    } catch (e) {
      const refusal = e as ValidationError;
      throw new ValidationError(
        field,
        `(${curtailment.value} %) cannot be sent: ${refusal.message}`,
        refusal.kind ?? 'unprocessable',
      );
    }
  }
  return out;
}

/** One request of a dry run's plan: when it would be sent, what, and for which slots. */
export interface PlannedRequest {
  at: number;
  request: SentRequest;
  slots: number[];
}

/** The requests a schedule would send (dry run): each at its run's start, or now for the run in progress. */
export function planOf(runs: readonly PlayRun[], now: number, paths?: Partial<ApiPaths>): PlannedRequest[] {
  return runs.flatMap((run) =>
    commandsOf(run).map((cmd) => ({
      at: Math.max(run.start, now),
      request: requestForCommand(cmd, paths),
      slots: run.slots.map((x) => x.index),
    })),
  );
}

/**
 * A message's slots (`payload`), checked (protocol/schedule.ts), each `%` curtailment in W, and
 * (a schedule to play) each within the site's ratings where a limit is not set.
 */
export async function checkSlots(
  payload: unknown,
  settings: NodeSettings,
  siteRef: string,
  now: number,
  pv: PercentSources & { sites: () => Promise<SiteSummary[]> },
): Promise<ScheduleSlot[]> {
  const at = Array.isArray(payload) ? 'msg.payload' : 'msg.payload.slots';
  const slots = await convertSlots(parseSlots(payload, settings, now), siteRef, at, settings, pv);
  // A limit not set is the site's rating: every slot within it, or nothing of the schedule is
  // played (a dry run reads nothing: the rating is checked when the schedule is played).
  for (const slot of settings.dryRun ? [] : slots) {
    await checkSiteRatings(
      slot.setting,
      settings.rating,
      siteRef,
      { sites: pv.sites, pvW: settings.pvPeakPower, pvFrom: "the node's pvPeakPower" },
      (part) =>
        `${at}[${slot.index}].${part === 'upperLimit' ? 'gridLimits.upper' : part === 'lowerLimit' ? 'gridLimits.lower' : part}`,
    );
  }
  return slots;
}
