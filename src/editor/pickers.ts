/**
 * The pickers of the flow nodes' panels (part of window.EmsPartnerEditor, see editor.ts): the
 * devices or sites the config node's service lists (admin routes, admin.ts), offered next to the
 * TypedInput of a reference and of its properties; typing stays possible.
 */
import { load, splitList, t } from './admin';

/** An entry of a list the admin routes give (devices or sites). */
export interface ListItem {
  deviceReference?: string;
  siteReference?: string;
  name?: string;
  kind?: string;
  properties?: Array<string | { name?: string; unit?: string }>;
  [key: string]: unknown;
}

/** The options of attach (see there). */
export interface PickerOptions {
  list: 'devices' | 'sites';
  ref: string;
  prop?: string;
  multi?: boolean;
  single?: () => boolean;
  /** Called after each render with the list as loaded (null: not loaded, or it failed). */
  onRender?: (items: ListItem[] | null) => void;
  filter?: (item: ListItem) => boolean;
}

/** What attach gives: render (again, from what is loaded) and refresh (load again; `force`: not from the cache). */
export interface Picker {
  render(): void;
  refresh(force: boolean): void;
}

interface Option {
  value: string | undefined;
  label: string;
}
/** A property of a listed device; `missing`: selected but not listed. */
interface Prop {
  name: string;
  unit?: string;
  missing?: boolean;
}

// Fills a <select>; a value the service does not list is kept and marked, so free typing always works.
function fill($sel: JQuery, items: Option[], cur: string, placeholder: string, listed: boolean): void {
  $sel.empty();
  $('<option value="">').text(placeholder).appendTo($sel);
  let found = false;
  items.forEach(function (it) {
    if (it.value === cur) {
      found = true;
    }
    $('<option>').val(it.value).text(it.label).appendTo($sel);
  });
  if (cur && !found) {
    $('<option>')
      .val(cur)
      .text(listed ? cur + ' ' + t('picker.notListed') : cur)
      .appendTo($sel);
  }
  $sel.val(cur || '');
}
function propLabel(p: Prop): string {
  return p.unit ? p.name + ' (' + p.unit + ')' : p.name;
}

interface PickerState {
  items: ListItem[] | null;
  error: string | null;
  loading: boolean;
  seq: number;
  server?: string;
}
/** One attached picker: its options, the elements it reads and writes, and what it has loaded. */
interface PickerContext {
  o: PickerOptions;
  refKey: 'siteReference' | 'deviceReference';
  $server: JQuery;
  $ref: JQuery;
  $prop: JQuery;
  $list: JQuery;
  state: PickerState;
}

function serverIdOf(ctx: PickerContext): string {
  const selected = ctx.$server.val();
  return selected && selected !== '_ADD_' ? selected : '';
}
function isStr($el: JQuery): boolean {
  return $el.length > 0 && $el.typedInput('type') === 'str';
}
// The properties the listed devices have (those of `ref` only, when set), each once.
function propsFor(ctx: PickerContext, ref: string): Prop[] {
  const seen: Record<string, boolean> = {},
    out: Prop[] = [];
  (ctx.state.items || []).forEach(function (d) {
    if (ref && d[ctx.refKey] !== ref) {
      return;
    }
    (d.properties || []).forEach(function (p) {
      const name = typeof p === 'string' ? p : p && p.name;
      if (name && !seen[name]) {
        seen[name] = true;
        out.push({ name: name, unit: (p as { unit?: string }) && (p as { unit?: string }).unit });
      }
    });
  });
  return out;
}
// The checkboxes of a property list: the listed properties, then the selected ones the list lacks.
function renderPropList(ctx: PickerContext, available: Prop[], value: string, listed: boolean): void {
  const selected = splitList(value),
    names = available.map(function (p) {
      return p.name;
    });
  ctx.$list.empty();
  available
    .concat(
      selected
        .filter(function (n) {
          return names.indexOf(n) < 0;
        })
        .map(function (n) {
          return { name: n, missing: true };
        }),
    )
    .forEach(function (p) {
      const $label = $('<label>').appendTo(ctx.$list);
      $('<input type="checkbox">')
        .val(p.name)
        .prop('checked', selected.indexOf(p.name) >= 0)
        .appendTo($label);
      $('<span>')
        .text(p.missing && listed ? p.name + ' ' + t('picker.notListed') : propLabel(p))
        .appendTo($label);
    });
  if (!ctx.$list.children().length) {
    $('<span class="form-tips">').text(t('picker.noProperties')).appendTo(ctx.$list);
  }
}
function renderProps(ctx: PickerContext, ref: string, note: string): void {
  const available = propsFor(ctx, ref),
    listed = ctx.state.items !== null,
    value = String(ctx.$prop.typedInput('value') || '');
  if (ctx.o.multi) {
    renderPropList(ctx, available, value, listed);
    return;
  }
  fill(
    $('#node-input-' + ctx.o.prop + '-picker'),
    available.map(function (p) {
      return { value: p.name, label: propLabel(p) };
    }),
    value.trim(),
    note || t('picker.choose.property'),
    listed,
  );
}
// The status line (message) and what the pickers themselves show when there is nothing to choose (note).
function statusOf(ctx: PickerContext): { message: string; note: string } {
  const state = ctx.state,
    list = ctx.o.list,
    err = { error: state.error },
    message = !serverIdOf(ctx)
      ? t('picker.noServer')
      : state.loading
        ? t('picker.loading')
        : state.error
          ? t('picker.failed.' + list, err)
          : state.items && !state.items.length
            ? t('picker.empty.' + list)
            : '';
  return { message: message, note: state.error ? t('picker.failedShort.' + list, err) : message };
}
function renderRefPicker(ctx: PickerContext, current: string, note: string): void {
  const options = ctx.o,
    refKey = ctx.refKey;
  fill(
    $('#node-input-' + options.ref + '-picker'),
    (ctx.state.items || [])
      .filter(function (it) {
        return !options.filter || options.filter(it);
      })
      .map(function (it) {
        const label = it[refKey] + (it.name ? ' \u2014 ' + it.name : '') + (it.kind ? ' (' + it.kind + ')' : '');
        return { value: it[refKey], label: label };
      }),
    current,
    note || t('picker.choose.' + options.list),
    ctx.state.items !== null,
  );
}
function render(ctx: PickerContext): void {
  const options = ctx.o,
    state = ctx.state,
    refStr = isStr(ctx.$ref),
    current = refStr ? String(ctx.$ref.typedInput('value') || '').trim() : '',
    status = statusOf(ctx);
  $('#node-input-' + options.ref + '-picker-row').toggle(refStr);
  if (refStr) {
    renderRefPicker(ctx, current, status.note);
  }
  const propStr = !!options.prop && isStr(ctx.$prop);
  if (options.prop) {
    $('#node-input-' + options.prop + '-picker-row').toggle(propStr);
    if (propStr) {
      renderProps(ctx, refStr ? current : '', state.items && state.items.length ? '' : status.note);
    }
  }
  $('#node-input-' + options.ref + '-status')
    .text(status.message)
    .toggle(!!status.message && (refStr || propStr))
    .toggleClass('ems-partner-error', !!state.error);
  if (options.onRender) {
    options.onRender(state.items);
  }
}
// Loads the list again; an answer to an older request (another server chosen since) is dropped.
function refresh(ctx: PickerContext, force: boolean): void {
  const state = ctx.state,
    id = serverIdOf(ctx),
    seq = ++state.seq;
  state.server = id;
  state.items = null;
  state.error = null;
  state.loading = !!id;
  render(ctx);
  if (!id) {
    return;
  }
  load(ctx.o.list, id, force).then(
    function (list) {
      if (seq === state.seq) {
        state.items = list as ListItem[];
        state.loading = false;
        render(ctx);
      }
    },
    function (msg) {
      if (seq === state.seq) {
        state.error = msg;
        state.loading = false;
        render(ctx);
      }
    },
  );
}
function watch($el: JQuery, onChange: () => void): void {
  // TypedInput: changes and keys on the element, typing ('input') inside its container
  $el.on('change keyup paste', onChange);
  $el.next('.red-ui-typedInput-container').on('input', onChange);
}
function pick($input: JQuery, onChange: () => void): (this: HTMLElement) => void {
  // choosing from a picker writes the TypedInput, typing stays possible
  return function () {
    const chosen = $(this).val();
    if (chosen) {
      $input.typedInput('value', chosen);
    }
    onChange();
  };
}
// A property checkbox (un)ticked: the property field lists the ticked ones (only one where o.single() says so).
function toggleProp(ctx: PickerContext, checkbox: HTMLInputElement): void {
  const name = checkbox.value;
  let selected = splitList(ctx.$prop.typedInput('value')).filter(function (n) {
    return n !== name;
  });
  if (checkbox.checked) {
    selected = ctx.o.single && ctx.o.single() ? [name] : selected.concat([name]);
  }
  ctx.$prop.typedInput('value', selected.join(','));
  render(ctx);
}
function wireEvents(ctx: PickerContext): void {
  const options = ctx.o,
    rerender = function () {
      render(ctx);
    };
  ctx.$server.on('change', function () {
    if (serverIdOf(ctx) !== ctx.state.server) {
      refresh(ctx, false);
    }
  });
  watch(ctx.$ref, rerender);
  watch(ctx.$prop, rerender);
  $('#node-input-' + options.ref + '-picker').on('change', pick(ctx.$ref, rerender));
  if (options.prop && !options.multi) {
    $('#node-input-' + options.prop + '-picker').on('change', pick(ctx.$prop, rerender));
  }
  ctx.$list.on<HTMLInputElement>('change', 'input[type="checkbox"]', function () {
    toggleProp(ctx, this);
  });
  $('#node-input-' + options.ref + '-refresh, #node-input-' + (options.prop || options.ref) + '-refresh').on(
    'click',
    function (event) {
      event.preventDefault();
      refresh(ctx, true);
    },
  );
}

// Wires the pickers of a flow node's edit panel, by element ids derived from property names:
// #node-input-<ref>-picker(-row), #node-input-<ref>-refresh, #node-input-<ref>-status and, for the
// property field, #node-input-<prop>-picker (select, o.multi false) or #node-input-<prop>-list (checkboxes).
// o: { list: 'devices'|'sites', ref: 'device'|'site', prop?: 'properties'|'property', multi?, single?: fn, onRender?: fn,
//      filter?: fn(item) -> false to leave an item out of the reference picker (e.g. another site's devices) }
export function attach(o: PickerOptions): Picker {
  const ctx: PickerContext = {
    o: o,
    refKey: o.list === 'sites' ? 'siteReference' : 'deviceReference',
    $server: $('#node-input-server'),
    $ref: $('#node-input-' + o.ref),
    $prop: o.prop ? $('#node-input-' + o.prop) : $(),
    $list: o.prop ? $('#node-input-' + o.prop + '-list') : $(),
    state: { items: null, error: null, loading: false, seq: 0 },
  };
  wireEvents(ctx);
  refresh(ctx, false);
  return {
    render: function () {
      render(ctx);
    },
    refresh: function (force) {
      refresh(ctx, force);
    },
  };
}

// A steering panel's power limits (site steer, schedule) show what an empty limit means for the site chosen:
// the rating the service lists for it (protocol/site-ratings.ts reads the same fields), or that it lists none, so
// the node will refuse to steer until a limit is set. The onRender of the site picker: attach({..., onRender: ratingHints(T)}).
export function ratingHints(type: string): (items: ListItem[] | null) => void {
  function tr(key: string, opts?: object): string {
    const def = RED.nodes.getType(type);
    return def && def._ ? def._(type + '.placeholder.' + key, opts) : key;
  }
  const num = (v: unknown): v is number => typeof v === 'number' && isFinite(v) && v > 0;
  return function (items) {
    const $site = $('#node-input-site'),
      site = $site.typedInput('type') === 'str' ? String($site.typedInput('value') || '').trim() : '';
    const item =
      site && items
        ? items.filter(function (it) {
            return it.siteReference === site;
          })[0]
        : undefined;
    const limits = item && (item.gridLimits as { upper?: unknown; lower?: unknown } | undefined);
    const grid =
      limits && typeof limits.upper === 'number' && typeof limits.lower === 'number'
        ? limits.lower + ' \u2026 ' + limits.upper + ' W'
        : undefined;
    const rated: Record<string, string | undefined> = {
      maxEssPower: item && num(item.batteryMaxPower) ? '\u00b1' + item.batteryMaxPower + ' W' : undefined,
      maxCurtailment: item && num(item.pvPeakPower) ? item.pvPeakPower + ' W' : undefined,
      maxGridPower: grid,
      maxGridLimit: grid,
    };
    Object.keys(rated).forEach(function (k) {
      const rating = rated[k];
      $('#node-input-' + k).attr(
        'placeholder',
        !site || !items ? tr('siteRating') : rating ? tr('ratingOf', { value: rating }) : tr('noRating'),
      );
    });
  };
}

// The delivery check's device pickers (#node-input-batteryDevice, -pvDevice, -meterDevice): each lists
// the devices of its kind on the site typed in #node-input-site (all of them where the list says neither).
export function attachDevicePickers(): Picker[] {
  function siteRef(): string {
    const $site = $('#node-input-site');
    return $site.typedInput('type') === 'str' ? String($site.typedInput('value') || '').trim() : '';
  }
  const pickers = ['battery', 'pv', 'meter'].map(function (role) {
    return attach({
      list: 'devices',
      ref: role + 'Device',
      filter: function (d) {
        const site = siteRef();
        return (!d.kind || d.kind === role) && (!site || !d.siteReference || d.siteReference === site);
      },
    });
  });
  $('#node-input-site').on('change', function () {
    pickers.forEach(function (p) {
      p.render();
    });
  });
  return pickers;
}
