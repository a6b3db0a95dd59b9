/**
 * Status texts in the runtime's language (src/nodes/shared/status.ts): the `status.*` keys of the
 * locale catalogs, en-US and de in step; a Node-RED started with `lang: 'de'` shows German
 * status texts (read, time series, site steer sent and dry run, a node without server), one started with
 * `lang: 'en-US'` the texts of today. The Node-RED tests need the build (dist/nodes).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describeCommand } from '../../../src/nodes/shared/renewal';
import { english, translator, type Params } from '../../../src/nodes/shared/status';
import { startSimulator, type StartedSimulator } from '../../../src/simulator';
import { REPO, makeUserDir } from '../../browser/lib/node-red';
import { start, type Spawned } from '../../helpers/spawned';
import { nodeRedDir } from '../../helpers/node-red-path';
import { localeFile } from '../../helpers/node-files';

const TYPES = [
  'ems-partner-config',
  'ems-device-read',
  'ems-time-series',
  'ems-site-steer',
  'ems-request',
  'ems-schedule',
  'ems-plan',
];
const catalog = (lang: string, type: string) =>
  JSON.parse(fs.readFileSync(localeFile(lang, type, 'json'), 'utf8'))[type];
const placeholders = (text: string) => (text.match(/__\w+__/g) ?? []).sort();

describe('status texts: catalogs', () => {
  for (const type of TYPES) {
    it(`${type}: en-US and de have the same status keys, with the same placeholders`, () => {
      const en = catalog('en-US', type).status;
      const de = catalog('de', type).status;
      assert.ok(en && Object.keys(en).length > 0, 'en-US has status texts');
      assert.deepEqual(Object.keys(de).sort(), Object.keys(en).sort());
      for (const k of Object.keys(en)) assert.deepEqual(placeholders(de[k]), placeholders(en[k]), k);
    });
  }

  it('every status key the nodes use exists (a missing key would show as its name)', () => {
    const src = [
      'device-read/index',
      'time-series/index',
      'time-series/controller',
      'site-steer/index',
      'request/index',
      'request/controller',
      'schedule/index',
      'schedule/controller',
      'plan/index',
      'plan/controller',
      'schedule/describe',
      'schedule/verify',
      'shared/renewal',
      'shared/status',
    ]
      .map((f) => fs.readFileSync(path.join(REPO, 'src', 'nodes', `${f}.ts`), 'utf8'))
      .join('\n');
    const used = new Set([...src.matchAll(/\b(?:t|shared)\('(\w+)'/g)].map((m) => m[1]));
    for (const k of ['renewStopped', 'maxImportOn', 'maxImportOff', 'badAnswer', 'tooLarge', 'timedOut']) used.add(k); // chosen by expressions
    const known = new Set(TYPES.flatMap((type) => Object.keys(catalog('en-US', type).status ?? {})));
    for (const k of used) assert.ok(known.has(k), `status key ${k}`);
  });

  it('a Node-RED catalog lookup gives the German texts; an unknown or missing lookup falls back to en-US', () => {
    const de = catalog('de', 'ems-site-steer').status;
    // What RED._ does for a node module: the key in the node's namespace, __name__ placeholders filled
    // (i18next leaves a placeholder it has no value for as it is).
    const RED = {
      _: (key: string, p?: Params) => {
        const suffix = key.replace(/^ems-site-steer\.status\./, '');
        return de[suffix]
          ? de[suffix].replace(/__(\w+)__/g, (m: string, n: string) => (p?.[n] !== undefined ? String(p[n]) : m))
          : `@ems-partner/node-red/ems-site-steer:${key}`;
      },
    };
    const translate = translator(RED, 'ems-site-steer');
    const cmd = {
      site: 's',
      kind: 'combined' as const,
      energyStorageSetting: { value: -5, unit: 'kW' as const },
      maximizeGridImport: true,
      validUntil: Date.UTC(2026, 0, 1, 12, 15),
    };
    const clock = new Date(cmd.validUntil).toTimeString().slice(0, 5);
    assert.equal(
      translate('dryRun', { what: describeCommand(cmd, false, translate) }),
      'Probelauf: Speicher −5 kW, max. Netzbezug an',
    );
    assert.equal(
      translate('sent', { what: describeCommand(cmd, true, translate) }),
      `gesendet: Speicher −5 kW, max. Netzbezug an bis ${clock}`,
    );
    assert.equal(describeCommand(cmd, true), `ESS −5 kW, max import on until ${clock}`, 'en-US by default, as today');
    // The test helper's RED._ returns the key: en-US.
    assert.equal(translator({ _: (k: string) => k }, 'ems-site-steer')('stopped'), 'stopped');
    assert.equal(english('ems-time-series')('points', { property: 'soc', count: 4 }), 'soc: 4 points');
  });
});

describe('status texts in a Node-RED started with a language', function () {
  this.timeout(90_000);
  const SITE = 'ste_lepVqjIyPshx';
  const DEVICE = 'dvc_aIcgt4KDesKb';
  let sim: StartedSimulator;
  const running: Array<{ red: Spawned; dir: string }> = [];

  before(async function () {
    if (!fs.existsSync(path.join(REPO, 'dist', 'nodes', 'ems-site-steer.js')))
      assert.fail('dist/ is built (run `npm run build` first; npm test does)');
    sim = await startSimulator({ port: 0 });
  });

  after(async () => {
    for (const { red, dir } of running) {
      await red.stop('SIGTERM', 10_000);
      fs.rmSync(dir, { recursive: true, force: true });
    }
    await sim?.close();
  });

  /** The flow: reads, a time series, a steer and a dry run fired once at start; every status logged as JSON. */
  function flows(): object[] {
    const tab = 'tab1';
    const at = (y: number) => ({ z: tab, x: 200, y });
    const once = (id: string, target: string, payload?: number) => ({
      id,
      type: 'inject',
      ...at(20),
      once: true,
      onceDelay: 0.2,
      repeat: '',
      topic: '',
      props: payload === undefined ? [] : [{ p: 'payload', v: String(payload), vt: 'num' }],
      wires: [[target]],
    });
    const steer = {
      type: 'ems-site-steer',
      site: SITE,
      siteType: 'str',
      mode: 'ess',
      essValue: 'payload',
      essValueType: 'msg',
      essUnit: 'kW',
      validity: 'quarter-hour',
      duration: 15,
      maxEssPower: 0,
      maxCurtailment: 0,
      renew: false,
      version: 1,
    };
    return [
      { id: tab, type: 'tab', label: 'status' },
      // First, so they exist when the nodes below show their first status (in their constructors).
      { id: 'st', type: 'status', ...at(140), scope: null, wires: [['log']] },
      {
        id: 'log',
        type: 'function',
        ...at(160),
        name: 'status',
        func: 'node.warn(JSON.stringify({ id: msg.status.source.id, text: msg.status.text })); return null;',
        outputs: 1,
        wires: [[]],
      },
      {
        id: 'cfg',
        type: 'ems-partner-config',
        baseUrl: sim.url,
        simulator: false,
        authType: 'none',
        retries: 0,
        version: 1,
      },
      once('i1', 'read'),
      { id: 'read', type: 'ems-device-read', ...at(40), server: 'cfg', mode: 'devices', version: 1, wires: [[]] },
      once('i2', 'series'),
      {
        id: 'series',
        type: 'ems-time-series',
        ...at(60),
        server: 'cfg',
        device: DEVICE,
        deviceType: 'str',
        property: 'soc',
        propertyType: 'str',
        range: 'last',
        last: 3,
        lastUnit: 'hours',
        resolution: 1,
        output: 'points',
        version: 1,
        wires: [[]],
      },
      once('i3', 'dry', -5),
      { id: 'dry', ...steer, ...at(80), server: 'cfg', dryRun: true, wires: [[]] },
      once('i4', 'steer', -5),
      { id: 'steer', ...steer, ...at(100), server: 'cfg', dryRun: false, wires: [[]] },
      once('i5', 'orphan'),
      {
        id: 'orphan',
        type: 'ems-device-read',
        ...at(120),
        server: '',
        mode: 'map',
        device: DEVICE,
        properties: 'soc',
        version: 1,
        wires: [[]],
      },
    ];
  }

  /** Starts Node-RED with `lang` and runs the flow; resolves once each node showed each of its `want` texts. */
  async function statusesIn(lang: string, want: Record<string, RegExp[]>): Promise<void> {
    const dir = makeUserDir('status-i18n-');
    fs.writeFileSync(
      path.join(dir, 'settings.js'),
      `module.exports = { uiHost: '127.0.0.1', flowFile: 'flows.json', credentialSecret: 'test', lang: ${JSON.stringify(lang)}, telemetry: { enabled: false }, editorTheme: { tours: false } };\n`,
    );
    fs.writeFileSync(path.join(dir, 'flows.json'), JSON.stringify(flows()));
    const red = start(
      process.execPath,
      [path.join(nodeRedDir, 'red.js'), '-p', '0', '-u', dir, '-s', path.join(dir, 'settings.js')],
      { cwd: dir, env: { ...process.env } },
    );
    running.push({ red, dir });
    // Each status is one log line of the function node: {"id":"<node>","text":"<text>"}. (Node-RED's own
    // log lines are in its language too, so none of them is awaited.)
    for (const [id, texts] of Object.entries(want)) {
      for (const re of texts)
        await red.waitFor(
          new RegExp(`\\[function:status\\] \\{"id":"${id}","text":"${re.source.replace(/^\^|\$$/g, '')}"\\}$`, 'm'),
          60_000,
        );
    }
  }

  const clock = '\\d\\d:\\d\\d';
  function expectTexts(lang: string, want: Record<string, RegExp[]>) {
    it(`${lang}: read, time series, site steer (dry run, sent) and a node without server show their ${lang} texts`, async () => {
      await statusesIn(lang, want);
    });
  }

  expectTexts('de', {
    read: [/^fragt ab$/, new RegExp(`^\\d+ Geräte · ${clock}$`)],
    series: [new RegExp(`^soc: \\d+ Punkte · ${clock}$`)],
    dry: [/^Probelauf: Speicher −5 kW$/],
    steer: [/^sende Speicher −5 kW$/, new RegExp(`^gesendet: Speicher −5 kW bis ${clock}$`)],
    orphan: [/^ungültig: server$/],
  });

  expectTexts('en-US', {
    read: [/^requesting$/, new RegExp(`^\\d+ devices · ${clock}$`)],
    series: [new RegExp(`^soc: \\d+ points · ${clock}$`)],
    dry: [/^dry run: ESS −5 kW$/],
    steer: [/^sending ESS −5 kW$/, new RegExp(`^sent ESS −5 kW until ${clock}$`)],
    orphan: [/^bad server$/],
  });
});
