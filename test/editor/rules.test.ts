/**
 * The editor checks with the runtime's own rules: the generated scripts of
 * resources/ (steer-rules.js from src/protocol/steer-rules.ts, config-keys.js from
 * src/nodes/config/config-keys.ts), run with the panels' code (editor.js, site-steer-panel.js)
 * in a plain context, give the site steer panel the runtime's site list, rows per mode and power
 * limits, with the runtime's words, and the config panel the admin routes' list of settings.
 * Needs `npm run build`. In a real editor: test/browser/editor-fleet.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { MODE_COMPONENTS, STEER_MODES, panelRows, parseSiteList, portfolioSplitOf } from '../../src/protocol';
import { buildCommand, liftCommand, settingsOf } from '../../src/nodes/shared/steer-command';
import { parseBody } from '../../src/nodes/config/admin-guard';
import { CONFIG_KEYS, CONNECTION_KEYS, OTHER_KEYS, SECRET_KEYS } from '../../src/nodes/config/config-keys';
import { LIMITS, WORDS, accepts, refusal } from '../../src/protocol/limits';
import { atLimits, outside } from '../helpers/limits';

const RESOURCES = path.join(__dirname, '..', '..', 'resources');
const read = (f: string) => fs.readFileSync(path.join(RESOURCES, f), 'utf8');
const NODE_TYPE = 'ems-site-steer';

/** The editor's scripts in one context, as the config node's and the site steer node's panels load them; RED and jQuery stubbed. */
function editor(nodes: Record<string, unknown> = {}): any {
  const $: any = () => ({ length: 0 }); // no open form: validators read the node's saved values
  $.extend = (_deep: boolean, _to: object, from: object) => JSON.parse(JSON.stringify(from));
  const ctx: any = {
    $,
    // A catalogue that answers with the key: a label reads as its key.
    RED: {
      events: {
        on() {
          /* nodes:add */
        },
      },
      nodes: { getType: () => ({ _: (k: string) => k }), node: (id: string) => nodes[id] },
      utils: {},
    },
  };
  ctx.window = ctx;
  vm.createContext(ctx);
  for (const f of ['limits.js', 'config-keys.js', 'editor.js', 'steer-rules.js', 'site-steer-panel.js'])
    vm.runInContext(read(f), ctx, { filename: f });
  return ctx;
}

/** The runtime's refusal of `fn`, as the editor shows it: without the component's name `field` and "; nothing was sent". */
function runtimeWords(fn: () => unknown, field?: string): string {
  try {
    fn();
  } catch (e) {
    const message = (e as Error).message.replace(/; nothing was sent$/, '');
    return field && message.startsWith(`${field} `) ? message.slice(field.length + 1) : message;
  }
  throw new Error('the runtime accepts it');
}

describe("editor: the runtime's rules, generated into resources/", () => {
  const ctx = editor();
  const Panel = ctx.EmsPartnerSiteSteerPanel;
  const check = (prop: string, node: Record<string, unknown>, v: unknown) => Panel.validate[prop].call(node, v, {});
  const label = (key: string) => `${NODE_TYPE}.label.${key}`;

  it('steer-rules.js and config-keys.js say they are generated, from protocol modules and the config keys only', () => {
    const head = read('steer-rules.js').split('\n')[0];
    assert.match(
      head,
      /^\/\/ Built by scripts\/copy-editor\.js from (dist\/protocol\/[\w-]+\.js, )*dist\/protocol\/steer-rules\.js \(do not edit\)/,
    );
    assert.match(
      read('config-keys.js').split('\n')[0],
      /^\/\/ Built by scripts\/copy-editor\.js from dist\/nodes\/config\/config-keys\.js \(do not edit\)/,
    );
    const src = fs.readFileSync(path.join(__dirname, '..', '..', 'src', 'nodes', 'config', 'config-keys.ts'), 'utf8');
    assert.doesNotMatch(src, /^\s*import\s|require\(/m, 'config-keys.ts imports nothing');
    for (const f of ['site-steer-panel.js', 'editor.js']) {
      assert.doesNotMatch(
        read(f),
        /\[A-Za-z0-9\]\[A-Za-z0-9_\.:-\]|\|\| 5000|WATTS|var ROWS|CONFIG_KEYS = \[/,
        `${f}: no copy of a runtime rule`,
      );
    }
  });

  it('the rows of each mode are the components the runtime sends in it (MODE_COMPONENTS), with stop action and split', () => {
    // (JSON: arrays of the script's context are of another realm)
    assert.deepEqual(
      JSON.parse(
        JSON.stringify(Object.fromEntries(STEER_MODES.map((m) => [m, ctx.EmsPartnerSteerRules.panelRows(m)]))),
      ),
      {
        combined: ['ess', 'curtailment', 'maximizeGridImport', 'stopAction'],
        ess: ['ess'],
        curtailment: ['curtailment', 'stopAction'],
        'grid-target': ['gridTarget', 'deadband'],
        'grid-limits': ['upperLimit', 'lowerLimit'],
        portfolio: ['ess', 'portfolioSplit'],
      },
    );
    assert.deepEqual(panelRows('unknown'), ['ess'], 'an unknown mode shows the rows of mode ess');
    assert.deepEqual(
      JSON.parse(JSON.stringify(ctx.EmsPartnerSteerRules.panelRows('unknown'))),
      ['ess'],
      'in the editor too',
    );
    for (const m of STEER_MODES) {
      assert.deepEqual(
        panelRows(m).filter((r) => !['stopAction', 'portfolioSplit'].includes(r)),
        MODE_COMPONENTS[m].map((c) => (c === 'energyStorage' ? 'ess' : c)),
        m,
      );
    }
    // A value of a row the mode hides is not checked (the runtime does not send it).
    assert.equal(
      check('essValue', { mode: 'grid-target', essValueType: 'num', essUnit: 'kW', maxEssPower: 1 }, '1e9'),
      true,
    );
    assert.equal(
      check(
        'gridTargetValue',
        { mode: 'ess', gridTargetValueType: 'num', gridTargetUnit: 'kW', maxGridPower: 1 },
        '1e9',
      ),
      true,
    );
  });

  it('the site list: accepted and refused as parseSiteList does, with its words', () => {
    const many = Array.from({ length: 5001 }, (_, i) => `ste_${i}`).join(',');
    for (const v of [
      '',
      'ste_a, ste_b',
      'ste_a\nste_b; ste_c',
      '[{"site": "ste_a", "maxPowerW": "5000", "soc": "40"}, "ste_c"]',
      undefined,
    ]) {
      assert.equal(check('sites', { mode: 'ess' }, v), true, String(v));
      assert.doesNotThrow(() => parseSiteList(v, 'sites'));
    }
    for (const v of [
      'ste_a, ste_b, ste_a',
      '[{"site": "ste_a"},',
      '[]',
      ' , ; ',
      'ste_a, b@d',
      '[{"site": "ste_a", "power": 1}]',
      '[{"site": "ste_a", "soc": 101}]',
      many,
      5,
    ]) {
      assert.equal(
        check('sites', { mode: 'ess' }, v),
        `${label('sites')}: ${runtimeWords(() => parseSiteList(v, 'sites'), 'sites')}`,
        String(v).slice(0, 40),
      );
    }
    assert.match(
      check('sites', {}, 'ste_a ste_a'),
      /^ems-site-steer\.label\.sites: sites\[1\] repeats site ste_a \(also sites\[0\]\); list each site once$/,
    );
  });

  it('the portfolio split: as portfolioSplitOf', () => {
    for (const v of ['rating', 'soc', '', undefined]) assert.equal(check('portfolioSplit', {}, v), true);
    assert.equal(
      check('portfolioSplit', {}, 'even'),
      `${label('portfolioSplit')}: ${runtimeWords(() => portfolioSplitOf('even'), 'portfolioSplit')}`,
    );
  });

  it("a value beyond the node's power limit: refused as the runtime refuses the message, in its words", () => {
    const cases: Array<
      [prop: string, row: string, node: Record<string, unknown>, v: string, runtime: () => unknown, field: string]
    > = [
      [
        'essValue',
        'ess',
        { mode: 'ess', essValueType: 'num', essUnit: 'kW', maxEssPower: 5000 },
        '-6',
        () => buildCommand(settingsOf({ mode: 'ess', essUnit: 'kW', maxEssPower: 5000 }), 'ste_a', -6, {}),
        'energyStorage',
      ],
      [
        'essValue',
        'ess',
        { mode: 'portfolio', essValueType: 'num', essUnit: 'MW', maxEssPower: 5000 },
        '0.006',
        () =>
          buildCommand(settingsOf({ mode: 'portfolio', essUnit: 'MW', maxEssPower: 5000 }), 'ste_a', undefined, {
            ess: 0.006,
          }),
        'energyStorage',
      ],
      [
        'curtailmentValue',
        'curtailment',
        { mode: 'curtailment', curtailmentValueType: 'num', curtailmentUnit: 'W', maxCurtailment: 5000 },
        '5001',
        () =>
          buildCommand(
            settingsOf({ mode: 'curtailment', curtailmentUnit: 'W', maxCurtailment: 5000 }),
            'ste_a',
            5001,
            {},
          ),
        'curtailment',
      ],
      [
        'gridTargetValue',
        'gridTarget',
        { mode: 'grid-target', gridTargetValueType: 'num', gridTargetUnit: 'kW', maxGridPower: 5000 },
        '-6',
        () =>
          buildCommand(settingsOf({ mode: 'grid-target', gridTargetUnit: 'kW', maxGridPower: 5000 }), 'ste_a', -6, {}),
        'gridTarget',
      ],
      [
        'deadbandValue',
        'deadband',
        { mode: 'grid-target', deadbandUnit: 'kW', maxGridPower: 5000 },
        '6',
        () =>
          buildCommand(
            settingsOf({ mode: 'grid-target', gridTargetUnit: 'kW', deadbandUnit: 'kW', maxGridPower: 5000 }),
            'ste_a',
            { gridTarget: 1, deadband: 6 },
            {},
          ),
        'deadband',
      ],
      // What stop sends with "lift": a curtailment of the PV peak power, within maxCurtailment.
      [
        'pvPeakPower',
        'pvPeakPower',
        { mode: 'curtailment', stopAction: 'lift', maxCurtailment: 5000 },
        '6000',
        () =>
          liftCommand(
            settingsOf({ mode: 'curtailment', stopAction: 'lift', pvPeakPower: 6000, maxCurtailment: 5000 }),
            'ste_a',
            undefined,
          ),
        'pvPeakPower',
      ],
    ];
    for (const [prop, row, node, v, runtime, field] of cases) {
      const words = runtimeWords(runtime, field);
      assert.match(words, /within the node's limit max\w+ = 5000 W/, `${prop}: ${words}`);
      assert.equal(check(prop, node, v), `${label(row)}: ${words}`, `${prop} ${v}`);
      // Within the limit, or no limit: accepted.
      assert.equal(
        check(prop, { ...node, maxEssPower: 0, maxCurtailment: 0, maxGridPower: 0 }, v),
        true,
        `${prop} without a limit`,
      );
    }
    assert.equal(check('essValue', { mode: 'ess', essValueType: 'num', essUnit: 'kW', maxEssPower: 5000 }, '5'), true);
  });

  it('the config keys: the editor sends the connection settings, the admin routes take those and the others, one list', () => {
    assert.deepEqual([...CONFIG_KEYS], [...CONNECTION_KEYS, ...OTHER_KEYS]);
    assert.equal(new Set(CONFIG_KEYS).size, CONFIG_KEYS.length, 'no key twice');
    assert.deepEqual(JSON.parse(JSON.stringify(ctx.EmsPartnerConfigKeys)), {
      CONNECTION_KEYS,
      OTHER_KEYS,
      CONFIG_KEYS,
      SECRET_KEYS,
    });
    // The editor's request: the connection settings of the config node, and the secrets typed in this session.
    const every = Object.fromEntries([...CONFIG_KEYS, 'extra'].map((k) => [k, k === 'timeout' ? '5000' : `v-${k}`]));
    const ed = editor({ cfg: { ...every, credentials: { apiKey: 'typed', clientSecret: '__PWRD__' } } });
    const sent = ed.EmsPartnerEditor.configOf('cfg');
    assert.deepEqual(Object.keys(sent).sort(), [...CONNECTION_KEYS, 'apiKey'].sort());
    assert.equal(sent.timeout, 5000);
    // The routes: every key of the list, nothing else.
    const body = parseBody({ server: 'cfg', config: { ...every, apiKey: 'k' } });
    assert.deepEqual(Object.keys(body.config!.props).sort(), [...CONFIG_KEYS].sort());
    assert.deepEqual(body.config!.typed, { apiKey: 'k' });
  });
});

/**
 * One table of limits (src/protocol/limits.ts): a config node, and each node, set
 * to each limit the editor allows deploys and works; a value just outside is refused by the
 * runtime with "<field> <the table's refusal>; got <value>" (the editor shows the same refusal
 * after the field's label: test/browser/editor-limits.test.ts). The table the editor loads
 * (resources/limits.js, made by `npm run build`) is the runtime's.
 */
describe('one table of limits: the runtime', () => {
  it("the editor's table (resources/limits.js, built) is the runtime's: same entries, same refusals", () => {
    const file = path.join(__dirname, '..', '..', 'resources', 'limits.js');
    assert.ok(fs.existsSync(file), 'resources/limits.js is built (npm run build)');
    const window: Record<string, any> = {};
    vm.runInNewContext(fs.readFileSync(file, 'utf8'), { window });
    const limits = window.EmsPartnerLimits;
    assert.deepEqual(JSON.parse(JSON.stringify(limits.LIMITS)), JSON.parse(JSON.stringify(LIMITS)));
    assert.deepEqual(JSON.parse(JSON.stringify(limits.WORDS)), JSON.parse(JSON.stringify(WORDS)));
    for (const [key, l] of Object.entries(LIMITS)) {
      assert.equal(limits.refusal(l), refusal(l), key);
      for (const v of [...atLimits(l), ...outside(l)])
        assert.equal(limits.accepts(l, Number(v)), accepts(l, Number(v)), `${key} ${v}`);
    }
  });
});
