/**
 * The site steer node's editor code (window.EmsPartnerSiteSteerPanel): the validator of each property,
 * the rows each mode shows, the labels, and the form's TypedInputs and pickers. Loaded by
 * nodes/ems-site-steer.html (which holds the node's definition, written out for the Flows library's
 * scorecard, and the form) after the shared editor code (resources/editor.js, resources/limits.js,
 * loaded by the config node's panel). The steering rules are the runtime's own (resources/steer-rules.js,
 * window.EmsPartnerSteerRules, bundled from src/protocol/steer-panel.ts): the site list, the rows of
 * each mode, the node's power limits, with the runtime's words.
 */
(function () {
    'use strict';
    var T = 'ems-site-steer';
    var VALUE_TYPES = ['num', 'msg', 'flow', 'global', 'env', 'jsonata'];
    function t(key, opts) { return RED.nodes.getType(T)._(T + '.' + key, opts); }
    function E() { return window.EmsPartnerEditor; }
    // The runtime's steering rules (read when used: the panel's scripts load in any order).
    function R() { return window.EmsPartnerSteerRules; }
    // Validators (label-prefixed; numeric ones, V.limit, from the runtime's table of limits, resources/limits.js).
    var V = E().validators(T), named = V.named, L = E().limits().LIMITS;
    function f(node, name) { return E().field(node, name); }
    // Which value rows the node's mode shows: the components the runtime sends in it (protocol/steer-modes.ts).
    function shows(node, row) { return R().panelRows(f(node, 'mode')).indexOf(row) >= 0; }
    function limit(node, name) { var n = E().num(f(node, name)); return isFinite(n) && n > 0 ? n : 0; }
    // The unit lists (protocol/limits.ts): 'power' (W, kW, MW) or 'curtailment' (and %).
    function units(which) { var L = E().limits(); return which === 'curtailment' ? L.CURTAILMENT_UNITS : L.POWER_UNITS; }
    // A unit the API accepts (a flow written by hand or by an older version may hold another one).
    function unitOf(key, which) {
        return named(key, function (v, opt) { var u = units(which); return v === undefined || u.indexOf(v) >= 0 || t('errors.unit', { units: u.join(', ') }); });
    }
    // A number of the node in its unit, as the runtime takes it: {value, unit} (no unit set: kW).
    function power(node, v, unitKey) { var u = f(node, unitKey); return { value: E().num(v), unit: units('power').indexOf(u) >= 0 ? u : 'kW' }; }
    // The node's power limits, W (0 = none), as the runtime's checkPowerLimits takes them.
    function powerLimits(node) { return { maxEssPower: limit(node, 'maxEssPower'), maxCurtailment: limit(node, 'maxCurtailment'), maxGridPower: limit(node, 'maxGridPower') }; }
    // true, or the runtime's refusal of a value beyond a limit (protocol/steer-modes.ts checkPowerLimits), without
    // the component's name (`field`), the panel's label first.
    function withinLimits(node, field, ess, curt, grid) {
        return E().runtimeCheck(field, function () { R().checkPowerLimits(powerLimits(node), ess, curt, grid); });
    }
    // stop sends "no curtailment" (the PV peak power) in this mode and setting.
    function lifts(node) { return shows(node, 'stopAction') && f(node, 'stopAction') === 'lift'; }
    // A checkbox in the form, a saved boolean (or "true"/"false" in a hand-written flow) otherwise; unset = allowed.
    function allowsMaxImport(node) { var v = f(node, 'allowMaximizeGridImport'); return v !== false && v !== 'false'; }
    // A grid limit of the node in W: NaN when not a number set in the node (empty, or taken from msg, flow, ...).
    function limitW(node, which) {
        var v = f(node, which + 'LimitValue');
        if ((f(node, which + 'LimitValueType') || 'num') !== 'num' || v === undefined || String(v).trim() === '') { return NaN; }
        return R().toWatts(power(node, v, which + 'LimitUnit'));
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


    // The node's site list (`sites`): the runtime's parseSiteList (protocol/portfolio.ts), its refusal as it words it.
    function siteListRefusal(v) {
        return E().runtimeCheck('sites', function () { R().parseSiteList(v, 'sites'); });
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
                return E().runtimeCheck('portfolioSplit', function () { R().portfolioSplitOf(v); });
            }),
            essValue: named('ess', function (v, opt) {
                // Empty = not set: the runtime then takes a number in msg.payload (or nothing in mode combined).
                if (!shows(this, 'ess') || v === undefined || String(v).trim() === '') { return true; }
                var type = f(this, 'essValueType') || 'msg', r = E().typed(v, type, opt);
                if (r !== true || type !== 'num') { return r; }
                return withinLimits(this, 'energyStorage', power(this, v, 'essUnit'));
            }),
            essUnit: unitOf('ess', 'power'),
            curtailmentValue: named('curtailment', function (v, opt) {
                if (!shows(this, 'curtailment') || v === undefined) { return true; }
                var type = f(this, 'curtailmentValueType') || 'num';
                if (type !== 'num') { return E().typed(v, type, opt); }
                if (String(v).trim() === '') { return true; }   // not set: msg.payload or nothing
                var n = E().num(v), unit = f(this, 'curtailmentUnit') || 'kW';
                if (!isFinite(n) || n < 0) { return t('errors.curtailment'); }
                if (unit === '%') { return n <= 100 || t('errors.percent'); }
                return withinLimits(this, 'curtailment', undefined, power(this, v, 'curtailmentUnit'));
            }),
            curtailmentUnit: unitOf('curtailment', 'curtailment'),
            maximizeGridImport: named('maximizeGridImport', function (v) {
                return !shows(this, 'maximizeGridImport') || v !== 'true' || allowsMaxImport(this) || t('errors.maximizeGridImportForbidden');
            }),
            gridTargetValue: named('gridTarget', function (v, opt) {
                if (v === undefined || String(v).trim() === '' || !shows(this, 'gridTarget')) { return true; }
                var type = f(this, 'gridTargetValueType') || 'msg', r = E().typed(v, type, opt);
                if (r !== true || type !== 'num') { return r; }
                return withinLimits(this, 'gridTarget', undefined, undefined, { setpoint: power(this, v, 'gridTargetUnit') });
            }),
            gridTargetUnit: unitOf('gridTarget', 'power'),
            deadbandValue: named('deadband', function (v, opt) {
                if (!shows(this, 'deadband') || v === undefined || String(v).trim() === '') { return true; }
                var n = E().num(v);
                if (!isFinite(n) || n < 0) { return t('errors.deadband'); }
                return withinLimits(this, 'deadband', undefined, undefined, { setpoint: { value: 0, unit: 'W' }, deadband: power(this, v, 'deadbandUnit') });
            }),
            deadbandUnit: unitOf('deadband', 'power'),
            upperLimitValue: gridLimit('upper'),
            upperLimitUnit: unitOf('upperLimit', 'power'),
            lowerLimitValue: gridLimit('lower'),
            lowerLimitUnit: unitOf('lowerLimit', 'power'),
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
                var n = E().num(v);
                if (!lifts(this)) { return v === undefined || String(v).trim() === '' || E().limits().accepts(L.pvPeakPower, n) || E().refusal('pvPeakPower'); }
                if (!isFinite(n) || n <= 0) { return t('errors.pvPeakPower'); }   // the runtime refuses every stop without it
                // What stop sends: a curtailment of the PV peak power, within maxCurtailment (as the runtime's liftCommand checks it).
                return withinLimits(this, 'pvPeakPower', undefined, { value: n, unit: 'W' });
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
            // Every mode's rows (protocol/steer-modes.ts), each shown in the modes that use it.
            var all = R().STEER_MODES.reduce(function (a, m) { return a.concat(R().panelRows(m).filter(function (r) { return a.indexOf(r) < 0; })); }, []);
            function update() {
                var rows = R().panelRows($mode.val());
                all.forEach(function (r) {
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
