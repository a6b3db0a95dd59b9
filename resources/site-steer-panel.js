/**
 * The site steer node's editor code (window.EmsPartnerSiteSteerPanel): the validator of each property,
 * the rows each mode shows, the labels, and the form's TypedInputs and pickers. Loaded by
 * nodes/ems-site-steer.html (which holds the node's definition, written out for the Flows library's
 * scorecard, and the form) after the shared editor code (resources/editor.js, resources/limits.js,
 * loaded by the config node's panel).
 */
(function () {
    'use strict';
    var T = 'ems-site-steer';
    var VALUE_TYPES = ['num', 'msg', 'flow', 'global', 'env', 'jsonata'];
    var WATTS = { W: 1, kW: 1e3, MW: 1e6 };
    // Which value rows each mode shows (the runtime sends only these components).
    var ROWS = {
        combined: ['ess', 'curtailment', 'maximizeGridImport', 'stopAction'],
        ess: ['ess'],
        curtailment: ['curtailment', 'stopAction'],
        'grid-target': ['gridTarget', 'deadband'],
        'grid-limits': ['upperLimit', 'lowerLimit'],
        portfolio: ['ess', 'portfolioSplit']
    };
    function t(key, opts) { return RED.nodes.getType(T)._(T + '.' + key, opts); }
    function E() { return window.EmsPartnerEditor; }
    // Validators (label-prefixed; numeric ones, V.limit, from the runtime's table of limits, resources/limits.js).
    var V = E().validators(T), named = V.named, L = E().limits().LIMITS;
    function f(node, name) { return E().field(node, name); }
    function shows(node, row) { return (ROWS[f(node, 'mode')] || ROWS.ess).indexOf(row) >= 0; }
    function limit(node, name) { var n = E().num(f(node, name)); return isFinite(n) && n > 0 ? n : 0; }
    // A unit the API accepts (a flow written by hand or by an older version may hold another one).
    function unitOf(key, units) {
        return named(key, function (v, opt) { return v === undefined || units.indexOf(v) >= 0 || t('errors.unit', { units: units.join(', ') }); });
    }
    // stop sends "no curtailment" (the PV peak power) in this mode and setting.
    function lifts(node) { return shows(node, 'stopAction') && f(node, 'stopAction') === 'lift'; }
    // A checkbox in the form, a saved boolean (or "true"/"false" in a hand-written flow) otherwise; unset = allowed.
    function allowsMaxImport(node) { var v = f(node, 'allowMaximizeGridImport'); return v !== false && v !== 'false'; }
    // A grid limit of the node in W: NaN when not a number set in the node (empty, or taken from msg, flow, ...).
    function limitW(node, which) {
        var v = f(node, which + 'LimitValue');
        if ((f(node, which + 'LimitValueType') || 'num') !== 'num' || v === undefined || String(v).trim() === '') { return NaN; }
        return E().num(v) * (WATTS[f(node, which + 'LimitUnit')] || 1e3);
    }
    // The validator of a grid limit (upper or lower): a number (or a TypedInput that gives one), within maxGridLimit; lower <= upper.
    function gridLimit(which) {
        return named(which + 'Limit', function (v, opt) {
            if (!shows(this, which + 'Limit') || v === undefined) { return true; }
            var type = f(this, which + 'LimitValueType') || 'num';
            if (type !== 'num') { return E().typed(v, type, opt); }
            if (String(v).trim() === '') { return true; }   // not set: msg.payload.upperLimit / lowerLimit
            var w = limitW(this, which), max = limit(this, 'maxGridLimit');
            if (!isFinite(w)) { return t('errors.gridLimit'); }
            if (max && Math.abs(w) > max) { return t('errors.maxGridLimit', { max: max }); }
            return which !== 'lower' || !(w > limitW(this, 'upper')) || t('errors.limitOrder');
        });
    }


    // The node's site list (`sites`), checked as the runtime's parseSiteList (src/protocol/portfolio.ts)
    // checks it: empty, references separated by commas, semicolons, spaces or new lines, or a JSON
    // array of references or {site, maxPowerW, soc}; at most SERVICE.maxFleetSites; no site twice.
    var REF = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
    function numeric(v) { return typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN; }
    function siteListRefusal(v) {
        var s = String(v === undefined || v === null ? '' : v).trim(), list;
        if (s === '') { return true; }
        if (s.charAt(0) === '[') {
            try { list = JSON.parse(s); } catch (e) { return t('errors.sites'); }
            if (!Array.isArray(list)) { return t('errors.sites'); }
        } else { list = s.split(/[\s,;]+/).filter(function (r) { return r !== ''; }); }
        if (list.length === 0) { return t('errors.sites'); }   // "[]" or only separators: the runtime wants at least one site
        var max = (E().limits().SERVICE || {}).maxFleetSites || 5000, seen = {};
        if (list.length > max) { return t('errors.sitesCount', { count: list.length, max: max }); }
        for (var i = 0; i < list.length; i++) {
            var e = list[i], ref = typeof e === 'string' ? e.trim() : e && typeof e === 'object' && !Array.isArray(e) ? e.site : undefined;
            if (typeof ref !== 'string' || !REF.test(ref.trim())) { return t('errors.sites'); }
            if (e && typeof e === 'object') {
                var bad = Object.keys(e).some(function (k) { return ['site', 'maxPowerW', 'soc'].indexOf(k) < 0; });
                // As the runtime reads them: a number or numeric text (true, Infinity: no).
                var p = numeric(e.maxPowerW), q = numeric(e.soc), unset = function (x) { return x === undefined || x === null || x === ''; };
                if (bad || (!unset(e.maxPowerW) && !(p > 0 && isFinite(p))) || (!unset(e.soc) && !(q >= 0 && q <= 100))) { return t('errors.sites'); }
            }
            ref = ref.trim();
            if (seen[ref]) { return t('errors.sitesTwice', { site: ref }); }
            seen[ref] = true;
        }
        return true;
    }
    // A fleet (the node's sites, or portfolio mode with msg.sites) needs no single site.
    function fleet(node) { return String(f(node, 'sites') || '').trim() !== '' || f(node, 'mode') === 'portfolio'; }

    // The delivery check: which device each mode is measured with; the ranges of its settings are
    // rows of the runtime's table of limits (resources/limits.js).
    var DEVICE_MODES = { battery: ['ess', 'combined'], pv: ['curtailment', 'combined'], meter: ['grid-target', 'grid-limits', 'combined'] };
    function verifies(node) { var v = f(node, 'verify'); return v === true || v === 'true'; }
    function vrow(key) { return L[key]; }
    // A setting of the check, checked only with verify on (the runtime uses it only then).
    function verifyLimit(key) {
        return named(key, function (v) {
            if (v === undefined || !verifies(this) || String(v).trim() === '') { return true; }
            var M = E().limits();
            return M.accepts(vrow(key), E().num(v)) || M.refusal(vrow(key), { words: E().words() });
        });
    }
    // A device of the check (battery, pv, meter): empty is allowed (the report then says which one is missing).
    function device(role) {
        return named(role + 'Device', function (v, opt) {
            if (v === undefined || !verifies(this) || DEVICE_MODES[role].indexOf(f(this, 'mode') || 'ess') < 0 || String(v).trim() === '') { return true; }
            return E().typed(v, f(this, role + 'DeviceType') || 'str', opt);
        });
    }

    // The definition (defaults, inputs, outputs, icon) is written out in nodes/ems-site-steer.html, where the Flows
    // library's scorecard (node-red-dev validate) reads it; it takes from here the validator of each property, by name,
    // the table of limits (defaults), and the functions of the panel.
    window.EmsPartnerSiteSteerPanel = {
        LIMITS: L,
        validate: {
            site: named('site', function (v, opt) {
                if (fleet(this) && String(v === undefined ? '' : v).trim() === '') { return true; }
                return E().typed(v, f(this, 'siteType') || 'str', opt);
            }),
            // A fleet: every mode applies to each site (src/nodes/steer-fleet.ts); '' = the one site above or msg.sites.
            sites: named('sites', siteListRefusal),
            portfolioSplit: named('portfolioSplit', function (v) {
                return v === undefined || v === '' || v === 'rating' || v === 'soc' || t('errors.portfolioSplit');
            }),
            essValue: named('ess', function (v, opt) {
                // Empty = not set: the runtime then takes a number in msg.payload (or nothing in mode combined).
                if (!shows(this, 'ess') || v === undefined || String(v).trim() === '') { return true; }
                var type = f(this, 'essValueType') || 'msg', r = E().typed(v, type, opt), max = limit(this, 'maxEssPower');
                if (r !== true || type !== 'num' || !max) { return r; }
                return Math.abs(E().num(v) * (WATTS[f(this, 'essUnit')] || 1e3)) <= max || t('errors.maxEssPower', { max: max });
            }),
            essUnit: unitOf('ess', ['W', 'kW', 'MW']),
            curtailmentValue: named('curtailment', function (v, opt) {
                if (!shows(this, 'curtailment') || v === undefined) { return true; }
                var type = f(this, 'curtailmentValueType') || 'num';
                if (type !== 'num') { return E().typed(v, type, opt); }
                if (String(v).trim() === '') { return true; }   // not set: msg.payload or nothing
                var n = E().num(v), unit = f(this, 'curtailmentUnit') || 'kW', max = limit(this, 'maxCurtailment');
                if (!isFinite(n) || n < 0) { return t('errors.curtailment'); }
                if (unit === '%') { return n <= 100 || t('errors.percent'); }
                return !max || n * (WATTS[unit] || 1e3) <= max || t('errors.maxCurtailment', { max: max });
            }),
            curtailmentUnit: unitOf('curtailment', ['W', 'kW', 'MW', '%']),
            maximizeGridImport: named('maximizeGridImport', function (v) {
                return !shows(this, 'maximizeGridImport') || v !== 'true' || allowsMaxImport(this) || t('errors.maximizeGridImportForbidden');
            }),
            gridTargetValue: named('gridTarget', function (v, opt) {
                if (v === undefined || String(v).trim() === '' || !shows(this, 'gridTarget')) { return true; }
                var type = f(this, 'gridTargetValueType') || 'msg', r = E().typed(v, type, opt), max = limit(this, 'maxGridPower');
                if (r !== true || type !== 'num' || !max) { return r; }
                return Math.abs(E().num(v) * (WATTS[f(this, 'gridTargetUnit')] || 1e3)) <= max || t('errors.maxGridPower', { max: max });
            }),
            gridTargetUnit: unitOf('gridTarget', ['W', 'kW', 'MW']),
            deadbandValue: named('deadband', function (v, opt) {
                if (!shows(this, 'deadband') || v === undefined || String(v).trim() === '') { return true; }
                var n = E().num(v), max = limit(this, 'maxGridPower');
                if (!isFinite(n) || n < 0) { return t('errors.deadband'); }
                return !max || n * (WATTS[f(this, 'deadbandUnit')] || 1e3) <= max || t('errors.maxGridPower', { max: max });
            }),
            deadbandUnit: unitOf('deadband', ['W', 'kW', 'MW']),
            upperLimitValue: gridLimit('upper'),
            upperLimitUnit: unitOf('upperLimit', ['W', 'kW', 'MW']),
            lowerLimitValue: gridLimit('lower'),
            lowerLimitUnit: unitOf('lowerLimit', ['W', 'kW', 'MW']),
            duration: V.limit('duration', { applies: function (node) { return f(node, 'validity') === 'duration'; } }),
            maxEssPower: V.limit('maxEssPower'),
            maxCurtailment: V.limit('maxCurtailment'),
            // Empty = not set (no limit / unknown), else as the table says.
            maxGridPower: V.limit('maxGridPower', { empty: true }),
            maxGridLimit: V.limit('maxGridLimit', { empty: true }),
            stopAction: named('stopAction', function (v) {
                return v === undefined || v === '' || v === 'expire' || v === 'lift' || t('errors.stopAction');
            }),
            pvPeakPower: named('pvPeakPower', function (v) {
                var n = E().num(v), max = limit(this, 'maxCurtailment');
                if (!lifts(this)) { return v === undefined || String(v).trim() === '' || E().limits().accepts(L.pvPeakPower, n) || E().refusal('pvPeakPower'); }
                if (!isFinite(n) || n <= 0) { return t('errors.pvPeakPower'); }   // the runtime refuses every stop without it
                return !max || n <= max || t('errors.pvPeakPowerOverLimit', { max: max });
            }),
            batteryDevice: device('battery'),
            pvDevice: device('pv'),
            meterDevice: device('meter'),
            verifyEvery: verifyLimit('verifyEvery'),
            tolerance: verifyLimit('tolerance'),
            toleranceMin: verifyLimit('toleranceMin')
        },
        paletteLabel: function () {
            var l = this._ ? this._(T + '.paletteLabel') : '';
            return l && l.indexOf('paletteLabel') < 0 ? l : 'site steer';
        },
        label: function () { return this.name || t('paletteLabel') + ' (' + (this.mode || 'ess') + ')'; },
        labelStyle: function () { return this.name ? 'node_label_italic' : ''; },
        inputLabels: function () { return t('label.inputLabel'); },
        outputLabels: function (i) { return i === 1 ? t('label.outputLabel2') : t('label.outputLabel'); },
        oneditprepare: function () {
            window.EmsPartnerEditor.unitSelects(this);   // the W/kW/MW(/%) lists, from protocol/limits.ts
            window.EmsPartnerEditor.upgradeForm(this, 'node-input-');   // a node of an older version (migrations.js), and its open form
            $('#node-input-site').typedInput({ default: 'str', types: window.EmsPartnerEditor.REF_TYPES, typeField: '#node-input-siteType' });
            ['essValue', 'curtailmentValue', 'gridTargetValue', 'upperLimitValue', 'lowerLimitValue'].forEach(function (p) {
                var dflt = p === 'essValue' || p === 'gridTargetValue' ? 'msg' : 'num';
                $('#node-input-' + p).typedInput({ default: dflt, types: VALUE_TYPES, typeField: '#node-input-' + p + 'Type' });
            });
            E().bounds($('#node-input-duration'), 'duration', { floor: 1 });

            var $mode = $('#node-input-mode'), $validity = $('#node-input-validity'), $stop = $('#node-input-stopAction');
            if (!$stop.val()) { $stop.val('expire'); }
            function update() {
                var rows = ROWS[$mode.val()] || ROWS.ess;
                ['ess', 'curtailment', 'maximizeGridImport', 'gridTarget', 'deadband', 'stopAction', 'upperLimit', 'lowerLimit', 'portfolioSplit'].forEach(function (r) {
                    $('.node-input-' + r + '-row').toggle(rows.indexOf(r) >= 0);
                });
                // PV peak: what stop sends with "lift", and the power a % curtailment is converted with.
                $('#node-input-pvPeakPower-row').toggle(rows.indexOf('curtailment') >= 0);
                $('#node-input-duration-row').toggle($validity.val() === 'duration');
            }
            var $verify = $('#node-input-verify');
            ['battery', 'pv', 'meter'].forEach(function (role) {
                $('#node-input-' + role + 'Device').typedInput({ default: 'str', types: window.EmsPartnerEditor.REF_TYPES, typeField: '#node-input-' + role + 'DeviceType' });
            });
            function verifyRows() {
                var on = $verify.prop('checked'), mode = $mode.val() || 'ess';
                $('.node-input-verify-row').toggle(on);
                ['battery', 'pv', 'meter'].forEach(function (role) {
                    $('.node-input-' + role + 'Device-rows').toggle(on && DEVICE_MODES[role].indexOf(mode) >= 0);
                });
                $('#node-input-outputs').val(on ? 2 : 1);   // output 2: the delivery reports
            }
            $mode.add($validity).add($stop).on('change', update);
            $mode.add($verify).on('change', verifyRows);
            update();
            verifyRows();
            E().attach({ list: 'sites', ref: 'site' });
            // The device pickers list the devices of their kind, of the site when one is typed.
            E().attachDevicePickers();
        }
    };
})();
