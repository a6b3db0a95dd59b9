/**
 * The site steer panel's form (part of window.EmsPartnerSiteSteerPanel, see panel.ts): the TypedInputs,
 * the rows each mode shows (the runtime's own list per mode, resources/steer-rules.js), the delivery
 * check's rows and output, the site and device pickers.
 */
import type { PanelRow } from '../../protocol/steer-modes';

const NODE_TYPE = 'ems-site-steer';
const VALUE_TYPES = ['num', 'msg', 'flow', 'global', 'env', 'jsonata'];
const ROLES = ['battery', 'pv', 'meter'] as const;
export type Role = (typeof ROLES)[number];
/** The delivery check: which device each mode is measured with. */
export const DEVICE_MODES: Record<Role, string[]> = {
  battery: ['ess', 'combined'],
  pv: ['curtailment', 'combined'],
  meter: ['grid-target', 'grid-limits', 'combined'],
};

function E(): Window['EmsPartnerEditor'] {
  return window.EmsPartnerEditor;
}
// The runtime's steering rules (read when used: the panel's scripts load in any order).
function R(): Window['EmsPartnerSteerRules'] {
  return window.EmsPartnerSteerRules;
}

function typedInputs(): void {
  $('#node-input-site').typedInput({ default: 'str', types: E().REF_TYPES, typeField: '#node-input-siteType' });
  ['essValue', 'curtailmentValue', 'gridTargetValue', 'upperLimitValue', 'lowerLimitValue'].forEach(function (name) {
    const dflt = name === 'essValue' || name === 'gridTargetValue' ? 'msg' : 'num';
    $('#node-input-' + name).typedInput({
      default: dflt,
      types: VALUE_TYPES,
      typeField: '#node-input-' + name + 'Type',
    });
  });
  ROLES.forEach(function (role) {
    $('#node-input-' + role + 'Device').typedInput({
      default: 'str',
      types: E().REF_TYPES,
      typeField: '#node-input-' + role + 'DeviceType',
    });
  });
}
// Every mode's rows (protocol/steer-modes.ts), each shown in the modes that use it; the duration with its validity.
function showModeRows($mode: JQuery, $validity: JQuery): void {
  const all = R().STEER_MODES.reduce(function (rows: PanelRow[], mode) {
    return rows.concat(
      R()
        .panelRows(mode)
        .filter(function (row) {
          return rows.indexOf(row) < 0;
        }),
    );
  }, []);
  const shown = R().panelRows($mode.val());
  all.forEach(function (row) {
    $('.node-input-' + row + '-row').toggle(shown.indexOf(row) >= 0);
  });
  // PV peak: what stop sends with "lift", and the power a % curtailment is converted with.
  $('#node-input-pvPeakPower-row').toggle(shown.indexOf('curtailment') >= 0);
  $('#node-input-duration-row').toggle($validity.val() === 'duration');
}
// The delivery check's rows, each device in the modes measured with it; output 2 carries its reports.
function showVerifyRows($mode: JQuery, $verify: JQuery): void {
  const on = $verify.prop('checked'),
    mode = $mode.val() || 'ess';
  $('.node-input-verify-row').toggle(on);
  ROLES.forEach(function (role) {
    $('.node-input-' + role + 'Device-rows').toggle(on && DEVICE_MODES[role].indexOf(mode) >= 0);
  });
  $('#node-input-outputs').val(on ? 2 : 1);
}

export function oneditprepare(this: RedEditorNode): void {
  E().unitSelects(this); // the W/kW/MW(/%) lists, from protocol/limits.ts
  E().upgradeForm(this, 'node-input-'); // a node of an older version (migrations.js), and its open form
  typedInputs();
  E().bounds($('#node-input-duration'), 'duration', { floor: 1 });
  const $mode = $('#node-input-mode'),
    $validity = $('#node-input-validity'),
    $stop = $('#node-input-stopAction'),
    $verify = $('#node-input-verify');
  if (!$stop.val()) {
    $stop.val('expire');
  }
  const update = () => showModeRows($mode, $validity);
  const verifyRows = () => showVerifyRows($mode, $verify);
  $mode.add($validity).add($stop).on('change', update);
  $mode.add($verify).on('change', verifyRows);
  update();
  verifyRows();
  // The limits' placeholders say what an empty one is for the site chosen: its rating, or none listed.
  E().attach({ list: 'sites', ref: 'site', onRender: E().ratingHints(NODE_TYPE) });
  // The device pickers list the devices of their kind, of the site when one is typed.
  E().attachDevicePickers();
}
