/**
 * The price plan node's editor code (window.EmsPartnerPlanPanel, resources/plan-panel.js), which
 * ems-plan.html names in its definition: each setting checked by the planner's own checks
 * (resources/plan-input.js, window.EmsPartnerPlanInput, built from src/nodes/plan/check.ts), the labels,
 * the form.
 */
import type { Validator } from '../../editor/editor';

const NODE_TYPE = 'ems-plan';
function E(): Window['EmsPartnerEditor'] {
  return window.EmsPartnerEditor;
}
const i18n = E().translator(NODE_TYPE);
const named = E().validators(NODE_TYPE).named;

/** The settings a check reads: each setting is checked with the ones it needs (src/nodes/plan/check.ts). */
const KEYS = [
  'capacityKWh',
  'maxChargeKW',
  'maxDischargeKW',
  'socMin',
  'socMax',
  'efficiency',
  'socEnd',
  'priceUnit',
  'steps',
  'chargeEfficiency',
  'dischargeEfficiency',
  'cycleCost',
  'endValue',
  'socTarget',
  'socTargetTime',
  'sellSocMin',
  'importMultiplier',
  'importFee',
  'importVat',
  'exportMultiplier',
  'exportFee',
  'exportVat',
  'importLimitKW',
  'exportLimitKW',
  'peakCost',
];
// The planner's checks are loaded here rather than by a <script src> tag: the editor shows a node type only
// once each such script loaded, so a missing file would hide it.
if (!window.EmsPartnerPlanInput) {
  $.ajax({
    url: (RED.settings.apiRootUrl || '') + 'resources/@ems-partner/node-red/plan-input.js',
    dataType: 'script',
    cache: true,
    global: false,
  }).fail(function () {
    /* not loaded: the runtime still refuses a bad setting at deploy */
  });
}
function set(value: unknown): boolean {
  return value !== undefined && value !== null && String(value).trim() !== '';
}
// A setting's validator: empty is allowed (the planner's default, or the message's value). Otherwise the
// runtime's own check with a sample price and SOC: true, or the words the runtime refuses it with at deploy.
function check(key: string): Validator {
  return named(key, function (value) {
    const planInput = window.EmsPartnerPlanInput;
    if (!set(value) || !planInput) {
      return true; // until plan-input.js has loaded, the runtime checks at deploy
    }
    const values: Record<string, unknown> = {};
    KEYS.forEach((k) => {
      values[k] = E().field(this, k);
    });
    return planInput.checkSetting(values, key);
  });
}

export const validate: Record<string, Validator> = {};
KEYS.forEach(function (key) {
  validate[key] = check(key);
});
export const paletteLabel = E().paletteLabelOf(NODE_TYPE, 'price plan');
export const labelStyle = E().labelStyle;
export function label(this: RedEditorNode): string {
  return (this.name as string) || i18n('paletteLabel');
}
export function inputLabels(): string {
  return i18n('label.inputLabel');
}
export function outputLabels(): string {
  return i18n('label.outputLabel');
}
export function oneditprepare(this: RedEditorNode): void {
  // A unit after a currency (EUR/MWh, from a flow or an import) is kept as it is: shown as an option of its own.
  const $unit = $('#node-input-priceUnit'),
    unit = (this.priceUnit as string) || 'kWh';
  let listed = false;
  $('#node-input-priceUnit option').each(function () {
    listed = listed || (this as HTMLOptionElement).value === unit;
  });
  if (!listed) {
    $('<option>').val(unit).text(unit).appendTo($unit);
  }
  $unit.val(unit);
}
