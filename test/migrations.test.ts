/**
 * Migrations of saved node properties (src/nodes/shared/migrations.ts): each step of each node type,
 * idempotence, no change to values a flow already holds, and a synthetic later version (a
 * rename of site steer's `duration` to a test-only `durationMin`) through the same machinery.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import {
  MIGRATIONS,
  currentVersion,
  migrate,
  upgrade,
  versionOf,
  type MigrationTable,
  type NodeConfig,
} from '../src/nodes/shared/migrations';
import { panelFile } from './helpers/node-files';

const SAVED: NodeConfig[] = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'flows-0.1.0.json'), 'utf8'));
const saved = (type: string) => SAVED.find((n) => n.type === type)!;

/** What version 2 adds to a 0.1.0 config of each type. */
const V2: Record<string, NodeConfig> = {
  'ems-partner-config': { maxBodyMB: 10, maxValidity: 1440 },
  'ems-device-read': { maxSplit: 1000 },
  'ems-time-series': { maxSplit: 1000 },
  'ems-site-steer': { maxGridPower: '', allowMaximizeGridImport: true, stopAction: 'expire', pvPeakPower: '' },
};

/** What version 3 adds: paths and the % curtailment choice (a saved config kept sending %), grid limits. */
const V3: Record<string, NodeConfig> = {
  'ems-partner-config': {
    pathDevices: '',
    pathSites: '',
    pathCurtailment: '',
    pathGridLimits: '',
    percentCurtailment: 'send',
  },
  'ems-site-steer': {
    upperLimitValue: '',
    upperLimitValueType: 'num',
    upperLimitUnit: 'kW',
    lowerLimitValue: '',
    lowerLimitValueType: 'num',
    lowerLimitUnit: 'kW',
    maxGridLimit: '',
  },
};

/** What version 4 adds to site steer: the delivery check. */
const V4: Record<string, NodeConfig> = {
  'ems-site-steer': {
    verify: false,
    batteryDevice: '',
    batteryDeviceType: 'str',
    pvDevice: '',
    pvDeviceType: 'str',
    meterDevice: '',
    meterDeviceType: 'str',
    verifyEvery: 0,
    tolerance: 10,
    toleranceMin: 1000,
  },
};

/** What version 4 (config node) and 5 (site steer) add: the request budget, fleets. */
const V4B: Record<string, NodeConfig> = {
  'ems-partner-config': { maxPerMinute: 0, maxPerDay: 0, budgetMode: 'refuse' },
};
const V5: Record<string, NodeConfig> = {
  'ems-site-steer': { sites: '', portfolioSplit: 'rating' },
};
/** What version 5 of the config node adds: the most messages a node holds at once (every node gets the default bound). */
const V5B: Record<string, NodeConfig> = {
  'ems-partner-config': { maxWaiting: 10_000 },
};

/**
 * What version 6 does. Site steer: power limits are on by default (an empty one is the site's
 * rating), so each limit a saved flow had off (not set, empty or 0) becomes "none" and stays off.
 * The config node: the group's Redis, none (every instance alone, as before).
 */
const OFF = { maxEssPower: 'none', maxCurtailment: 'none', maxGridPower: 'none', maxGridLimit: 'none' };
const V6: Record<string, NodeConfig> = { 'ems-site-steer': OFF, 'ems-partner-config': { redisUrl: '' } };

/** Every property added or kept off since 0.1.0, and the version a type is at now. */
const ADDED: Record<string, NodeConfig> = Object.fromEntries(
  Object.entries(V2).map(([t, a]) => [t, { ...a, ...V3[t], ...V4[t], ...V4B[t], ...V5[t], ...V5B[t], ...V6[t] }]),
);
const CURRENT = (type: string) =>
  V6[type] ? 6 : V5[type] || V5B[type] ? 5 : V4[type] || V4B[type] ? 4 : V3[type] ? 3 : 2;

/**
 * ems-plan came after 0.1.0 (version 1; example 09 shipped it without a version);
 * version 2 adds the site model's settings, empty (the planner's defaults), and
 * re-planning, off: a node saved before plans as it did. Version 3 adds `idle`, 'steer' for a
 * saved node (every slot steered, as before; a new node's default is 'self-consumption').
 */
const PLAN_V1: NodeConfig = {
  id: 'p1',
  type: 'ems-plan',
  z: 'tab',
  name: 'Home battery plan',
  capacityKWh: 20,
  maxChargeKW: 10,
  maxDischargeKW: 10,
  socMin: 10,
  socMax: 90,
  efficiency: 0.9,
  socEnd: '',
  priceUnit: 'EUR/MWh',
  steps: '',
  x: 100,
  y: 100,
  wires: [[]],
};
const PLAN_V2: NodeConfig = {
  chargeEfficiency: '',
  dischargeEfficiency: '',
  cycleCost: '',
  endValue: '',
  socTarget: '',
  socTargetTime: '',
  importMultiplier: '',
  importFee: '',
  importVat: '',
  exportMultiplier: '',
  exportFee: '',
  exportVat: '',
  importLimitKW: '',
  exportLimitKW: '',
  peakCost: '',
  replan: false,
};
const PLAN_V3: NodeConfig = { idle: 'steer' };
const PLAN_V4: NodeConfig = { gridCharge: true, gridDischarge: true, sellSocMin: '' };
/** A re-planning node as the release before version 3 saved it (example 12 of that release). */
const PLAN_SAVED_V2: NodeConfig = {
  ...PLAN_V1,
  ...PLAN_V2,
  cycleCost: 0.02,
  endValue: 0.1,
  importFee: 0.15,
  importVat: 1.19,
  exportMultiplier: 0,
  exportFee: 0.08,
  importLimitKW: 17,
  exportLimitKW: 7,
  replan: true,
  version: 2,
};

describe('migrations', () => {
  it('every node type of the package has its steps (2 for all, 3 for the config node and site steer)', () => {
    assert.deepEqual(
      Object.keys(MIGRATIONS).sort(),
      [...Object.keys(V2), 'ems-request', 'ems-plan', 'ems-schedule'].sort(),
    );
    assert.equal(currentVersion('ems-plan'), 4);
    assert.equal(currentVersion('ems-schedule'), 2);
    for (const type of Object.keys(V2)) assert.equal(currentVersion(type), CURRENT(type), type);
    assert.equal(currentVersion('inject'), 1, 'a type without steps');
  });

  for (const [type, added] of Object.entries(ADDED)) {
    it(`${type}: 0.1.0 (version 1) to current adds the properties of each step with their defaults, and nothing else changes`, () => {
      const before = saved(type);
      const frozen = JSON.stringify(before);
      const after = migrate(type, before);
      assert.deepEqual(after, { ...before, ...added, version: CURRENT(type) });
      assert.equal(JSON.stringify(before), frozen, 'the argument is not changed');
    });

    it(`${type}: a config without a version counts as version 1`, () => {
      const { version: _, ...noVersion } = saved(type);
      assert.equal(versionOf(noVersion), 1);
      assert.deepEqual(migrate(type, noVersion), { ...noVersion, ...added, version: CURRENT(type) });
    });

    it(`${type}: values a flow already holds stay (saved after issue 10, before version 2)`, () => {
      const held: NodeConfig = {};
      for (const [k, v] of Object.entries(added))
        held[k] =
          typeof v === 'number'
            ? v + 1
            : typeof v === 'boolean'
              ? !v
              : k === 'stopAction'
                ? 'lift'
                : k === 'percentCurtailment'
                  ? 'convert'
                  : '5000';
      const after = migrate(type, { ...saved(type), ...held });
      for (const k of Object.keys(added)) assert.deepEqual(after[k], held[k], k);
      assert.equal(after.version, CURRENT(type));
    });

    if (V3[type]) {
      it(`${type}: a version 2 config goes through the steps after 2 only`, () => {
        const v2 = { type, version: 2, name: 'x' };
        assert.deepEqual(migrate(type, v2), {
          ...v2,
          ...V3[type],
          ...V4[type],
          ...V4B[type],
          ...V5[type],
          ...V5B[type],
          ...V6[type],
          version: CURRENT(type),
        });
      });
    }

    it(`${type}: idempotent, and a current or newer config is returned as it is`, () => {
      const once = migrate(type, saved(type));
      assert.deepEqual(migrate(type, once), once);
      assert.equal(migrate(type, once), once, 'no copy when already current');
      const newer = { ...saved(type), version: 7 };
      assert.equal(migrate(type, newer), newer);
    });
  }

  describe('power limits on by default: site steer 5 to 6, schedule 1 to 2', () => {
    /** A schedule node as the previous release saved it (example 06 of that release: no version). */
    const SCHEDULE_V1: NodeConfig = {
      id: 's1',
      type: 'ems-schedule',
      z: 'tab',
      server: 'cfg',
      site: 'ste_ACjBqtN3Se3P',
      siteType: 'str',
      essUnit: 'kW',
      curtailmentUnit: 'kW',
      gridUnit: 'kW',
      maxEssPower: 10000,
      maxCurtailment: 0,
      maxGridPower: '',
      maxGridLimit: '',
      allowMaximizeGridImport: true,
      pvPeakPower: '',
      store: '',
      dryRun: false,
      x: 1,
      y: 1,
      wires: [[], []],
    };

    it('a limit that was off (not set, empty, 0 or "0") becomes "none"; a limit set keeps its value; nothing else changes', () => {
      assert.deepEqual(migrate('ems-schedule', SCHEDULE_V1), {
        ...SCHEDULE_V1,
        maxCurtailment: 'none',
        maxGridPower: 'none',
        maxGridLimit: 'none',
        version: 2,
      });
      const { maxGridLimit: _, ...without } = SCHEDULE_V1;
      assert.equal(migrate('ems-schedule', without).maxGridLimit, 'none');
      const v5 = {
        type: 'ems-site-steer',
        version: 5,
        mode: 'ess',
        maxEssPower: '0',
        maxCurtailment: ' ',
        maxGridPower: 20000,
        maxGridLimit: '15000',
      };
      assert.deepEqual(migrate('ems-site-steer', v5), {
        ...v5,
        maxEssPower: 'none',
        maxCurtailment: 'none',
        version: 6,
      });
    });

    it("a node of the current version (a new one: empty limits, the site's rating) is not changed", () => {
      const fresh = {
        type: 'ems-site-steer',
        version: 6,
        maxEssPower: '',
        maxCurtailment: '',
        maxGridPower: '',
        maxGridLimit: '',
      };
      assert.equal(migrate('ems-site-steer', fresh), fresh);
      const schedule = { ...SCHEDULE_V1, maxEssPower: '', maxCurtailment: '', version: 2 };
      assert.equal(migrate('ems-schedule', schedule), schedule);
    });
  });

  describe('ems-plan (after 0.1.0): version 1 to 4', () => {
    it('a node saved without a version (as example 09 shipped it) gets the new settings empty, re-planning off and every slot steered, nothing else changes', () => {
      const frozen = JSON.stringify(PLAN_V1);
      assert.deepEqual(migrate('ems-plan', PLAN_V1), { ...PLAN_V1, ...PLAN_V2, ...PLAN_V3, ...PLAN_V4, version: 4 });
      assert.equal(JSON.stringify(PLAN_V1), frozen, 'the argument is not changed');
      assert.deepEqual(migrate('ems-plan', { ...PLAN_V1, version: 1 }), {
        ...PLAN_V1,
        ...PLAN_V2,
        ...PLAN_V3,
        ...PLAN_V4,
        version: 4,
      });
    });

    it('values a flow already holds stay; idempotent; a current config is returned as it is', () => {
      const held = { ...PLAN_V1, importFee: '0.15', replan: true, exportLimitKW: 7, idle: 'self-consumption' };
      const after = migrate('ems-plan', held);
      assert.deepEqual(
        [after.importFee, after.replan, after.exportLimitKW, after.idle, (after as NodeConfig).version],
        ['0.15', true, 7, 'self-consumption', 4],
      );
      assert.equal(migrate('ems-plan', after), after);
      const node: NodeConfig = { ...PLAN_V1 };
      assert.deepEqual(
        upgrade(node).sort(),
        [...Object.keys(PLAN_V2), 'idle', 'gridCharge', 'gridDischarge', 'sellSocMin', 'version'].sort(),
      );
      assert.deepEqual(upgrade(node), []);
    });

    it('a re-planning node saved by version 2 goes to 4 with idle "steer" and grid charge and discharge on: it plans and steers every slot as it did', () => {
      const frozen = JSON.stringify(PLAN_SAVED_V2);
      assert.deepEqual(migrate('ems-plan', PLAN_SAVED_V2), { ...PLAN_SAVED_V2, idle: 'steer', ...PLAN_V4, version: 4 });
      assert.equal(JSON.stringify(PLAN_SAVED_V2), frozen, 'the argument is not changed');
      const node: NodeConfig = { ...PLAN_SAVED_V2 };
      assert.deepEqual(upgrade(node).sort(), ['gridCharge', 'gridDischarge', 'idle', 'sellSocMin', 'version']);
      assert.deepEqual([node.idle, node.gridCharge, node.gridDischarge, node.version], ['steer', true, true, 4]);
    });

    it('a node saved by the previous release (version 3) goes to 4 with grid charge and discharge on and no least SOC before selling only', () => {
      const saved: NodeConfig = { ...PLAN_SAVED_V2, idle: 'self-consumption', version: 3 };
      assert.deepEqual(migrate('ems-plan', saved), { ...saved, ...PLAN_V4, version: 4 });
      const node: NodeConfig = { ...saved };
      assert.deepEqual(upgrade(node).sort(), ['gridCharge', 'gridDischarge', 'sellSocMin', 'version']);
    });
  });

  it('null counts as missing; a numeric string version is read as a number', () => {
    assert.equal(migrate('ems-device-read', { type: 'ems-device-read', maxSplit: null, version: 1 }).maxSplit, 1000);
    assert.equal(versionOf({ version: '2' }), 2);
    assert.equal(
      migrate<NodeConfig>('ems-device-read', { type: 'ems-device-read', version: '2' }).maxSplit,
      undefined,
      'version "2" is current',
    );
    for (const v of [0, -1, 1.5, 'x', '', null, {}]) assert.equal(versionOf({ version: v }), 1, JSON.stringify(v));
  });

  it('a node type the table does not know is returned as it is', () => {
    const inject = { type: 'inject', version: 1 };
    assert.equal(migrate('inject', inject), inject);
  });

  describe('a later version (synthetic v7: site steer `duration` becomes a test-only `durationMin`)', () => {
    const TABLE: MigrationTable = {
      ...MIGRATIONS,
      'ems-site-steer': [
        // Listed out of order on purpose: steps run by version.
        {
          version: 7,
          up: (c) => {
            const { duration, ...rest } = c;
            return { ...rest, durationMin: duration === undefined || duration === '' ? 15 : Number(duration) };
          },
        },
        ...MIGRATIONS['ems-site-steer'],
      ],
    };

    it('a 0.1.0 flow goes through steps 2, 3, 4, 5, 6 and then 7', () => {
      const before = saved('ems-site-steer');
      const after = migrate('ems-site-steer', before, TABLE);
      const { duration, ...rest } = before;
      assert.deepEqual(after, { ...rest, ...ADDED['ems-site-steer'], durationMin: duration, version: 7 });
      assert.equal('duration' in after, false);
      assert.equal(currentVersion('ems-site-steer', TABLE), 7);
    });

    it('a version 6 config goes through step 7 only; a version 7 config through none', () => {
      const v6 = { type: 'ems-site-steer', duration: '30', stopAction: 'lift', version: 6 };
      const v7 = migrate('ems-site-steer', v6, TABLE);
      assert.deepEqual(v7, { type: 'ems-site-steer', durationMin: 30, stopAction: 'lift', version: 7 });
      assert.equal(migrate('ems-site-steer', v7, TABLE), v7);
    });

    it('upgrade() changes a node object in place: the renamed property goes, each change is reported', () => {
      const node: NodeConfig = { ...saved('ems-site-steer'), duration: 45 };
      Object.defineProperty(node, '_flow', { value: 'hidden', enumerable: false });
      const seen: Array<[string, unknown]> = [];
      const keys = upgrade(node, (k, v) => seen.push([k, v]), TABLE);
      assert.deepEqual(
        keys.sort(),
        ['duration', 'durationMin', ...Object.keys(ADDED['ems-site-steer']), 'version'].sort(),
      );
      assert.equal(node.durationMin, 45);
      assert.equal('duration' in node, false);
      assert.equal(node.version, 7);
      assert.equal((node as { _flow?: string })._flow, 'hidden', 'properties it does not enumerate stay');
      assert.deepEqual(Object.fromEntries(seen), {
        duration: undefined,
        durationMin: 45,
        ...ADDED['ems-site-steer'],
        version: 7,
      });
      assert.deepEqual(upgrade(node, undefined, TABLE), [], 'a second upgrade changes nothing');
    });
  });

  it("src/nodes/shared/migrations.ts imports only the nodes' steps and the leaf migration-step.ts, which imports nothing (the browser runs the same table)", () => {
    const nodes = path.join(__dirname, '..', 'src', 'nodes');
    const read = (...p: string[]) => fs.readFileSync(path.join(nodes, ...p), 'utf8');
    const specs = (src: string) =>
      [...src.matchAll(/^\s*(?:import|export)\b[^;]*?from\s*'([^']+)'/gm)].map((m) => m[1]);
    assert.ok(!/require\(/.test(read('shared', 'migrations.ts')), 'no require');
    const steps = specs(read('shared', 'migrations.ts')).filter((s) => s !== './migration-step');
    assert.deepEqual(
      steps.filter((s) => !/^\.\.\/[a-z-]+\/migrations$/.test(s)),
      [],
      'only ../<node>/migrations',
    );
    assert.equal(steps.length, Object.keys(MIGRATIONS).length);
    for (const spec of steps) {
      const src = read(`${spec.slice(3)}.ts`);
      assert.ok(!/require\(/.test(src), `${spec}: no require`);
      assert.deepEqual(specs(src), ['../shared/migration-step'], `${spec} imports only ../shared/migration-step`);
    }
    assert.ok(
      !/^\s*import\s|require\(/m.test(read('shared', 'migration-step.ts')),
      'migration-step.ts: no import or require',
    );
  });

  describe("the editor takes each node's version from the one table (resources/migrations.js)", () => {
    const ROOT = path.join(__dirname, '..');
    const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const NODES = Object.keys(PKG['node-red'].nodes as Record<string, string>);
    const html = (type: string) => fs.readFileSync(panelFile(type), 'utf8');
    /** The editor's scripts of a panel (type="text/javascript", as Node-RED and the scorecard read them). */
    const inline = (text: string) =>
      [...text.matchAll(/<script type="text\/javascript">([\S\s]*?)<\/script>/g)].map((m) => m[1]);
    /** A stand-in for everything a panel's definition may touch at registration besides the table (jQuery, the shared editor code). */
    function stub(): unknown {
      const proxy: unknown = new Proxy(
        function () {
          /* stub */
        },
        { get: (_t, k) => (k === Symbol.toPrimitive ? () => '' : proxy), apply: () => proxy },
      );
      return proxy;
    }
    /** Runs resources/migrations.js, then a panel's scripts, as the editor does; the `defaults` each registers. */
    function registered(type: string): Record<string, { value: unknown }> {
      const defs: Record<string, { defaults: Record<string, { value: unknown }> }> = {};
      const ctx: Record<string, unknown> = {
        $: stub(),
        RED: {
          nodes: {
            registerType: (t: string, d: never) => {
              defs[t] = d;
            },
          },
          events: stub(),
          settings: {},
          _: stub(),
        },
      };
      ctx.window = new Proxy(ctx, { get: (t, k) => (k in t ? t[k as string] : stub()) });
      vm.createContext(ctx);
      vm.runInContext(fs.readFileSync(path.join(ROOT, 'resources', 'migrations.js'), 'utf8'), ctx);
      for (const code of inline(html(type))) vm.runInContext(code, ctx);
      assert.ok(defs[type], `${type} registers its type`);
      return defs[type].defaults;
    }

    it("the generated resources/migrations.js says it is generated and gives the runtime's current version of every type", () => {
      const code = fs.readFileSync(path.join(ROOT, 'resources', 'migrations.js'), 'utf8');
      assert.match(
        code.split('\n')[0],
        /^\/\/ Built by scripts\/copy-editor\.js from (dist\/nodes\/[a-z-]+\/migrations?(-step)?\.js, )*dist\/nodes\/shared\/migrations\.js \(do not edit\)/,
      );
      const ctx: { window: { EmsPartnerMigrations?: { currentVersion(t: string): number } } } = { window: {} };
      vm.runInNewContext(code, ctx);
      for (const type of NODES)
        assert.equal(ctx.window.EmsPartnerMigrations!.currentVersion(type), currentVersion(type), type);
    });

    it("no panel writes a version number: each with upgrade steps defaults to the table's current version", () => {
      for (const type of NODES) {
        // A panel whose definition takes parts from a script of resources/ (site steer): that script too.
        let text = html(type);
        for (const m of text.matchAll(/<script src="resources\/@ems-partner\/node-red\/([\w-]+-panel\.js)">/g))
          text += fs.readFileSync(path.join(ROOT, 'resources', m[1]), 'utf8');
        assert.doesNotMatch(text, /version\s*:\s*\{\s*value\s*:\s*['"]?\d/, `${type}: no version literal`);
        const defaults = registered(type);
        if (MIGRATIONS[type]) {
          assert.match(
            text,
            /version: \{ value: window\.EmsPartnerMigrations\.currentVersion\((T|'[\w-]+')\) \}/,
            type,
          );
          assert.equal(defaults.version?.value, currentVersion(type), `${type}: the registered default`);
        } else {
          assert.equal(
            defaults.version,
            undefined,
            `${type}: no steps, no version (a config without one is version 1)`,
          );
        }
      }
    });

    it("a new site steer or schedule node starts with its power limits on: each empty (the site's rating), at the current version", () => {
      for (const type of ['ems-site-steer', 'ems-schedule']) {
        const defaults = registered(type);
        for (const k of ['maxEssPower', 'maxCurtailment', 'maxGridPower', 'maxGridLimit'])
          assert.equal(defaults[k]?.value, '', `${type} ${k}`);
        // Added as it is, no step runs on it: its limits stay empty (a step would turn them into "none").
        const fresh = { type, ...Object.fromEntries(Object.entries(defaults).map(([k, d]) => [k, d.value])) };
        assert.equal(migrate(type, fresh), fresh, type);
      }
    });

    it('the table is loaded before any panel registers: a <script src> of the config node, the node set Node-RED loads first', () => {
      // Node-RED loads the node sets in package.json's order, each set's <script src> files before its inline scripts.
      assert.equal(NODES[0], 'ems-partner-config');
      assert.match(
        html('ems-partner-config'),
        /<script src="resources\/@ems-partner\/node-red\/migrations\.js"><\/script>/,
      );
      const before = html('ems-partner-config').split('<script type="text/javascript">')[0];
      assert.ok(before.includes('migrations.js'), "before the config node's own definition");
    });
  });
});
