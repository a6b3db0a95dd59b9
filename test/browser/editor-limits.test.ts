/**
 * Browser, one table of limits: a flow with every numeric setting at each limit the
 * editor allows, and just outside it, is deployed to a real Node-RED. The runtime refuses
 * exactly the values outside (its log names the field: "<field> <refusal>; got <value>"); the
 * editor, loading the same flow, marks exactly those invalid, and its message is the field's
 * label and the same refusal text, compared as strings. In the edit panels, typing a value just
 * outside marks the field and shows that text; a limit itself does not. Needs `npm run build`.
 */
import * as assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { WORDS, refusal, type Limit, type LimitKey, type Words } from '../../src/protocol/limits';
import { DEFAULT_SITES } from '../../src/simulator';
import { currentVersion } from '../../src/nodes/shared/migrations';
import { CONFIG_KEYS, LIMITS, STEER_POWER_KEYS, atLimits, outside, refusalOf } from '../helpers/limits';
import { useEditor, type Session } from '../helpers/browser';
import { launch, type BrowserSession } from './lib/browser';
import { closeTray, editNode, openEditor, openServerEdit } from './lib/editor';
import { setFlows } from './lib/node-red';
import { catalogue } from './lib/panels';
import { until } from './lib/wait';

const BAT = DEFAULT_SITES[0].battery.deviceReference;
const SITE = DEFAULT_SITES[0].siteReference;
const CONFIG = 'ems-partner-config';

/** One numeric setting of one node type: its table entry, property, label key and the node it sits in. */
interface Case {
  key: LimitKey;
  type: string;
  prop: string;
  node: (v: string) => Record<string, unknown>;
  /** Refused only per message: an inject node sends one at start. */
  perMessage?: boolean;
  /** Its field is hidden where the table applies (pvPeakPower: shown only for a lifting stop, which needs more than 0). */
  hidden?: boolean;
}

const read = (extra: Record<string, unknown>) => ({
  type: 'ems-device-read',
  device: BAT,
  deviceType: 'str',
  mode: 'map',
  properties: 'soc',
  propertiesType: 'str',
  ...extra,
});
const series = (extra: Record<string, unknown>) => ({
  type: 'ems-time-series',
  device: BAT,
  deviceType: 'str',
  property: 'soc',
  propertyType: 'str',
  range: 'last',
  last: 24,
  lastUnit: 'hours',
  resolution: 1,
  output: 'points',
  ...extra,
});
// A node of the current version (one saved before, where 0 meant no limit, is migrated to "none").
const steer = (extra: Record<string, unknown>) => ({
  type: 'ems-site-steer',
  site: SITE,
  siteType: 'str',
  mode: 'ess',
  essValue: 'payload',
  essValueType: 'msg',
  essUnit: 'kW',
  validity: 'quarter-hour',
  dryRun: true,
  version: currentVersion('ems-site-steer'),
  ...extra,
});

const CASES: Case[] = [
  ...CONFIG_KEYS.map((key): Case => ({
    key,
    type: CONFIG,
    prop: key,
    node: (v) => ({ type: CONFIG, simulator: true, [key]: v }),
  })),
  { key: 'maxSplit', type: 'ems-device-read', prop: 'maxSplit', node: (v) => read({ split: true, maxSplit: v }) },
  { key: 'interval', type: 'ems-device-read', prop: 'interval', node: (v) => read({ interval: v }) },
  {
    key: 'resolution',
    type: 'ems-time-series',
    prop: 'resolution',
    node: (v) => series({ resolution: v }),
    perMessage: true,
  },
  { key: 'lastHours', type: 'ems-time-series', prop: 'last', node: (v) => series({ last: v }), perMessage: true },
  {
    key: 'lastDays',
    type: 'ems-time-series',
    prop: 'last',
    node: (v) => series({ last: v, lastUnit: 'days' }),
    perMessage: true,
  },
  {
    key: 'duration',
    type: 'ems-site-steer',
    prop: 'duration',
    node: (v) => steer({ validity: 'duration', duration: v }),
  },
  // In a mode that shows the field (each is checked in every mode, as the runtime does).
  ...STEER_POWER_KEYS.map((key): Case => ({
    key,
    type: 'ems-site-steer',
    prop: key,
    hidden: key === 'pvPeakPower',
    node: (v) =>
      steer({
        [key]: v,
        mode:
          (
            { maxCurtailment: 'curtailment', maxGridPower: 'grid-target', maxGridLimit: 'grid-limits' } as Record<
              string,
              string
            >
          )[key] ?? 'ess',
      }),
  })),
];

const label = (c: Case, lang = 'en-US') => catalogue(c.type, lang).label[c.prop] as string;

/** The words of a refusal in a language: the config node's catalogue entries under "limits", the runtime's English where it has none. */
function wordsOf(lang: string): Words {
  const given = (catalogue(CONFIG, lang).limits ?? {}) as Record<string, any>;
  const words = JSON.parse(JSON.stringify(WORDS)) as Record<string, any>;
  for (const k of Object.keys(words)) {
    if (typeof words[k] === 'string') words[k] = typeof given[k] === 'string' ? given[k] : words[k];
    else
      for (const j of Object.keys(words[k]))
        words[k][j] = typeof given[k]?.[j] === 'string' ? given[k][j] : words[k][j];
  }
  return words as Words;
}
const hasError = (l: Locator) => l.evaluate((e) => e.classList.contains('input-error'));

/** The flow: per case and value a node (config cases: a config node and a device read polling through it), ids `bad-…` and `ok-…`. */
function buildFlow(): {
  flow: object[];
  bad: Array<{ id: string; c: Case; v: string }>;
  ok: Array<{ id: string; c: Case; v: string }>;
} {
  let counter = 0;
  const at = () => ({ z: 'tab', x: 120 + (counter % 6) * 200, y: 40 + Math.floor(counter++ / 6) * 40 });
  const flow: object[] = [
    { id: 'tab', type: 'tab', label: 'limits' },
    { id: 'cfg', type: CONFIG, simulator: true },
  ];
  const bad: Array<{ id: string; c: Case; v: string }> = [];
  const ok: Array<{ id: string; c: Case; v: string }> = [];
  for (const c of CASES) {
    const limit: Limit = LIMITS[c.key];
    for (const [list, prefix, values] of [
      [bad, 'bad', outside(limit)],
      [ok, 'ok', atLimits(limit)],
    ] as const) {
      values.forEach((v, i) => {
        const id = `${prefix}-${c.key}-${i}`;
        list.push({ id, c, v });
        if (c.type === CONFIG) {
          // A config node reports through the nodes that use it: this one polls at start (the ok ones never ask).
          flow.push(
            { id, ...c.node(v) },
            {
              id: `reader-${id}`,
              ...at(),
              ...read({ mode: 'devices', interval: prefix === 'bad' ? 3600 : 0 }),
              server: id,
              wires: [],
            },
          );
        } else {
          flow.push({ id, ...at(), ...c.node(v), server: 'cfg', wires: [] });
          if (c.perMessage && prefix === 'bad')
            flow.push({
              id: `inject-${id}`,
              ...at(),
              type: 'inject',
              once: true,
              onceDelay: 0.1,
              props: [],
              wires: [[id]],
            });
        }
      });
    }
  }
  return { flow, bad, ok };
}

/** The runtime's error lines by node id ("[error] [<type>:<id>] <message>"). */
function runtimeErrors(log: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of log.matchAll(/\[error\] \[[\w-]+:([\w-]+)\] (?:\w*Error: )?(.*)$/gm))
    out.set(m[1], [...(out.get(m[1]) ?? []), m[2].trim()]);
  return out;
}

describe('editor: one table of limits, the same refusal as the runtime', function () {
  this.timeout(180_000);
  let editorSession: Session;
  let page: Page;
  const { flow, bad, ok } = buildFlow();
  let errors: Map<string, string[]>;
  let de: BrowserSession | undefined;

  useEditor(async (session) => {
    editorSession = session;
    page = session.browser.page;
    const from = editorSession.nr.log().length;
    await setFlows(editorSession.nr, flow);
    // The node that reports a case: the reader of a config node, else the node itself.
    const reporter = (id: string, c: Case) => (c.type === CONFIG ? `reader-${id}` : id);
    errors = await until(
      () => runtimeErrors(editorSession.nr.log().slice(from)),
      (e) => bad.every((b) => e.has(reporter(b.id, b.c))),
      'the runtime to refuse every value just outside',
      30_000,
    );
    for (const b of bad) errors.set(b.id, errors.get(reporter(b.id, b.c))!);
    await openEditor(page, editorSession.nr.url);
  });
  after(async function () {
    await de?.close();
    if (editorSession) await setFlows(editorSession.nr, []);
  });

  it("the runtime refuses exactly the values just outside, each with the table's refusal", async () => {
    for (const b of bad) {
      assert.deepEqual(
        errors.get(b.id),
        [`${b.c.prop} ${refusal(LIMITS[b.c.key])}; got ${JSON.stringify(b.v)}`],
        `${b.id} = ${b.v}`,
      );
    }
    const log = runtimeErrors(editorSession.nr.log());
    for (const o of ok) assert.equal(log.get(o.id), undefined, `${o.id} = ${o.v} is accepted`);
  });

  it("the editor marks exactly those nodes invalid, with the label and the runtime's refusal text", async () => {
    const shown = await page.evaluate(
      (ids) =>
        Object.fromEntries(
          ids.map((id) => {
            const node = RED.nodes.node(id);
            return [id, { valid: node.valid, errors: node.validationErrors ?? [] }];
          }),
        ),
      [...bad, ...ok].map((x) => x.id),
    );
    for (const b of bad) {
      const text = refusalOf(errors.get(b.id)![0], b.c.prop);
      assert.ok(text, `${b.id}: the runtime's message names ${b.c.prop}`);
      assert.deepEqual(shown[b.id], { valid: false, errors: [`${label(b.c)}: ${text}`] }, `${b.id} = ${b.v}`);
    }
    for (const o of ok) assert.deepEqual(shown[o.id], { valid: true, errors: [] }, `${o.id} = ${o.v}`);
    assert.deepEqual(editorSession.browser.errors, []);
  });

  /** Types each value into a field of the open panel: marked exactly when outside, and the tooltip shows the runtime's text. */
  async function typeValues(prefix: string, c: Case): Promise<void> {
    const input = page.locator(`#${prefix}-${c.prop}`);
    const limit: Limit = LIMITS[c.key];
    for (const v of [...outside(limit), ...atLimits(limit)]) {
      await input.fill(v);
      await input.press('Tab');
      const refused = outside(limit).includes(v);
      assert.equal(await hasError(input), refused, `${c.key} "${v}" ${refused ? 'is' : 'is not'} marked`);
      if (!refused) continue;
      // The tooltip opens on the mouse entering the field (tried again if the tray was still moving).
      const tip = page.locator('.red-ui-popover:visible').last();
      const expected = `${label(c)}: ${refusalOf(errors.get(`bad-${c.key}-0`)![0], c.prop)}`;
      let shown = '';
      for (let i = 0; i < 3 && shown !== expected; i++) {
        await page.mouse.move(0, 0);
        await input.hover();
        await until(
          async () =>
            (shown = await tip.innerText().then(
              (t) => t.trim(),
              () => '',
            )),
          (t) => t === expected,
          'the tooltip',
          3000,
        ).catch(() => undefined);
      }
      assert.equal(shown, expected, `the tooltip of ${c.key} "${v}"`);
      await page.mouse.move(0, 0);
    }
  }

  it("config panel: typing a value just outside marks the field with the runtime's text; the limits do not", async () => {
    await editNode(page, 'reader-ok-timeout-0');
    await openServerEdit(page);
    for (const c of CASES.filter((x) => x.type === CONFIG)) await typeValues('node-config-input', c);
    await closeTray(page, 'cancel');
    await closeTray(page, 'cancel');
  });

  it('device read, time series and site steer panels: the same for each numeric setting', async () => {
    for (const c of CASES.filter((x) => x.type !== CONFIG && !x.hidden)) {
      await editNode(page, `ok-${c.key}-0`);
      await typeValues('node-input', c);
      await closeTray(page, 'cancel');
    }
    assert.deepEqual(editorSession.browser.errors, []);
  });

  it("in a German browser: the same nodes invalid, the same refusal in the catalogue's words (English where it has none)", async () => {
    de = await launch('de-DE');
    await openEditor(de.page, editorSession.nr.url);
    const shown = await de.page.evaluate(
      (ids) => Object.fromEntries(ids.map((id) => [id, RED.nodes.node(id).validationErrors ?? []])),
      bad.map((b) => b.id),
    );
    const words = wordsOf('de');
    for (const b of bad)
      assert.deepEqual(
        shown[b.id],
        [`${label(b.c, 'de')}: ${refusal(LIMITS[b.c.key], { words })}`],
        `${b.id} = ${b.v}`,
      );
    assert.deepEqual(de.errors, []);
  });
});
