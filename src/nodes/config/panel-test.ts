/**
 * The config panel's "Test connection" (part of window.EmsPartnerConfigPanel): the form's settings, or the
 * deployed node's when the form is as saved, sent to the admin route ems-partner/test; the result in the
 * editor's language, a failure as the runtime words it.
 */
import type { ConfigSettings } from '../../editor/editor';

const NODE_TYPE = 'ems-partner-config';
const PREFIX = 'node-config-input';
function E(): Window['EmsPartnerEditor'] {
  return window.EmsPartnerEditor;
}
function formValue(name: string): string | undefined {
  return $('#' + PREFIX + '-' + name).val();
}
// The settings the editor sends to the admin routes, and the credentials: their own lists (resources/config-keys.js).
function formConfig(node: RedEditorNode): ConfigSettings {
  const config: ConfigSettings = {};
  E()
    .keys()
    .CONNECTION_KEYS.forEach(function (key) {
      config[key] = E().field(node, key, PREFIX);
    });
  config.timeout = Number(config.timeout);
  E()
    .keys()
    .SECRET_KEYS.forEach(function (key) {
      const typed = formValue(key);
      if (E().isSecret(typed)) {
        config[key] = typed;
      }
    });
  return config;
}
// No secret typed, every setting as saved (a missing one counts as its default).
function formAsSaved(node: RedEditorNode): boolean {
  const defaults = (RED.nodes.getType(NODE_TYPE) as { defaults: Record<string, { value: unknown }> }).defaults;
  const text = (value: unknown) => String(value === undefined || value === null ? '' : value);
  const noSecret = E()
    .keys()
    .SECRET_KEYS.every(function (key) {
      return !E().isSecret(formValue(key));
    });
  return (
    noSecret &&
    Object.keys(defaults).every(function (key) {
      const saved = node[key] === undefined ? defaults[key].value : node[key];
      return !$('#' + PREFIX + '-' + key).length || text(E().field(node, key, PREFIX)) === text(saved);
    })
  );
}
/** The answer of ems-partner/test. */
interface TestAnswer {
  ok?: boolean;
  message?: string;
  devices?: number;
}
function resultText(answer: TestAnswer | undefined): string {
  const i18n = E().t;
  const ok = !!(answer && answer.ok);
  // Success in the editor's language; a failure as the runtime words it (it names the cause).
  let text = ok ? i18n('test.ok') : i18n('test.failed', { error: (answer && answer.message) || '' });
  if (ok && typeof answer!.devices === 'number') {
    text += ' (' + i18n('test.devices', { n: answer!.devices }) + ')';
  }
  return text;
}
/** Wires the button: disabled while a test runs; `after` runs when it ended (either way). */
export function attachTest(node: RedEditorNode, after: () => void): void {
  const $button = $('#node-config-test-connection'),
    $result = $('#node-config-test-result');
  $button.on('click', function (event) {
    event.preventDefault();
    $button.prop('disabled', true);
    $result.attr('class', '').text(E().t('test.running'));
    const request = formAsSaved(node)
      ? E().ask('test', node.id, function () {
          return formConfig(node);
        })
      : E().post('test', node.id, formConfig(node));
    request
      .done(function (answer) {
        const ok = !!(answer && (answer as TestAnswer).ok);
        $result.attr('class', ok ? 'ems-partner-ok' : 'ems-partner-error').text(resultText(answer as TestAnswer));
      })
      .fail(function (xhr, status, err) {
        $result
          .attr('class', 'ems-partner-error')
          .text(E().t('test.failed', { error: E().errorText(xhr, status, err) }));
      })
      .always(function () {
        $button.prop('disabled', false);
        after();
      });
  });
}
