/**
 * The `ems-plan` node's settings checked by the planner's own code: at deploy (checkDefaults,
 * a bad setting reported once) and in the editor (checkSetting, per field). The build bundles
 * this file with what it imports (protocol, the planner's input checks, message.ts and located.ts) into
 * resources/plan-input.js (window.EmsPartnerPlanInput), so the panel marks a setting with the
 * words the runtime refuses it with. Pure: no Node-RED; the clock is passed.
 */
import { ValidationError } from '../../protocol/errors';
import { parsePlanInput } from '../../plan/price-input';
import { SITE_BATTERY_FIELDS, SITE_FIELDS, parseSiteInput } from '../../plan/site-input';
import type { PlanProps } from './fields';
import { located } from './located';
import { gather } from './message';

type Rec = Record<string, unknown>;
const isObject = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);
const isSet = (v: unknown) => v !== undefined && v !== null && v !== '';

/** The `idle` setting: slots whose battery just follows PV and load are left to the site, or steered like the others. */
const IDLE_MODES = ['self-consumption', 'steer'];

/** Whether an input uses anything of the site model (the site planner's checks apply too). */
function needsSite(input: Rec): boolean {
  const battery = input.battery;
  return (
    SITE_FIELDS.some((k) => isSet(input[k])) ||
    (isObject(battery) && SITE_BATTERY_FIELDS.some((k) => isSet(battery[k])))
  );
}

/**
 * Checks the node's settings as the planner takes them, with a sample message (one price slot
 * from now, SOC 50 %, and 1 for a capacity or power left to the message): throws the refusal,
 * named as the node's setting (`socMax`, `importVat`, `socTargetTime`, `exportLimitKW`).
 */
export function checkDefaults(config: PlanProps, now = Date.now()): void {
  if (isSet(config.idle) && !IDLE_MODES.includes(config.idle as string)) {
    throw new ValidationError('idle', `must be ${IDLE_MODES.join(' or ')}; got ${JSON.stringify(config.idle)}`);
  }
  const msg = {
    payload: [{ start: now, end: now + 900_000, price: 0 }],
    soc: 50,
    battery: {
      capacityKWh: isSet(config.capacityKWh) ? undefined : 1,
      maxChargeKW: isSet(config.maxChargeKW) ? undefined : 1,
    },
  };
  const { input, from } = gather(msg, config, now);
  try {
    parsePlanInput(input);
    if (needsSite(input)) parseSiteInput({ ...input, now });
  } catch (err) {
    throw located(err, from);
  }
}

/** What each setting's check needs besides itself. */
const NEEDS: Record<string, string[]> = {
  socMax: ['socMin'],
  socEnd: ['socMin', 'socMax'],
  socTarget: ['socMin', 'socMax', 'socTargetTime'],
  socTargetTime: ['socTarget'],
  sellSocMin: ['socMin', 'socMax'],
};

/**
 * The editor's check of one setting `key` (with the settings it needs): true, or the runtime's
 * refusal without the field's name. A setting it needs that is refused by its own check does not
 * mark this one.
 */
export function checkSetting(config: Rec, key: string, now = Date.now()): true | string {
  const subset: Rec = {};
  for (const k of [key, ...(NEEDS[key] ?? [])]) if (isSet(config[k])) subset[k] = config[k];
  // a time of day is checked alone (its SOC may be left for the moment)
  if (key === 'socTargetTime' && !isSet(subset.socTarget)) subset.socTarget = 50;
  if (key === 'socTarget' && !isSet(subset.socTargetTime)) subset.socTargetTime = '00:00';
  try {
    checkDefaults(subset as PlanProps, now);
    return true;
  } catch (e) {
    if (!(e instanceof ValidationError) || e.field !== key) return true;
    return e.message.slice(e.field.length + 1).replace(/\bbattery\./g, '');
  }
}
