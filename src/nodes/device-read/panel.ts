/**
 * The device read node's editor code (window.EmsPartnerDeviceReadPanel, resources/device-read-panel.js),
 * which ems-device-read.html names in its definition: the validators (numeric ones from the runtime's
 * table of limits, resources/limits.js), the labels, the form's TypedInputs and picker.
 */
import type { EditorNode, Validator } from '../../editor/editor';

const NODE_TYPE = 'ems-device-read';
function E(): Window['EmsPartnerEditor'] {
  return window.EmsPartnerEditor;
}
const i18n = E().translator(NODE_TYPE);
const fieldRules = E().validators(NODE_TYPE);
export const LIMITS = E().limits().LIMITS;

function mode(node: EditorNode): unknown {
  return E().field(node, 'mode') || 'map';
}
function typeOf(node: EditorNode, name: string): string {
  return (E().field(node, name + 'Type') as string) || 'str';
}
function several(value: unknown): boolean {
  return E().splitList(value).length > 1;
}
function filled(item: unknown): boolean {
  return typeof item === 'string' && item.trim() !== '';
}
function parsed(value: unknown): unknown {
  try {
    return JSON.parse(value as string);
  } catch {
    return undefined;
  }
}
// A JSON device: one reference in quotes, or a list of them (a fleet read: one message for all).
function fleet(value: unknown): true | string {
  const max = E().limits().SERVICE.maxFleetDevices;
  const refs = parsed(value);
  if (typeof refs === 'string') {
    return refs.trim() !== '' || i18n('errors.deviceJson');
  }
  if (!Array.isArray(refs) || refs.length === 0) {
    return i18n('errors.deviceJson');
  }
  if (refs.length > max) {
    return i18n('errors.fleetSize', { max: max });
  }
  return refs.every(filled) || i18n('errors.deviceJson');
}
// JSON properties: one name in quotes or a list of them; mode single reads one.
function jsonProperties(node: EditorNode, value: unknown): true | string {
  const props = parsed(value);
  const ok = filled(props) || (Array.isArray(props) && props.length > 0 && props.every(filled));
  if (!ok) {
    return i18n('errors.propertiesJson');
  }
  return (
    mode(node) !== 'single' || typeof props === 'string' || (props as unknown[]).length === 1 || i18n('errors.single')
  );
}
// maxSplit counts only for a split read (mode map or list).
function splits(node: EditorNode): boolean {
  const chosen = mode(node),
    on = E().field(node, 'split');
  return (on === true || on === 'true') && (chosen === 'map' || chosen === 'list');
}

export const validate: Record<string, Validator> = {
  device: fieldRules.named('device', function (value, opt) {
    if (mode(this) === 'devices') {
      return true;
    }
    const type = typeOf(this, 'device');
    return type === 'json' ? fleet(value) : E().typed(value, type, opt);
  }),
  properties: fieldRules.named('properties', function (value, opt) {
    if (mode(this) === 'devices' || value === undefined) {
      return true;
    }
    const type = typeOf(this, 'properties');
    if (type === 'json') {
      return jsonProperties(this, value);
    }
    const typed = E().typed(value, type, opt);
    if (typed !== true) {
      return typed;
    }
    return type !== 'str' || mode(this) !== 'single' || !several(value) || i18n('errors.single');
  }),
  maxSplit: fieldRules.limit('maxSplit', { applies: splits, empty: true }),
  interval: fieldRules.limit('interval'),
};
export const paletteLabel = E().paletteLabelOf(NODE_TYPE, 'device read');
export const labelStyle = E().labelStyle;
export function label(this: RedEditorNode): string {
  if (this.name) {
    return this.name as string;
  }
  if (this.mode === 'devices') {
    return i18n('label.devicesLabel');
  }
  if ((this.deviceType || 'str') === 'str' && this.device) {
    return this.device + ((this.propertiesType || 'str') === 'str' && this.properties ? ' ' + this.properties : '');
  }
  return i18n('paletteLabel');
}
export function inputLabels(): string {
  return i18n('label.inputLabel');
}
export function outputLabels(this: RedEditorNode): string {
  return i18n('mode.' + (this.mode || 'map'));
}
export function oneditprepare(this: RedEditorNode): void {
  E().upgradeForm(this, 'node-input-'); // a node of an older version (migrations.js), and its open form
  const $mode = $('#node-input-mode');
  const types = E().REF_TYPES.concat(['json']);
  $('#node-input-device').typedInput({ default: 'str', types: types, typeField: '#node-input-deviceType' });
  $('#node-input-properties').typedInput({ default: 'str', types: types, typeField: '#node-input-propertiesType' });
  E().bounds($('#node-input-interval'), 'interval');
  E().bounds($('#node-input-maxSplit'), 'maxSplit');
  if (this.maxSplit === undefined) {
    $('#node-input-maxSplit').val(LIMITS.maxSplit.dflt);
  }
  function update(): void {
    const chosen = $mode.val() || 'map';
    const splittable = chosen === 'map' || chosen === 'list';
    $('#node-input-device-rows').toggle(chosen !== 'devices');
    $('#node-input-split-row').toggle(splittable);
    $('#node-input-maxSplit-row').toggle(splittable && $('#node-input-split').is(':checked'));
    const $props = $('#node-input-properties');
    const warn = chosen === 'single' && $props.typedInput('type') === 'str' && several($props.typedInput('value'));
    $('#node-input-properties-warning').toggle(warn);
  }
  E().attach({
    list: 'devices',
    ref: 'device',
    prop: 'properties',
    multi: true,
    single: function () {
      return $mode.val() === 'single';
    },
    onRender: update,
  });
  $mode.on('change', update);
  $('#node-input-split').on('change', update);
  update();
}
