/**
 * Migrations of saved node properties (src/nodes/shared/migrations.ts): each step of each node type,
 * idempotence, no change to values a flow already holds, and a synthetic later version (a
 * rename of site steer's `duration` to a test-only `durationMin`) through the same machinery.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  MIGRATIONS,
  currentVersion,
  migrate,
  upgrade,
  versionOf,
  type MigrationTable,
  type NodeConfig,
} from '../../../src/nodes/shared/migrations';

const SAVED: NodeConfig[] = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'flows-0.1.0.json'), 'utf8'),
);
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

    it(`${type}: values a flow already holds stay (saved by a release before version 2)`, () => {
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
    const nodes = path.join(__dirname, '..', '..', '..', 'src', 'nodes');
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
});
