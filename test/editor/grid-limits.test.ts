/**
 * The site steer panel checks its grid limits with the runtime's rule: the generated
 * resources/site-steer-panel.js (from src/nodes/site-steer/panel.ts) with resources/steer-rules.js
 * (which carries src/protocol/grid-limits.ts) refuses a limit beyond maxGridLimit, a lower limit
 * above the upper one and a limit that is no number as parseGridLimits does, in its words.
 * Needs `npm run build`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { parseGridLimits, type GridLimitSettings } from '../../src/protocol';

const RESOURCES = path.join(__dirname, '..', '..', 'resources');
const NODE_TYPE = 'ems-site-steer';

/** The editor's scripts in one context, as the panels load them; RED and jQuery stubbed (no open form). */
function editor(): any {
  const $: any = () => ({ length: 0 });
  $.extend = (_deep: boolean, _to: object, from: object) => JSON.parse(JSON.stringify(from));
  const ctx: any = {
    $,
    RED: {
      events: {
        on() {
          /* nodes:add */
        },
      },
      nodes: { getType: () => ({ _: (k: string) => k }), node: () => undefined },
      utils: {},
    },
  };
  ctx.window = ctx;
  vm.createContext(ctx);
  for (const f of ['limits.js', 'config-keys.js', 'editor.js', 'steer-rules.js', 'site-steer-panel.js']) {
    vm.runInContext(fs.readFileSync(path.join(RESOURCES, f), 'utf8'), ctx, { filename: f });
  }
  return ctx;
}

/** The runtime's refusal, as the panel shows it: its label first, without the field's name and "; nothing was sent". */
function refused(label: string, field: string, fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    const message = (e as Error).message.replace(/; nothing was sent$/, '');
    return `${NODE_TYPE}.label.${label}: ${message.startsWith(`${field} `) ? message.slice(field.length + 1) : message}`;
  }
  throw new Error('the runtime accepts it');
}

describe("editor: the site steer panel's grid limits are the runtime's rule (protocol/grid-limits.ts)", () => {
  const Panel = editor().EmsPartnerSiteSteerPanel;
  const node = (extra: Record<string, unknown>) => ({
    mode: 'grid-limits',
    upperLimitValueType: 'num',
    upperLimitUnit: 'kW',
    lowerLimitValueType: 'num',
    lowerLimitUnit: 'kW',
    maxGridLimit: '',
    ...extra,
  });
  const check = (prop: string, n: Record<string, unknown>) => Panel.validate[prop].call(n, n[prop], {});
  const FIELDS = { upper: 'upperLimit', lower: 'lowerLimit' };
  const settings = (o: Partial<GridLimitSettings> = {}): GridLimitSettings => ({
    upperLimitUnit: 'kW',
    lowerLimitUnit: 'kW',
    maxGridLimit: 0,
    ...o,
  });

  it('steer-rules.js carries parseGridLimits; the panel keeps no grid-limit wording of its own', () => {
    assert.equal(typeof editor().EmsPartnerSteerRules.parseGridLimits, 'function');
    assert.doesNotMatch(
      fs.readFileSync(path.join(RESOURCES, 'site-steer-panel.js'), 'utf8'),
      /errors\.(maxGridLimit|limitOrder|gridLimit)\b/,
    );
  });

  it('accepts what the runtime accepts: within maxGridLimit, lower not above upper, empty or from msg not checked', () => {
    for (const n of [
      node({ upperLimitValue: '5', lowerLimitValue: '-5', maxGridLimit: '5000' }),
      node({ upperLimitValue: '5', lowerLimitValue: '5' }),
      node({ upperLimitValue: '', lowerLimitValue: '' }),
      node({
        upperLimitValue: '0.005',
        upperLimitUnit: 'MW',
        lowerLimitValue: '-5000',
        lowerLimitUnit: 'W',
        maxGridLimit: '5000',
      }),
      node({ upperLimitValue: 'payload.u', upperLimitValueType: 'msg', lowerLimitValue: '7' }),
      node({ mode: 'ess', upperLimitValue: 'x', lowerLimitValue: '9', maxGridLimit: '1' }),
    ]) {
      assert.equal(check('upperLimitValue', n), true, JSON.stringify(n));
      assert.equal(check('lowerLimitValue', n), true, JSON.stringify(n));
    }
  });

  it("beyond maxGridLimit (either sign, any unit): the runtime's refusal", () => {
    const steerNode = node({
      upperLimitValue: '6',
      lowerLimitValue: '-0.006',
      lowerLimitUnit: 'MW',
      maxGridLimit: '5000',
    });
    assert.equal(
      check('upperLimitValue', steerNode),
      refused('upperLimit', 'upperLimit', () =>
        parseGridLimits(settings({ maxGridLimit: 5000 }), '6', undefined, FIELDS),
      ),
    );
    assert.match(
      check('upperLimitValue', steerNode),
      /^ems-site-steer\.label\.upperLimit: must be within the node's limit maxGridLimit = 5000 W \(either sign\); got 6 kW$/,
    );
    assert.equal(
      check('lowerLimitValue', steerNode),
      refused('lowerLimit', 'lowerLimit', () =>
        parseGridLimits(settings({ maxGridLimit: 5000, lowerLimitUnit: 'MW' }), undefined, '-0.006', FIELDS),
      ),
    );
  });

  it("a lower limit above the upper one (in W, across units): the runtime's refusal, on the lower limit only", () => {
    const steerNode = node({ upperLimitValue: '1', lowerLimitValue: '1001', lowerLimitUnit: 'W' });
    assert.equal(check('upperLimitValue', steerNode), true);
    assert.equal(
      check('lowerLimitValue', steerNode),
      refused('lowerLimit', 'lowerLimit', () =>
        parseGridLimits(settings({ lowerLimitUnit: 'W' }), '1', '1001', FIELDS),
      ),
    );
    assert.match(check('lowerLimitValue', steerNode), /must not be above upperLimit \(1 kW\); got 1001 W$/);
    // An upper limit the runtime refuses is its own validator's concern: the lower one is then checked alone.
    const bad = node({ upperLimitValue: 'abc', lowerLimitValue: '3' });
    assert.equal(check('lowerLimitValue', bad), true);
    assert.equal(
      check('upperLimitValue', bad),
      refused('upperLimit', 'upperLimit', () => parseGridLimits(settings(), 'abc', undefined, FIELDS)),
    );
  });
});
