/**
 * The raw request node's editor code (window.EmsPartnerRequestPanel, resources/request-panel.js), which
 * ems-request.html names in its definition: the path and method checked by the runtime's own rules
 * (resources/request-path.js, src/client/request-path.ts), the labels, the form.
 */
import type { Validator } from '../../editor/editor';

const NODE_TYPE = 'ems-request';
function E(): Window['EmsPartnerEditor'] {
  return window.EmsPartnerEditor;
}
const i18n = E().translator(NODE_TYPE);
const named = E().validators(NODE_TYPE).named;

/** The path of a raw request: true, or the runtime's refusal. An empty path is allowed (msg.path then). */
export function requestPathRefusal(value: unknown): true | string {
  const rules = window.EmsPartnerRequestPath;
  if (!rules || value === undefined || value === '') {
    return true;
  }
  return E().runtimeCheck('', function () {
    rules.checkRequestPath(value, 'path');
  });
}
/** The method of a raw request: true, or the runtime's refusal. */
export function requestMethodRefusal(value: unknown): true | string {
  const rules = window.EmsPartnerRequestPath;
  if (!rules || value === undefined || value === '') {
    return true;
  }
  return E().runtimeCheck('', function () {
    rules.checkRequestMethod(value, 'method');
  });
}

export const validate: Record<string, Validator> = {
  method: named('method', requestMethodRefusal),
  path: named('path', requestPathRefusal),
};
export const paletteLabel = E().paletteLabelOf(NODE_TYPE, 'raw request');
export const labelStyle = E().labelStyle;
export function label(this: RedEditorNode): string {
  if (this.name) {
    return this.name as string;
  }
  return this.path ? (this.method || 'GET') + ' ' + this.path : i18n('paletteLabel');
}
export function inputLabels(): string {
  return i18n('label.inputLabel');
}
export function outputLabels(): string {
  return i18n('label.outputLabel');
}
export function oneditprepare(this: RedEditorNode): void {
  if (!this.method) {
    $('#node-input-method').val('GET');
  }
  const $mode = $('#node-input-mode');
  if (!$mode.val()) {
    $mode.val('request'); // a node saved before modes existed sends requests
  }
  function update(): void {
    // mode stats sends nothing: method and path do not apply
    const stats = $mode.val() === 'stats';
    $('.ems-request-request-row').toggle(!stats);
    $('.ems-request-stats-row').toggle(stats);
  }
  $mode.on('change', update);
  update();
}
