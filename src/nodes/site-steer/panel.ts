/**
 * The site steer node's editor code (window.EmsPartnerSiteSteerPanel): the validator of each property and
 * the labels; the form (the rows each mode shows, TypedInputs, pickers) is in panel-form.ts. `npm run build`
 * compiles it (tsconfig.editor.json) into resources/site-steer-panel.js, loaded by ems-site-steer.html (which
 * holds the node's definition, written out for the Flows library's scorecard, and the form) after the
 * shared editor code (resources/editor.js, resources/limits.js, loaded by the config node's panel). The
 * steering rules (site list, rows of each mode, power limits, grid limits, in the runtime's words) are the
 * runtime's own: resources/steer-rules.js (window.EmsPartnerSteerRules), bundled from protocol/steer-rules.ts.
 */
import type { CurtailmentValue, PowerUnit, PowerValue } from '../../protocol/types';
import type { GridLimitSettings } from '../../protocol/grid-limits';
import type { LimitKey } from '../../protocol/limits';
import type { PanelRow } from '../../protocol/steer-modes';
import type { EditorNode, Validator } from '../../editor/editor';
import { DEVICE_MODES, type Role } from './panel-form';

export { oneditprepare } from './panel-form';

const NODE_TYPE = 'ems-site-steer';
function E(): Window['EmsPartnerEditor'] {
  return window.EmsPartnerEditor;
}
const i18n = E().translator(NODE_TYPE);
// The runtime's steering rules (read when used: the panel's scripts load in any order).
function R(): Window['EmsPartnerSteerRules'] {
  return window.EmsPartnerSteerRules;
}
// Validators (label-prefixed; numeric ones, fieldRules.limit, from the runtime's table of limits, resources/limits.js).
const fieldRules = E().validators(NODE_TYPE),
  named = fieldRules.named,
  limitTable = E().limits().LIMITS;
function f(node: EditorNode, name: string): unknown {
  return E().field(node, name);
}
/** A setting that is a string when set (a mode, a unit, a TypedInput's type). */
function s(node: EditorNode, name: string): string | undefined {
  return f(node, name) as string | undefined;
}
// Which value rows the node's mode shows: the components the runtime sends in it (protocol/steer-modes.ts).
function shows(node: EditorNode, row: PanelRow | 'pvPeakPower'): boolean {
  return (
    R()
      .panelRows(f(node, 'mode'))
      .indexOf(row as PanelRow) >= 0
  );
}
function limit(node: EditorNode, name: string): number {
  const amount = E().num(f(node, name));
  return isFinite(amount) && amount > 0 ? amount : 0;
}
// The unit lists (protocol/limits.ts): 'power' (W, kW, MW) or 'curtailment' (and %).
function units(which: 'power' | 'curtailment'): readonly string[] {
  const table = E().limits();
  return which === 'curtailment' ? table.CURTAILMENT_UNITS : table.POWER_UNITS;
}
// A unit the API accepts (a flow written by hand or by an older version may hold another one).
function unitOf(key: string, which: 'power' | 'curtailment'): Validator {
  return named(key, function (v) {
    const accepted = units(which);
    return v === undefined || accepted.indexOf(v as string) >= 0 || i18n('errors.unit', { units: accepted.join(', ') });
  });
}
// A number of the node in its unit, as the runtime takes it: {value, unit} (no unit set: kW).
function power(node: EditorNode, v: unknown, unitKey: string): PowerValue {
  const unit = s(node, unitKey);
  return { value: E().num(v), unit: units('power').indexOf(unit as string) >= 0 ? (unit as PowerUnit) : 'kW' };
}
// The node's power limits set as numbers, W (0 = the site's rating or none: known only to the runtime, which reads
// the site list), as the runtime's checkPowerLimits takes them.
function powerLimits(node: EditorNode) {
  return {
    maxEssPower: limit(node, 'maxEssPower'),
    maxCurtailment: limit(node, 'maxCurtailment'),
    maxGridPower: limit(node, 'maxGridPower'),
  };
}
// true, or the runtime's refusal of a value beyond a limit (protocol/steer-modes.ts checkPowerLimits), without
// the component's name (`field`), the panel's label first.
function withinLimits(
  node: EditorNode,
  field: string,
  ess?: PowerValue,
  curt?: CurtailmentValue,
  grid?: { setpoint: PowerValue; deadband?: PowerValue },
): true | string {
  return E().runtimeCheck(field, function () {
    R().checkPowerLimits(powerLimits(node), ess, curt, grid);
  });
}
// stop sends "no curtailment" (the PV peak power) in this mode and setting.
function lifts(node: EditorNode): boolean {
  return shows(node, 'stopAction') && f(node, 'stopAction') === 'lift';
}
// A checkbox in the form, a saved boolean (or "true"/"false" in a hand-written flow) otherwise; unset = allowed.
function allowsMaxImport(node: EditorNode): boolean {
  const allowed = f(node, 'allowMaximizeGridImport');
  return allowed !== false && allowed !== 'false';
}
// The grid-limits part of the node's settings as the runtime takes it (protocol/grid-limits.ts): its units (one the
// list lacks counts as kW here; the unit's own validator refuses it), its maxGridLimit, W (0 = none).
function gridSettings(node: EditorNode): GridLimitSettings {
  return {
    upperLimitUnit: power(node, 0, 'upperLimitUnit').unit,
    lowerLimitUnit: power(node, 0, 'lowerLimitUnit').unit,
    maxGridLimit: limit(node, 'maxGridLimit'),
  };
}
const GRID_FIELDS = { upper: 'upperLimit', lower: 'lowerLimit' };
// The upper limit as the lower one is checked against: a number set in the node that the runtime accepts on its own
// (else undefined: empty, taken from msg, flow, ..., or refused, which the upper limit's validator says).
function upperOf(node: EditorNode, settings: GridLimitSettings): unknown {
  const upper = f(node, 'upperLimitValue');
  if ((f(node, 'upperLimitValueType') || 'num') !== 'num' || upper === undefined || String(upper).trim() === '') {
    return undefined;
  }
  return E().runtimeCheck('upperLimit', function () {
    R().parseGridLimits(settings, upper, undefined, GRID_FIELDS);
  }) === true
    ? upper
    : undefined;
}
// The validator of a grid limit (upper or lower): a number (or a TypedInput that gives one); a number is checked by the
// runtime's parseGridLimits (within maxGridLimit; lower not above upper), its refusal in its words.
function gridLimit(which: 'upper' | 'lower'): Validator {
  return named(which + 'Limit', function (v, opt) {
    if (!shows(this, which === 'upper' ? 'upperLimit' : 'lowerLimit') || v === undefined) {
      return true;
    }
    const type = s(this, which + 'LimitValueType') || 'num';
    if (type !== 'num') {
      return E().typed(v, type, opt);
    }
    if (String(v).trim() === '') {
      return true;
    } // not set: msg.payload.upperLimit / lowerLimit
    const settings = gridSettings(this),
      upper = which === 'upper' ? v : upperOf(this, settings);
    return E().runtimeCheck(which + 'Limit', function () {
      R().parseGridLimits(settings, upper, which === 'lower' ? v : undefined, GRID_FIELDS);
    });
  });
}

// The node's site list (`sites`): the runtime's parseSiteList (protocol/portfolio.ts), its refusal as it words it.
function siteListRefusal(v: unknown): true | string {
  return E().runtimeCheck('sites', function () {
    R().parseSiteList(v, 'sites');
  });
}
// A fleet (the node's sites, or portfolio mode with msg.sites) needs no single site.
function fleet(node: EditorNode): boolean {
  return String(f(node, 'sites') || '').trim() !== '' || f(node, 'mode') === 'portfolio';
}

// The delivery check: the ranges of its settings are rows of the runtime's table of limits (resources/limits.js).
function verifies(node: EditorNode): boolean {
  const verify = f(node, 'verify');
  return verify === true || verify === 'true';
}
function vrow(key: LimitKey) {
  return limitTable[key];
}
// A setting of the check, checked only with verify on (the runtime uses it only then).
function verifyLimit(key: LimitKey): Validator {
  return named(key, function (v) {
    if (v === undefined || !verifies(this) || String(v).trim() === '') {
      return true;
    }
    const table = E().limits();
    return table.accepts(vrow(key), E().num(v)) || table.refusal(vrow(key), { words: E().words() });
  });
}
// A device of the check (battery, pv, meter): empty is allowed (the report then says which one is missing).
function device(role: Role): Validator {
  return named(role + 'Device', function (v, opt) {
    if (
      v === undefined ||
      !verifies(this) ||
      DEVICE_MODES[role].indexOf(s(this, 'mode') || 'ess') < 0 ||
      String(v).trim() === ''
    ) {
      return true;
    }
    return E().typed(v, s(this, role + 'DeviceType') || 'str', opt);
  });
}

// The definition (defaults, inputs, outputs, icon) is written out in ems-site-steer.html, where the Flows
// library's scorecard reads it; it takes from here the validator of each property, by name,
// the table of limits (defaults), and the functions of the panel.
export const LIMITS = limitTable;
export const validate: Record<string, Validator> = {
  site: named('site', function (v, opt) {
    if (fleet(this) && String(v === undefined ? '' : v).trim() === '') {
      return true;
    }
    return E().typed(v, s(this, 'siteType') || 'str', opt);
  }),
  // A fleet: every mode applies to each site (src/nodes/site-steer/fleet.ts); '' = the one site above or msg.sites.
  sites: named('sites', siteListRefusal),
  portfolioSplit: named('portfolioSplit', function (v) {
    return E().runtimeCheck('portfolioSplit', function () {
      R().portfolioSplitOf(v);
    });
  }),
  essValue: named('ess', function (v, opt) {
    // Empty = not set: the runtime then takes a number in msg.payload (or nothing in mode combined).
    if (!shows(this, 'ess') || v === undefined || String(v).trim() === '') {
      return true;
    }
    const type = s(this, 'essValueType') || 'msg',
      typedCheck = E().typed(v, type, opt);
    if (typedCheck !== true || type !== 'num') {
      return typedCheck;
    }
    return withinLimits(this, 'energyStorage', power(this, v, 'essUnit'));
  }),
  essUnit: unitOf('ess', 'power'),
  curtailmentValue: named('curtailment', function (v, opt) {
    if (!shows(this, 'curtailment') || v === undefined) {
      return true;
    }
    const type = s(this, 'curtailmentValueType') || 'num';
    if (type !== 'num') {
      return E().typed(v, type, opt);
    }
    if (String(v).trim() === '') {
      return true;
    } // not set: msg.payload or nothing
    const amount = E().num(v),
      unit = f(this, 'curtailmentUnit') || 'kW';
    if (!isFinite(amount) || amount < 0) {
      return i18n('errors.curtailment');
    }
    if (unit === '%') {
      return amount <= 100 || i18n('errors.percent');
    }
    return withinLimits(this, 'curtailment', undefined, power(this, v, 'curtailmentUnit'));
  }),
  curtailmentUnit: unitOf('curtailment', 'curtailment'),
  maximizeGridImport: named('maximizeGridImport', function (v) {
    return (
      !shows(this, 'maximizeGridImport') ||
      v !== 'true' ||
      allowsMaxImport(this) ||
      i18n('errors.maximizeGridImportForbidden')
    );
  }),
  gridTargetValue: named('gridTarget', function (v, opt) {
    if (v === undefined || String(v).trim() === '' || !shows(this, 'gridTarget')) {
      return true;
    }
    const type = s(this, 'gridTargetValueType') || 'msg',
      typedCheck = E().typed(v, type, opt);
    if (typedCheck !== true || type !== 'num') {
      return typedCheck;
    }
    return withinLimits(this, 'gridTarget', undefined, undefined, { setpoint: power(this, v, 'gridTargetUnit') });
  }),
  gridTargetUnit: unitOf('gridTarget', 'power'),
  deadbandValue: named('deadband', function (v) {
    if (!shows(this, 'deadband') || v === undefined || String(v).trim() === '') {
      return true;
    }
    const amount = E().num(v);
    if (!isFinite(amount) || amount < 0) {
      return i18n('errors.deadband');
    }
    return withinLimits(this, 'deadband', undefined, undefined, {
      setpoint: { value: 0, unit: 'W' },
      deadband: power(this, v, 'deadbandUnit'),
    });
  }),
  deadbandUnit: unitOf('deadband', 'power'),
  upperLimitValue: gridLimit('upper'),
  upperLimitUnit: unitOf('upperLimit', 'power'),
  lowerLimitValue: gridLimit('lower'),
  lowerLimitUnit: unitOf('lowerLimit', 'power'),
  duration: fieldRules.limit('duration', {
    applies: function (node) {
      return f(node, 'validity') === 'duration';
    },
  }),
  // The power limits: empty = the site's rating (the default), "none" = off, else W as the table says.
  maxEssPower: fieldRules.limit('maxEssPower', { rating: true }),
  maxCurtailment: fieldRules.limit('maxCurtailment', { rating: true }),
  maxGridPower: fieldRules.limit('maxGridPower', { rating: true }),
  maxGridLimit: fieldRules.limit('maxGridLimit', { rating: true }),
  stopAction: named('stopAction', function (v) {
    return v === undefined || v === '' || v === 'expire' || v === 'lift' || i18n('errors.stopAction');
  }),
  pvPeakPower: named('pvPeakPower', function (v) {
    const amount = E().num(v);
    if (!lifts(this)) {
      return (
        v === undefined ||
        String(v).trim() === '' ||
        E().limits().accepts(limitTable.pvPeakPower, amount) ||
        E().refusal('pvPeakPower')
      );
    }
    if (!isFinite(amount) || amount <= 0) {
      return i18n('errors.pvPeakPower');
    } // the runtime refuses every stop without it
    // What stop sends: a curtailment of the PV peak power, within maxCurtailment (as the runtime's liftCommand checks it).
    return withinLimits(this, 'pvPeakPower', undefined, { value: amount, unit: 'W' });
  }),
  batteryDevice: device('battery'),
  pvDevice: device('pv'),
  meterDevice: device('meter'),
  verifyEvery: verifyLimit('verifyEvery'),
  tolerance: verifyLimit('tolerance'),
  toleranceMin: verifyLimit('toleranceMin'),
};
export const paletteLabel = E().paletteLabelOf(NODE_TYPE, 'site steer');
export const labelStyle = E().labelStyle;
export function label(this: RedEditorNode): string {
  return (this.name as string) || i18n('paletteLabel') + ' (' + (this.mode || 'ess') + ')';
}
export function inputLabels(): string {
  return i18n('label.inputLabel');
}
export function outputLabels(i: number): string {
  return i === 1 ? i18n('label.outputLabel2') : i18n('label.outputLabel');
}
