/**
 * The editor code two or more node panels share, as window.EmsPartnerEditor (compiled by tsconfig.editor.json,
 * wrapped by scripts/copy-editor.js into resources/editor.js, loaded by the config node's panel): the config
 * node's settings as the editor knows them, admin-route calls, field helpers and validators checked against
 * the runtime's own table of limits (window.EmsPartnerLimits), with the runtime's refusal texts. Pickers and
 * labels are in pickers.ts and labels.ts; each node's own panel code is in its folder.
 */
import type { LimitKey, Words } from '../protocol/limits';
import { t } from './admin';

export {
  keys,
  t,
  isSecret,
  configOf,
  post,
  ask,
  deployedAsIs,
  load,
  errorText,
  splitList,
  type ConfigSettings,
} from './admin';
export { attach, attachDevicePickers, ratingHints } from './pickers';
export { labelStyle, paletteLabelOf, translator } from './labels';

const CONFIG_TYPE = 'ems-partner-config';

/** A node's saved settings (or, where a form field exists, its form value); `this` of a validator. */
export type EditorNode = Record<string, unknown>;
/** A validator of Node-RED's `defaults`: true, or the message why the value is not valid. */
export type Validator = (this: EditorNode, v: unknown, opt?: unknown) => boolean | string;

// Form value while the panel is open, saved value otherwise (validators run in both situations).
export function field(node: EditorNode, name: string, prefix?: string): unknown {
  const $el = $('#' + (prefix || 'node-input') + '-' + name);
  if (!$el.length) {
    return node[name];
  }
  return $el.attr('type') === 'checkbox' ? $el.prop('checked') : $el.val();
}
export function num(v: unknown): number {
  const text = String(v === undefined || v === null ? '' : v).trim();
  return text === '' ? NaN : Number(text);
}
// The runtime's table of limits (resources/limits.js, built from src/protocol/limits.ts).
export function limits(): Window['EmsPartnerLimits'] {
  return window.EmsPartnerLimits;
}
// The words of a refusal: the runtime's (English), each replaced by the config node's catalogue
// entry under "limits" when it has one (a translation); the catalogue need not have any.
export function words(): Words {
  const table = limits(),
    catalogue = $.extend(true, {}, table.WORDS) as Record<string, string | Record<string, string>>;
  function tr(path: string, v: string): string {
    const entryKey = 'limits.' + path,
      translated = t(entryKey);
    return typeof translated === 'string' &&
      translated !== entryKey &&
      translated.indexOf(CONFIG_TYPE + '.' + entryKey) < 0
      ? translated
      : v;
  }
  Object.keys(catalogue).forEach(function (k) {
    const entry = catalogue[k];
    if (typeof entry === 'string') {
      catalogue[k] = tr(k, entry);
      return;
    }
    Object.keys(entry).forEach(function (j) {
      entry[j] = tr(k + '.' + j, entry[j]);
    });
  });
  return catalogue as unknown as Words;
}
// The refusal of a value outside the table's entry `key`, as the runtime words it (in the editor's language when translated).
export function refusal(key: LimitKey): string {
  const table = limits();
  return table.refusal(table.LIMITS[key], { words: words() });
}
// Wraps a validator of node type `type` so its message starts with the field's label, as Node-RED's own validators do.
export function named(type: string, label: string, fn: Validator): Validator {
  return function (v, opt) {
    const result = fn.call(this, v, opt);
    if (typeof result !== 'string') {
      return result;
    }
    const def = RED.nodes.getType(type);
    return (def && def._ ? def._(type + '.label.' + label) : label) + ': ' + result;
  };
}
/**
 * o.label: the label key; o.applies(node): false when the setting is not used; o.empty: an empty value is allowed;
 * o.rating: a steering node's power limit (empty = the site's rating, NO_LIMIT = off; protocol/site-ratings.ts).
 */
export interface LimitOptions {
  label?: string;
  applies?: (node: EditorNode) => boolean;
  empty?: boolean;
  rating?: boolean;
}
// A validator of a numeric setting against the table: `key` its entry, or a function of the node
// giving it (then o.label is needed). o.label: the label key (default: key); o.applies(node): false when
// the setting is not used (then not checked); o.empty: an empty value is allowed (not set, the default applies).
// A flow saved before the setting existed (undefined) is valid: the runtime applies the default.
export function limit(type: string, key: LimitKey | ((node: EditorNode) => LimitKey), o?: LimitOptions): Validator {
  const opts = o || {};
  return named(type, opts.label || (key as string), function (v) {
    if (v === undefined || (opts.applies && !opts.applies(this))) {
      return true;
    }
    if ((opts.empty || opts.rating) && String(v).trim() === '') {
      return true;
    }
    if (opts.rating && String(v).trim().toLowerCase() === limits().NO_LIMIT) {
      return true;
    }
    const limitKey = typeof key === 'function' ? key(this) : key,
      table = limits();
    return table.accepts(table.LIMITS[limitKey], num(v)) || refusal(limitKey);
  });
}
// min, max and step of a number input, or of a jQuery spinner, from the table (an excluded minimum:
// the spinner stops at `o.floor`; smaller values can still be typed).
export function bounds($el: JQuery, key: LimitKey, o?: { floor?: number }): JQuery {
  const row = limits().LIMITS[key] as import('../protocol/limits').Limit,
    min = row.minExclusive ? o && o.floor : row.min;
  if ($el.attr('type') === 'number') {
    $el.attr({ min: min, max: row.max, step: row.whole ? 1 : 'any' });
  } else {
    $el.spinner({ min: min, max: row.max });
  }
  return $el;
}
// The validators of one node type's panel: named(label, fn) and limit(key, o) (see above).
export function validators(type: string): {
  named(label: string, fn: Validator): Validator;
  limit(key: Parameters<typeof limit>[1], o?: LimitOptions): Validator;
} {
  return {
    named: function (label, fn) {
      return named(type, label, fn);
    },
    limit: function (key, o) {
      return limit(type, key, o);
    },
  };
}

// A refusal as the runtime words it (a ValidationError: "<field> <text>"), for the field's validator: the panel
// puts its label first, so the field's name goes when it is `field` (or any, without `field`); a part of it
// (sites[2].soc) stays. What the runtime adds after sending nothing ("; nothing was sent") goes too.
export function refusalText(e: unknown, field?: string): string {
  const error = e as { message?: string; field?: string } | undefined;
  let message = String((error && error.message) || e);
  const errorField = error && error.field;
  if (errorField !== undefined && message.indexOf(errorField + ' ') === 0 && (!field || errorField === field)) {
    message = message.slice(errorField.length + 1);
  } else if (!field) {
    message = message.replace(/^\S+ /, '');
  }
  return message.replace(/; nothing was sent$/, '');
}
// true, or the runtime's refusal of `fn()` for the field `field` (see refusalText).
export function runtimeCheck(field: string, fn: () => unknown): true | string {
  try {
    fn();
    return true;
  } catch (e) {
    return refusalText(e, field);
  }
}
// Validates a TypedInput value that must be set: true or a message.
export function typed(v: unknown, type?: string, opt?: unknown): boolean | string {
  const text = String(v === undefined || v === null ? '' : v).trim();
  if (/^\$\{[^}]+\}$/.test(text)) {
    return true;
  }
  if (text === '') {
    return t('errors.required');
  }
  if (type === 'num') {
    return isFinite(num(text)) || t('errors.number');
  }
  if (type === 'str' || type === 'env' || !type) {
    return true;
  }
  const result = RED.utils.validateTypedProperty ? RED.utils.validateTypedProperty(text, type, opt) : true; // added in Node-RED 3.1.x
  return result === true || (typeof result === 'string' ? result : t('errors.invalid'));
}

// Flows saved by an older version are upgraded with the runtime's own table (resources/migrations.js):
// when the editor adds a node of this package (load, import, paste), and when its panel opens, where the
// open form then shows the upgraded values (upgradeForm, from each panel's oneditprepare).
// Every type with migration steps (one table: migrations.ts).
RED.events.on('nodes:add', function (n) {
  const migrations = window.EmsPartnerMigrations;
  if (migrations && Object.prototype.hasOwnProperty.call(migrations.MIGRATIONS, n.type)) {
    try {
      migrations.upgrade(n.__node__ || n);
    } catch (e) {
      /* a locked flow */
    }
  }
});
export function upgradeForm(node: RedEditorNode, prefix: string): void {
  const migrations = window.EmsPartnerMigrations;
  if (!migrations) {
    return;
  }
  migrations.upgrade(node.__node__ || node, function (k, v) {
    const $el = $('#' + prefix + k);
    if ($el.is(':checkbox')) {
      $el.prop('checked', v === true || v === 'true');
    } else {
      $el.val(v);
    }
  });
}

/** The TypedInput types of a reference (device, site, property) in every panel. */
export const REF_TYPES = ['str', 'msg', 'flow', 'global', 'env'];
/**
 * Fills every unit <select data-ems-units="power|curtailment"> of the open form from the one list
 * (protocol/limits.ts, served as EmsPartnerLimits) and selects the node's value (Node-RED set it before
 * the options existed); a node without one keeps the first option.
 */
export function unitSelects(node: EditorNode): void {
  const table = limits(),
    lists: Record<string, readonly string[]> = { power: table.POWER_UNITS, curtailment: table.CURTAILMENT_UNITS };
  $('select[data-ems-units]').each(function () {
    const $select = $(this),
      list = lists[$select.attr('data-ems-units') as string] || [],
      saved = node[this.id.replace(/^node-input-/, '')];
    $select.empty();
    list.forEach(function (u) {
      $select.append($('<option></option>').val(u).text(u));
    });
    // A value the list lacks (a hand-written flow) stays unselected, so the panel marks it invalid.
    if (saved !== undefined && saved !== null && saved !== '') {
      $select.val(saved);
    }
  });
}
