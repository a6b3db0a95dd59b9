/**
 * The schedule node's editor code (window.EmsPartnerSchedulePanel, resources/schedule-panel.js), which
 * ems-schedule.html names in its definition: the validators (the power limits from the runtime's table of
 * limits, resources/limits.js), the labels, the form's TypedInputs and pickers.
 */
import type { EditorNode, Validator } from '../../editor/editor';

const NODE_TYPE = 'ems-schedule';
function E(): Window['EmsPartnerEditor'] {
  return window.EmsPartnerEditor;
}
const i18n = E().translator(NODE_TYPE);
const fieldRules = E().validators(NODE_TYPE);

function typeOf(node: EditorNode, name: string): string {
  return (E().field(node, name + 'Type') as string) || 'str';
}
function unitOf(key: string, units: readonly string[]): Validator {
  return fieldRules.named(key, function (value) {
    return (
      value === undefined || units.indexOf(value as string) >= 0 || i18n('errors.unit', { units: units.join(', ') })
    );
  });
}
function verifies(node: EditorNode): boolean {
  const on = E().field(node, 'verify');
  return on === true || on === 'true';
}
// A device of the delivery check: empty is allowed (a report then says which one is missing).
function device(role: 'battery' | 'pv' | 'meter'): Validator {
  return fieldRules.named(role + 'Device', function (value, opt) {
    if (value === undefined || !verifies(this) || String(value).trim() === '') {
      return true;
    }
    return E().typed(value, typeOf(this, role + 'Device'), opt);
  });
}
function range(key: string, min: number, max?: number): Validator {
  return fieldRules.named(key, function (value) {
    if (value === undefined || String(value).trim() === '' || !verifies(this)) {
      return true;
    }
    const amount = E().num(value);
    return (
      (isFinite(amount) && amount >= min && (max === undefined || amount <= max)) ||
      i18n('errors.range', { min: min, max: max === undefined ? '∞' : max })
    );
  });
}

export const validate: Record<string, Validator> = {
  site: fieldRules.named('site', function (value, opt) {
    return E().typed(value, typeOf(this, 'site'), opt);
  }),
  essUnit: unitOf('essUnit', ['W', 'kW', 'MW']),
  curtailmentUnit: unitOf('curtailmentUnit', ['W', 'kW', 'MW', '%']),
  gridUnit: unitOf('gridUnit', ['W', 'kW', 'MW']),
  maxEssPower: fieldRules.limit('maxEssPower', { rating: true }),
  maxCurtailment: fieldRules.limit('maxCurtailment', { rating: true }),
  maxGridPower: fieldRules.limit('maxGridPower', { rating: true }),
  maxGridLimit: fieldRules.limit('maxGridLimit', { rating: true }),
  pvPeakPower: fieldRules.limit('pvPeakPower', { empty: true }),
  store: fieldRules.named('store', function (value) {
    return value === undefined || /^[A-Za-z0-9_]{0,64}$/.test(String(value).trim()) || i18n('errors.store');
  }),
  batteryDevice: device('battery'),
  pvDevice: device('pv'),
  meterDevice: device('meter'),
  tolerance: range('tolerance', 0, 100),
  toleranceMin: range('toleranceMin', 0),
};
export const paletteLabel = E().paletteLabelOf(NODE_TYPE, 'schedule');
export const labelStyle = E().labelStyle;
export function label(this: RedEditorNode): string {
  return (this.name as string) || i18n('paletteLabel');
}
export function inputLabels(): string {
  return i18n('label.inputLabel');
}
export function outputLabels(index: number): string {
  return i18n(index === 0 ? 'label.outputLabel' : 'label.reportLabel');
}
export function oneditprepare(this: RedEditorNode): void {
  E().unitSelects(this); // the W/kW/MW(/%) lists, from protocol/limits.ts
  E().upgradeForm(this, 'node-input-'); // a node of an older version (migrations.js), and its open form
  const refTypes = E().REF_TYPES;
  $('#node-input-site').typedInput({ default: 'str', types: refTypes, typeField: '#node-input-siteType' });
  ['battery', 'pv', 'meter'].forEach(function (role) {
    $('#node-input-' + role + 'Device').typedInput({
      default: 'str',
      types: refTypes,
      typeField: '#node-input-' + role + 'DeviceType',
    });
  });
  const $verify = $('#node-input-verify');
  function update(): void {
    $('#node-input-verify-rows').toggle($verify.is(':checked'));
  }
  $verify.on('change', update);
  update();
  // The limits' placeholders say what an empty one is for the site chosen: its rating, or none listed.
  E().attach({ list: 'sites', ref: 'site', onRender: E().ratingHints(NODE_TYPE) });
  // The device pickers list the devices of their kind, of the site when one is typed (as in site steer).
  E().attachDevicePickers();
}
