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

// Wires the pickers of a flow node's edit panel, by element ids derived from property names:
// #node-input-<ref>-picker(-row), #node-input-<ref>-refresh, #node-input-<ref>-status and, for the
// property field, #node-input-<prop>-picker (select, o.multi false) or #node-input-<prop>-list (checkboxes).
// o: { list: 'devices'|'sites', ref: 'device'|'site', prop?: 'properties'|'property', multi?, single?: fn, onRender?: fn,
//      filter?: fn(item) -> false to leave an item out of the reference picker (e.g. another site's devices) }
export function attach(o: PickerOptions): Picker {
  const refKey = o.list === 'sites' ? 'siteReference' : 'deviceReference';
  const $server = $('#node-input-server');
  const $ref = $('#node-input-' + o.ref);
  const $prop = o.prop ? $('#node-input-' + o.prop) : $();
  const $list = o.prop ? $('#node-input-' + o.prop + '-list') : $();
  const state: { items: ListItem[] | null; error: string | null; loading: boolean; seq: number; server?: string } = {
    items: null,
    error: null,
    loading: false,
    seq: 0,
  };

  function serverId(): string {
    const s = $server.val();
    return s && s !== '_ADD_' ? s : '';
  }
  function isStr($el: JQuery): boolean {
    return $el.length > 0 && $el.typedInput('type') === 'str';
  }
  function propsFor(ref: string): Prop[] {
    const seen: Record<string, boolean> = {},
      out: Prop[] = [];
    (state.items || []).forEach(function (d) {
      if (ref && d[refKey] !== ref) {
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
  function renderProps(ref: string, note: string): void {
    const avail = propsFor(ref),
      listed = state.items !== null,
      value = String($prop.typedInput('value') || '');
    if (!o.multi) {
      fill(
        $('#node-input-' + o.prop + '-picker'),
        avail.map(function (p) {
          return { value: p.name, label: propLabel(p) };
        }),
        value.trim(),
        note || t('picker.choose.property'),
        listed,
      );
      return;
    }
    const sel = splitList(value),
      names = avail.map(function (p) {
        return p.name;
      });
    $list.empty();
    avail
      .concat(
        sel
          .filter(function (n) {
            return names.indexOf(n) < 0;
          })
          .map(function (n) {
            return { name: n, missing: true };
          }),
      )
      .forEach(function (p) {
        const $l = $('<label>').appendTo($list);
        $('<input type="checkbox">')
          .val(p.name)
          .prop('checked', sel.indexOf(p.name) >= 0)
          .appendTo($l);
        $('<span>')
          .text(p.missing && listed ? p.name + ' ' + t('picker.notListed') : propLabel(p))
          .appendTo($l);
      });
    if (!$list.children().length) {
      $('<span class="form-tips">').text(t('picker.noProperties')).appendTo($list);
    }
  }
  function render(): void {
    const refStr = isStr($ref),
      cur = refStr ? String($ref.typedInput('value') || '').trim() : '';
    const err = { error: state.error },
      msg = !serverId()
        ? t('picker.noServer')
        : state.loading
          ? t('picker.loading')
          : state.error
            ? t('picker.failed.' + o.list, err)
            : state.items && !state.items.length
              ? t('picker.empty.' + o.list)
              : '';
    const note = state.error ? t('picker.failedShort.' + o.list, err) : msg; // shown in the pickers themselves
    $('#node-input-' + o.ref + '-picker-row').toggle(refStr);
    if (refStr) {
      fill(
        $('#node-input-' + o.ref + '-picker'),
        (state.items || [])
          .filter(function (it) {
            return !o.filter || o.filter(it);
          })
          .map(function (it) {
            const label = it[refKey] + (it.name ? ' \u2014 ' + it.name : '') + (it.kind ? ' (' + it.kind + ')' : '');
            return { value: it[refKey], label: label };
          }),
        cur,
        note || t('picker.choose.' + o.list),
        state.items !== null,
      );
    }
    const propStr = !!o.prop && isStr($prop);
    if (o.prop) {
      $('#node-input-' + o.prop + '-picker-row').toggle(propStr);
      if (propStr) {
        renderProps(refStr ? cur : '', state.items && state.items.length ? '' : note);
      }
    }
    $('#node-input-' + o.ref + '-status')
      .text(msg)
      .toggle(!!msg && (refStr || propStr))
      .toggleClass('ems-partner-error', !!state.error);
    if (o.onRender) {
      o.onRender(state.items);
    }
  }
  function refresh(force: boolean): void {
    const id = serverId(),
      seq = ++state.seq;
    state.server = id;
    state.items = null;
    state.error = null;
    state.loading = !!id;
    render();
    if (!id) {
      return;
    }
    load(o.list, id, force).then(
      function (list) {
        if (seq === state.seq) {
          state.items = list as ListItem[];
          state.loading = false;
          render();
        }
      },
      function (msg) {
        if (seq === state.seq) {
          state.error = msg;
          state.loading = false;
          render();
        }
      },
    );
  }
  function watch($el: JQuery): void {
    // TypedInput: changes and keys on the element, typing ('input') inside its container
    $el.on('change keyup paste', render);
    $el.next('.red-ui-typedInput-container').on('input', render);
  }
  $server.on('change', function () {
    if (serverId() !== state.server) {
      refresh(false);
    }
  });
  watch($ref);
  watch($prop);
  function pick($input: JQuery): (this: HTMLElement) => void {
    // choosing from a picker writes the TypedInput, typing stays possible
    return function () {
      const v = $(this).val();
      if (v) {
        $input.typedInput('value', v);
      }
      render();
    };
  }
  $('#node-input-' + o.ref + '-picker').on('change', pick($ref));
  if (o.prop && !o.multi) {
    $('#node-input-' + o.prop + '-picker').on('change', pick($prop));
  }
  $list.on<HTMLInputElement>('change', 'input[type="checkbox"]', function () {
    const name = this.value;
    let sel = splitList($prop.typedInput('value')).filter(function (n) {
      return n !== name;
    });
    if (this.checked) {
      sel = o.single && o.single() ? [name] : sel.concat([name]);
    }
    $prop.typedInput('value', sel.join(','));
    render();
  });
  $('#node-input-' + o.ref + '-refresh, #node-input-' + (o.prop || o.ref) + '-refresh').on('click', function (e) {
    e.preventDefault();
    refresh(true);
  });
  refresh(false);
  return { render: render, refresh: refresh };
}

// A steering panel's power limits (site steer, schedule) show what an empty limit means for the site chosen:
// the rating the service lists for it (protocol/site-ratings.ts reads the same fields), or that it lists none, so
// the node will refuse to steer until a limit is set. The onRender of the site picker: attach({..., onRender: ratingHints(T)}).
export function ratingHints(type: string): (items: ListItem[] | null) => void {
  function tr(key: string, opts?: object): string {
    const d = RED.nodes.getType(type);
    return d && d._ ? d._(type + '.placeholder.' + key, opts) : key;
  }
  const num = (v: unknown): v is number => typeof v === 'number' && isFinite(v) && v > 0;
  return function (items) {
    const $s = $('#node-input-site'),
      site = $s.typedInput('type') === 'str' ? String($s.typedInput('value') || '').trim() : '';
    const item =
      site && items
        ? items.filter(function (it) {
            return it.siteReference === site;
          })[0]
        : undefined;
    const g = item && (item.gridLimits as { upper?: unknown; lower?: unknown } | undefined);
    const grid =
      g && typeof g.upper === 'number' && typeof g.lower === 'number'
        ? g.lower + ' \u2026 ' + g.upper + ' W'
        : undefined;
    const rated: Record<string, string | undefined> = {
      maxEssPower: item && num(item.batteryMaxPower) ? '\u00b1' + item.batteryMaxPower + ' W' : undefined,
      maxCurtailment: item && num(item.pvPeakPower) ? item.pvPeakPower + ' W' : undefined,
      maxGridPower: grid,
      maxGridLimit: grid,
    };
    Object.keys(rated).forEach(function (k) {
      const v = rated[k];
      $('#node-input-' + k).attr(
        'placeholder',
        !site || !items ? tr('siteRating') : v ? tr('ratingOf', { value: v }) : tr('noRating'),
      );
    });
  };
}

// The delivery check's device pickers (#node-input-batteryDevice, -pvDevice, -meterDevice): each lists
// the devices of its kind on the site typed in #node-input-site (all of them where the list says neither).
export function attachDevicePickers(): Picker[] {
  function siteRef(): string {
    const $s = $('#node-input-site');
    return $s.typedInput('type') === 'str' ? String($s.typedInput('value') || '').trim() : '';
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
