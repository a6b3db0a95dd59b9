/**
 * The time series node's editor code (window.EmsPartnerTimeSeriesPanel, resources/time-series-panel.js),
 * which ems-time-series.html names in its definition: the validators (numeric ones from the runtime's
 * table of limits, resources/limits.js), the labels, the form's TypedInputs and picker.
 */
import type { EditorNode, Validator } from '../../editor/editor';
import type { LimitKey } from '../../protocol/limits';

const NODE_TYPE = 'ems-time-series';
const TIME_TYPES = ['str', 'num', 'msg', 'flow', 'global', 'env'];
function E(): Window['EmsPartnerEditor'] {
  return window.EmsPartnerEditor;
}
const i18n = E().translator(NODE_TYPE);
const fieldRules = E().validators(NODE_TYPE);
export const LIMITS = E().limits().LIMITS;

function range(node: EditorNode): unknown {
  return E().field(node, 'range') || 'last';
}
function typeOf(node: EditorNode, name: string): string {
  return (E().field(node, name + 'Type') as string) || 'str';
}
// The table's entry for `last`, by its unit (anything but days counts as hours, as in the runtime).
function lastKey(node: EditorNode): LimitKey {
  return E().field(node, 'lastUnit') === 'days' ? 'lastDays' : 'lastHours';
}
// Epoch ms of a literal start/end (str: ISO 8601, num: epoch ms), NaN when it is not a literal or not valid.
function literalTime(value: unknown, type: string): number {
  if (type === 'num') {
    return E().num(value);
  }
  const text = String(value).trim();
  return type === 'str' && /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : NaN;
}
function timeValidator(which: 'start' | 'end'): Validator {
  return function (value, opt) {
    if (range(this) !== 'absolute') {
      return true;
    }
    const type = typeOf(this, which);
    const typed = E().typed(value, type, opt);
    if (typed !== true) {
      return typed;
    }
    if ((type === 'str' || type === 'num') && !isFinite(literalTime(value, type))) {
      return i18n('errors.time');
    }
    if (which === 'end') {
      const start = literalTime(E().field(this, 'start'), typeOf(this, 'start'));
      const end = literalTime(value, type);
      if (isFinite(start) && isFinite(end) && end <= start) {
        return i18n('errors.endBeforeStart');
      }
    }
    return true;
  };
}

export const validate: Record<string, Validator> = {
  device: fieldRules.named('device', function (value, opt) {
    return E().typed(value, typeOf(this, 'device'), opt);
  }),
  property: fieldRules.named('property', function (value, opt) {
    const type = typeOf(this, 'property');
    if (value === undefined) {
      return true;
    }
    const typed = E().typed(value, type, opt);
    return typed !== true ? typed : type !== 'str' || String(value).indexOf(',') < 0 || i18n('errors.oneProperty');
  }),
  last: fieldRules.limit(lastKey, {
    label: 'last',
    applies: function (node) {
      return range(node) === 'last';
    },
  }),
  start: fieldRules.named('start', timeValidator('start')),
  end: fieldRules.named('end', timeValidator('end')),
  resolution: fieldRules.limit('resolution'),
  maxSplit: fieldRules.limit('maxSplit', {
    empty: true,
    applies: function (node) {
      return (E().field(node, 'output') || 'points') === 'split';
    },
  }),
};
export const paletteLabel = E().paletteLabelOf(NODE_TYPE, 'time series');
export const labelStyle = E().labelStyle;
export function label(this: RedEditorNode): string {
  if (this.name) {
    return this.name as string;
  }
  if ((this.deviceType || 'str') === 'str' && this.device) {
    return this.device + ((this.propertyType || 'str') === 'str' && this.property ? ' ' + this.property : '');
  }
  return i18n('paletteLabel');
}
export function inputLabels(): string {
  return i18n('label.inputLabel');
}
export function outputLabels(this: RedEditorNode): string {
  return i18n('output.' + (this.output || 'points'));
}
export function oneditprepare(this: RedEditorNode): void {
  E().upgradeForm(this, 'node-input-'); // a node of an older version (migrations.js), and its open form
  const refTypes = E().REF_TYPES;
  $('#node-input-device').typedInput({ default: 'str', types: refTypes, typeField: '#node-input-deviceType' });
  $('#node-input-property').typedInput({ default: 'str', types: refTypes, typeField: '#node-input-propertyType' });
  $('#node-input-start').typedInput({ default: 'str', types: TIME_TYPES, typeField: '#node-input-startType' });
  $('#node-input-end').typedInput({ default: 'str', types: TIME_TYPES, typeField: '#node-input-endType' });
  const $last = $('#node-input-last'),
    $lastUnit = $('#node-input-lastUnit');
  function lastBounds(): void {
    E().bounds($last, $lastUnit.val() === 'days' ? 'lastDays' : 'lastHours', { floor: 1 });
  }
  lastBounds();
  $lastUnit.on('change', lastBounds);
  E().bounds($('#node-input-resolution'), 'resolution');
  E().bounds($('#node-input-maxSplit'), 'maxSplit');
  if (this.maxSplit === undefined) {
    $('#node-input-maxSplit').val(LIMITS.maxSplit.dflt);
  }
  const $range = $('#node-input-range');
  function update(): void {
    const chosen = $range.val() || 'last';
    $('#node-input-last-row').toggle(chosen === 'last');
    $('.node-input-absolute-row').toggle(chosen === 'absolute');
  }
  function updateOutput(): void {
    $('#node-input-maxSplit-row').toggle($('#node-input-output').val() === 'split');
  }
  $range.on('change', update);
  $('#node-input-output').on('change', updateOutput);
  update();
  updateOutput();
  E().attach({ list: 'devices', ref: 'device', prop: 'property', multi: false });
}
