/**
 * Shared editor code of @ems-partner/node-red (served by Node-RED from the package's
 * resources/ folder, loaded by the config node's panel): the config node's settings as the
 * editor knows them, admin-route calls, pickers, field helpers and validators used by every panel.
 * The panels reach it as window.EmsPartnerEditor.
 *
 * Numeric settings are checked against the runtime's own table of limits (src/protocol/limits.ts,
 * served as resources/limits.js, window.EmsPartnerLimits), with the refusal text the runtime gives;
 * the config node's paths and the ems-request node's path and method likewise, by the runtime's own
 * code (resources/paths.js and resources/request-path.js, bundled by scripts/copy-editor.js).
 */
(function () {
    'use strict';
    var T = 'ems-partner-config';
    // The settings the editor sends and the credentials: the admin routes' own lists (resources/config-keys.js,
    // built from src/nodes/config/config-keys.ts), read when used (the scripts of a panel load in any order).
    function keys() { return window.EmsPartnerConfigKeys; }
    var TTL = 60000;
    var cache = {};

    function t(key, opts) { var def = RED.nodes.getType(T); return def && def._ ? def._(T + '.' + key, opts) : key; }
    function isSecret(v) { return typeof v === 'string' && v !== '' && v !== '__PWRD__'; }

    // What the editor knows of a config node, deployed or not. Secrets only when typed in this session:
    // stored ones never reach the browser, the runtime then uses the deployed node's credentials.
    function configOf(serverId) {
        var n = RED.nodes.node(serverId);
        if (!n) { return undefined; }
        var c = {};
        keys().CONNECTION_KEYS.forEach(function (k) { c[k] = n[k]; });
        if (c.timeout !== undefined) { c.timeout = Number(c.timeout); }   // the editor saves form values as strings
        var cr = n.credentials || {};
        keys().SECRET_KEYS.forEach(function (k) { if (isSecret(cr[k])) { c[k] = cr[k]; } });
        return c;
    }
    // The body is always JSON: the runtime refuses anything else. `config` only for unsaved settings.
    function post(what, serverId, config) {
        var body = { server: serverId };
        if (config) { body.config = config; }
        return $.ajax({ url: 'ems-partner/' + what, type: 'POST', contentType: 'application/json',
            dataType: 'json', data: JSON.stringify(body), timeout: 60000 });
    }
    // Deployed as the editor shows it: the runtime uses it by id alone (read permission), its secrets stay put.
    function deployedAsIs(serverId) { var n = RED.nodes.node(serverId); return !!n && !n.changed; }
    // By id when deployed as is (with the settings, `config()`, if the runtime does not know the id); else with the settings.
    function ask(what, serverId, config) {
        if (!deployedAsIs(serverId)) { return post(what, serverId, config()); }
        var d = $.Deferred();   // (not .then: it would pass on only the first argument of a failure)
        post(what, serverId).done(d.resolve).fail(function (xhr, status, err) {
            if (xhr && xhr.responseJSON && xhr.responseJSON.error === 'unknown config node') { post(what, serverId, config()).done(d.resolve).fail(d.reject); } else { d.reject(xhr, status, err); }
        });
        return d.promise();
    }
    // One line of text for a failed request: the runtime's message, or the HTTP status (never an HTML page).
    function errorText(xhr, status, err) {
        var j = xhr && xhr.responseJSON;
        var m = j && (j.message || j.error);
        if (xhr && xhr.status === 0 && status !== 'timeout') { m = t('picker.unreachable'); }
        if (!m && xhr && xhr.status >= 400) { m = 'HTTP ' + xhr.status + (xhr.statusText && xhr.statusText !== 'error' ? ' (' + xhr.statusText + ')' : ''); }
        m = String(m || err || status || 'error').replace(/<(?!site>)[^>]*>/g, ' ')   // (<site>: the paths' placeholder, text).replace(/\s+/g, ' ').trim();
        return m.length > 200 ? m.slice(0, 199) + '\u2026' : m;
    }
    // One request per list, server and configuration in flight; results kept for a minute, failures not kept.
    function load(what, serverId, force) {
        var config = configOf(serverId);   // in the key even when only the id is sent: a redeploy with new settings misses the cache
        var key = what + '|' + serverId + '|' + deployedAsIs(serverId) + '|' + JSON.stringify(config || null);
        var hit = cache[key];
        if (hit && !force && (hit.pending || Date.now() - hit.at < TTL)) { return hit.promise; }
        var d = $.Deferred();
        hit = cache[key] = { at: Date.now(), pending: true, promise: d.promise() };
        ask(what, serverId, function () { return config; }).done(function (list) {
            hit.pending = false;
            hit.at = Date.now();
            d.resolve(Array.isArray(list) ? list : []);
        }).fail(function (xhr, status, err) {
            if (cache[key] === hit) { delete cache[key]; }
            d.reject(errorText(xhr, status, err));
        });
        return hit.promise;
    }
    // true when keys would travel in clear text: plain http to a host that is not loopback.
    function cleartextRisk(url) {
        var u;
        try { u = new URL(String(url || '').trim()); } catch (e) { return false; }
        if (u.protocol !== 'http:') { return false; }
        var h = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
        return !(h === 'localhost' || /\.localhost$/.test(h) || /^127\./.test(h) || h === '::1');
    }
    function splitList(v) {
        return String(v || '').split(',').map(function (s) { return s.trim(); }).filter(Boolean);
    }
    // Fills a <select>; a value the service does not list is kept and marked, so free typing always works.
    function fill($sel, items, cur, placeholder, listed) {
        $sel.empty();
        $('<option value="">').text(placeholder).appendTo($sel);
        var found = false;
        items.forEach(function (it) {
            if (it.value === cur) { found = true; }
            $('<option>').val(it.value).text(it.label).appendTo($sel);
        });
        if (cur && !found) {
            $('<option>').val(cur).text(listed ? cur + ' ' + t('picker.notListed') : cur).appendTo($sel);
        }
        $sel.val(cur || '');
    }
    function propLabel(p) { return p.unit ? p.name + ' (' + p.unit + ')' : p.name; }

    // Wires the pickers of a flow node's edit panel, by element ids derived from property names:
    // #node-input-<ref>-picker(-row), #node-input-<ref>-refresh, #node-input-<ref>-status and, for the
    // property field, #node-input-<prop>-picker (select, o.multi false) or #node-input-<prop>-list (checkboxes).
    // o: { list: 'devices'|'sites', ref: 'device'|'site', prop?: 'properties'|'property', multi?, single?: fn, onRender?: fn,
    //      filter?: fn(item) -> false to leave an item out of the reference picker (e.g. another site's devices) }
    function attach(o) {
        var refKey = o.list === 'sites' ? 'siteReference' : 'deviceReference';
        var $server = $('#node-input-server');
        var $ref = $('#node-input-' + o.ref);
        var $prop = o.prop ? $('#node-input-' + o.prop) : $();
        var $list = o.prop ? $('#node-input-' + o.prop + '-list') : $();
        var state = { items: null, error: null, loading: false, seq: 0 };

        function serverId() { var s = $server.val(); return s && s !== '_ADD_' ? s : ''; }
        function isStr($el) { return $el.length > 0 && $el.typedInput('type') === 'str'; }
        function propsFor(ref) {
            var seen = {}, out = [];
            (state.items || []).forEach(function (d) {
                if (ref && d[refKey] !== ref) { return; }
                (d.properties || []).forEach(function (p) {
                    var name = typeof p === 'string' ? p : p && p.name;
                    if (name && !seen[name]) { seen[name] = true; out.push({ name: name, unit: p && p.unit }); }
                });
            });
            return out;
        }
        function renderProps(ref, note) {
            var avail = propsFor(ref), listed = state.items !== null, value = String($prop.typedInput('value') || '');
            if (!o.multi) {
                fill($('#node-input-' + o.prop + '-picker'), avail.map(function (p) { return { value: p.name, label: propLabel(p) }; }),
                    value.trim(), note || t('picker.choose.property'), listed);
                return;
            }
            var sel = splitList(value), names = avail.map(function (p) { return p.name; });
            $list.empty();
            avail.concat(sel.filter(function (n) { return names.indexOf(n) < 0; }).map(function (n) { return { name: n, missing: true }; }))
                .forEach(function (p) {
                    var $l = $('<label>').appendTo($list);
                    $('<input type="checkbox">').val(p.name).prop('checked', sel.indexOf(p.name) >= 0).appendTo($l);
                    $('<span>').text(p.missing && listed ? p.name + ' ' + t('picker.notListed') : propLabel(p)).appendTo($l);
                });
            if (!$list.children().length) { $('<span class="form-tips">').text(t('picker.noProperties')).appendTo($list); }
        }
        function render() {
            var refStr = isStr($ref), cur = refStr ? String($ref.typedInput('value') || '').trim() : '';
            var err = { error: state.error }, msg = !serverId() ? t('picker.noServer') : state.loading ? t('picker.loading') :
                state.error ? t('picker.failed.' + o.list, err) : (state.items && !state.items.length) ? t('picker.empty.' + o.list) : '';
            var note = state.error ? t('picker.failedShort.' + o.list, err) : msg;   // shown in the pickers themselves
            $('#node-input-' + o.ref + '-picker-row').toggle(refStr);
            if (refStr) {
                fill($('#node-input-' + o.ref + '-picker'), (state.items || []).filter(function (it) { return !o.filter || o.filter(it); }).map(function (it) {
                    var label = it[refKey] + (it.name ? ' \u2014 ' + it.name : '') + (it.kind ? ' (' + it.kind + ')' : '');
                    return { value: it[refKey], label: label };
                }), cur, note || t('picker.choose.' + o.list), state.items !== null);
            }
            var propStr = !!o.prop && isStr($prop);
            if (o.prop) {
                $('#node-input-' + o.prop + '-picker-row').toggle(propStr);
                if (propStr) { renderProps(refStr ? cur : '', state.items && state.items.length ? '' : note); }
            }
            $('#node-input-' + o.ref + '-status').text(msg).toggle(!!msg && (refStr || propStr))
                .toggleClass('ems-partner-error', !!state.error);
            if (o.onRender) { o.onRender(); }
        }
        function refresh(force) {
            var id = serverId(), seq = ++state.seq;
            state.server = id;
            state.items = null;
            state.error = null;
            state.loading = !!id;
            render();
            if (!id) { return; }
            load(o.list, id, force).then(function (list) {
                if (seq === state.seq) { state.items = list; state.loading = false; render(); }
            }, function (msg) {
                if (seq === state.seq) { state.error = msg; state.loading = false; render(); }
            });
        }
        function watch($el) {  // TypedInput: changes and keys on the element, typing ('input') inside its container
            $el.on('change keyup paste', render);
            $el.next('.red-ui-typedInput-container').on('input', render);
        }
        $server.on('change', function () { if (serverId() !== state.server) { refresh(false); } });
        watch($ref);
        watch($prop);
        function pick($input) {  // choosing from a picker writes the TypedInput, typing stays possible
            return function () { var v = $(this).val(); if (v) { $input.typedInput('value', v); } render(); };
        }
        $('#node-input-' + o.ref + '-picker').on('change', pick($ref));
        if (o.prop && !o.multi) { $('#node-input-' + o.prop + '-picker').on('change', pick($prop)); }
        $list.on('change', 'input[type="checkbox"]', function () {
            var name = this.value, sel = splitList($prop.typedInput('value')).filter(function (n) { return n !== name; });
            if (this.checked) { sel = (o.single && o.single()) ? [name] : sel.concat([name]); }
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

    // The delivery check's device pickers (#node-input-batteryDevice, -pvDevice, -meterDevice): each lists
    // the devices of its kind on the site typed in #node-input-site (all of them where the list says neither).
    function attachDevicePickers() {
        function siteRef() { var $s = $('#node-input-site'); return $s.typedInput('type') === 'str' ? String($s.typedInput('value') || '').trim() : ''; }
        var pickers = ['battery', 'pv', 'meter'].map(function (role) {
            return attach({ list: 'devices', ref: role + 'Device', filter: function (d) {
                var site = siteRef();
                return (!d.kind || d.kind === role) && (!site || !d.siteReference || d.siteReference === site);
            } });
        });
        $('#node-input-site').on('change', function () { pickers.forEach(function (p) { p.render(); }); });
        return pickers;
    }

    // Form value while the panel is open, saved value otherwise (validators run in both situations).
    function field(node, name, prefix) {
        var $el = $('#' + (prefix || 'node-input') + '-' + name);
        if (!$el.length) { return node[name]; }
        return $el.attr('type') === 'checkbox' ? $el.prop('checked') : $el.val();
    }
    function num(v) {
        var s = String(v === undefined || v === null ? '' : v).trim();
        return s === '' ? NaN : Number(s);
    }
    // The runtime's table of limits (resources/limits.js, built from src/protocol/limits.ts).
    function limits() { return window.EmsPartnerLimits; }
    // The words of a refusal: the runtime's (English), each replaced by the config node's catalogue
    // entry under "limits" when it has one (a translation); the catalogue need not have any.
    function words() {
        var L = limits(), w = $.extend(true, {}, L.WORDS);
        function tr(path, v) { var k = 'limits.' + path, r = t(k); return typeof r === 'string' && r !== k && r.indexOf(T + '.' + k) < 0 ? r : v; }
        Object.keys(w).forEach(function (k) {
            if (typeof w[k] === 'string') { w[k] = tr(k, w[k]); return; }
            Object.keys(w[k]).forEach(function (j) { w[k][j] = tr(k + '.' + j, w[k][j]); });
        });
        return w;
    }
    // The refusal of a value outside the table's entry `key`, as the runtime words it (in the editor's language when translated).
    function refusal(key) { var L = limits(); return L.refusal(L.LIMITS[key], { words: words() }); }
    // Wraps a validator of node type `type` so its message starts with the field's label, as Node-RED's own validators do.
    function named(type, label, fn) {
        return function (v, opt) {
            var r = fn.call(this, v, opt);
            if (typeof r !== 'string') { return r; }
            var def = RED.nodes.getType(type);
            return (def && def._ ? def._(type + '.label.' + label) : label) + ': ' + r;
        };
    }
    // A validator of a numeric setting against the table: `key` its entry, or a function of the node
    // giving it (then o.label is needed). o.label: the label key (default: key); o.applies(node): false when
    // the setting is not used (then not checked); o.empty: an empty value is allowed (not set, the default applies).
    // A flow saved before the setting existed (undefined) is valid: the runtime applies the default.
    function limit(type, key, o) {
        o = o || {};
        return named(type, o.label || key, function (v, opt) {
            if (v === undefined || (o.applies && !o.applies(this))) { return true; }
            if (o.empty && String(v).trim() === '') { return true; }
            var k = typeof key === 'function' ? key(this) : key, L = limits();
            return L.accepts(L.LIMITS[k], num(v)) || refusal(k);
        });
    }
    // min, max and step of a number input, or of a jQuery spinner, from the table (an excluded minimum:
    // the spinner stops at `o.floor`; smaller values can still be typed).
    function bounds($el, key, o) {
        var l = limits().LIMITS[key], min = l.minExclusive ? (o && o.floor) : l.min;
        if ($el.attr('type') === 'number') {
            $el.attr({ min: min, max: l.max, step: l.whole ? 1 : 'any' });
        } else {
            $el.spinner({ min: min, max: l.max });
        }
        return $el;
    }
    // The validators of one node type's panel: named(label, fn) and limit(key, o) (see above).
    function validators(type) {
        return {
            named: function (label, fn) { return named(type, label, fn); },
            limit: function (key, o) { return limit(type, key, o); }
        };
    }

    // A refusal as the runtime words it (a ValidationError: "<field> <text>"), for the field's validator: the panel
    // puts its label first, so the field's name goes when it is `field` (or any, without `field`); a part of it
    // (sites[2].soc) stays. What the runtime adds after sending nothing ("; nothing was sent") goes too.
    function refusalText(e, field) {
        var m = String((e && e.message) || e), f = e && e.field;
        if (f !== undefined && m.indexOf(f + ' ') === 0 && (!field || f === field)) { m = m.slice(f.length + 1); } else if (!field) { m = m.replace(/^\S+ /, ''); }
        return m.replace(/; nothing was sent$/, '');
    }
    // true, or the runtime's refusal of `fn()` for the field `field` (see refusalText).
    function runtimeCheck(field, fn) {
        try { fn(); return true; } catch (e) { return refusalText(e, field); }
    }
    // A configured path (pathDevices, …) by the runtime's rules (resources/paths.js, from src/protocol/paths.ts):
    // true, or the runtime's refusal. `key`: devices, sites, curtailment or gridLimits. Empty is the default.
    function pathRefusal(key, v) {
        var P = window.EmsPartnerPaths;
        if (!P || v === undefined) { return true; }
        try { P.validatePath(key, v); return true; } catch (e) { return refusalText(e); }
    }
    // The path and method of a raw request (ems-request) by the runtime's rules (resources/request-path.js,
    // from src/client/request-path.ts): true, or the runtime's refusal. An empty path is allowed (msg.path then).
    function requestPathRefusal(v) {
        var R = window.EmsPartnerRequestPath;
        if (!R || v === undefined || v === '') { return true; }
        try { R.checkRequestPath(v, 'path'); return true; } catch (e) { return refusalText(e); }
    }
    function requestMethodRefusal(v) {
        var R = window.EmsPartnerRequestPath;
        if (!R || v === undefined || v === '') { return true; }
        try { R.checkRequestMethod(v, 'method'); return true; } catch (e) { return refusalText(e); }
    }

    // Validates a TypedInput value that must be set: true or a message.
    function typed(v, type, opt) {
        var s = String(v === undefined || v === null ? '' : v).trim();
        if (/^\$\{[^}]+\}$/.test(s)) { return true; }
        if (s === '') { return t('errors.required'); }
        if (type === 'num') { return isFinite(num(s)) || t('errors.number'); }
        if (type === 'str' || type === 'env' || !type) { return true; }
        var r = RED.utils.validateTypedProperty ? RED.utils.validateTypedProperty(s, type, opt) : true;   // added in Node-RED 3.1.x
        return r === true || (typeof r === 'string' ? r : t('errors.invalid'));
    }

    // Flows saved by an older version are upgraded with the runtime's own table (resources/migrations.js):
    // when the editor adds a node of this package (load, import, paste), and when its panel opens, where the
    // open form then shows the upgraded values (upgradeForm, from each panel's oneditprepare).
    // Every type with migration steps (one table: migrations.ts).
    RED.events.on('nodes:add', function (n) {
        var M = window.EmsPartnerMigrations;
        if (M && Object.prototype.hasOwnProperty.call(M.MIGRATIONS, n.type)) { try { M.upgrade(n.__node__ || n); } catch (e) { /* a locked flow */ } }
    });
    function upgradeForm(node, prefix) {
        var M = window.EmsPartnerMigrations;
        if (!M) { return; }
        M.upgrade(node.__node__ || node, function (k, v) {
            var $el = $('#' + prefix + k);
            if ($el.is(':checkbox')) { $el.prop('checked', v === true || v === 'true'); } else { $el.val(v); }
        });
    }

    /** The TypedInput types of a reference (device, site, property) in every panel. */
    var REF_TYPES = ['str', 'msg', 'flow', 'global', 'env'];
    /**
     * Fills every unit <select data-ems-units="power|curtailment"> of the open form from the one list
     * (protocol/limits.ts, served as EmsPartnerLimits) and selects the node's value (Node-RED set it before
     * the options existed); a node without one keeps the first option.
     */
    function unitSelects(node) {
        var L = limits(), lists = { power: L.POWER_UNITS, curtailment: L.CURTAILMENT_UNITS };
        $('select[data-ems-units]').each(function () {
            var $s = $(this), list = lists[$s.attr('data-ems-units')] || [], v = node[this.id.replace(/^node-input-/, '')];
            $s.empty();
            list.forEach(function (u) { $s.append($('<option></option>').val(u).text(u)); });
            // A value the list lacks (a hand-written flow) stays unselected, so the panel marks it invalid.
            if (v !== undefined && v !== null && v !== '') { $s.val(v); }
        });
    }

    window.EmsPartnerEditor = { REF_TYPES: REF_TYPES, unitSelects: unitSelects, upgradeForm: upgradeForm, keys: keys, isSecret: isSecret, t: t, configOf: configOf, post: post, ask: ask, deployedAsIs: deployedAsIs, load: load, errorText: errorText,
        cleartextRisk: cleartextRisk, splitList: splitList, attach: attach, attachDevicePickers: attachDevicePickers, field: field, num: num, typed: typed,
        limits: limits, words: words, refusal: refusal, named: named, limit: limit, bounds: bounds, validators: validators,
        pathRefusal: pathRefusal, refusalText: refusalText, runtimeCheck: runtimeCheck, requestPathRefusal: requestPathRefusal, requestMethodRefusal: requestMethodRefusal };
})();
