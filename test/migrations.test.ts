/**
 * Migrations of saved node properties (src/nodes/migrations.ts): each step of each node type,
 * idempotence, no change to values a flow already holds, and a synthetic later version (a
 * rename of site steer's `duration` to a test-only `durationMin`) through the same machinery.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { MIGRATIONS, currentVersion, migrate, upgrade, versionOf, type MigrationTable, type NodeConfig } from '../src/nodes/migrations';

const SAVED: NodeConfig[] = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'flows-0.1.0.json'), 'utf8'));
const saved = (type: string) => SAVED.find((n) => n.type === type)!;

/** What version 2 adds to a 0.1.0 config of each type. */
const V2: Record<string, NodeConfig> = {
  'ems-partner-config': { maxBodyMB: 10, maxValidity: 1440 },
  'ems-device-read': { maxSplit: 1000 },
  'ems-time-series': { maxSplit: 1000 },
  'ems-site-steer': { maxGridPower: '', allowMaximizeGridImport: true, stopAction: 'expire', pvPeakPower: '' },
};

describe('migrations', () => {
  it('every node type of the package has steps up to version 2', () => {
    assert.deepEqual(Object.keys(MIGRATIONS).sort(), Object.keys(V2).sort());
    for (const type of Object.keys(V2)) assert.equal(currentVersion(type), 2, type);
    assert.equal(currentVersion('inject'), 1, 'a type without steps');
  });

  for (const [type, added] of Object.entries(V2)) {
    it(`${type}: 0.1.0 (version 1) to 2 adds the issue-10 properties with their defaults, and nothing else changes`, () => {
      const before = saved(type);
      const frozen = JSON.stringify(before);
      const after = migrate(type, before);
      assert.deepEqual(after, { ...before, ...added, version: 2 });
      assert.equal(JSON.stringify(before), frozen, 'the argument is not changed');
    });

    it(`${type}: a config without a version counts as version 1`, () => {
      const { version: _, ...noVersion } = saved(type);
      assert.equal(versionOf(noVersion), 1);
      assert.deepEqual(migrate(type, noVersion), { ...noVersion, ...added, version: 2 });
    });

    it(`${type}: values a flow already holds stay (saved after issue 10, before version 2)`, () => {
      const held: NodeConfig = {};
      for (const [k, v] of Object.entries(added)) held[k] = typeof v === 'number' ? v + 1 : typeof v === 'boolean' ? !v : k === 'stopAction' ? 'lift' : '5000';
      const after = migrate(type, { ...saved(type), ...held });
      for (const k of Object.keys(added)) assert.deepEqual(after[k], held[k], k);
      assert.equal(after.version, 2);
    });

    it(`${type}: idempotent, and a current or newer config is returned as it is`, () => {
      const once = migrate(type, saved(type));
      assert.deepEqual(migrate(type, once), once);
      assert.equal(migrate(type, once), once, 'no copy when already current');
      const newer = { ...saved(type), version: 7 };
      assert.equal(migrate(type, newer), newer);
    });
  }

  it('null counts as missing; a numeric string version is read as a number', () => {
    assert.equal(migrate('ems-device-read', { type: 'ems-device-read', maxSplit: null, version: 1 }).maxSplit, 1000);
    assert.equal(versionOf({ version: '2' }), 2);
    assert.equal(migrate<NodeConfig>('ems-device-read', { type: 'ems-device-read', version: '2' }).maxSplit, undefined, 'version "2" is current');
    for (const v of [0, -1, 1.5, 'x', '', null, {}]) assert.equal(versionOf({ version: v }), 1, JSON.stringify(v));
  });

  it('a node type the table does not know is returned as it is', () => {
    const n = { type: 'inject', version: 1 };
    assert.equal(migrate('inject', n), n);
  });

  describe('a later version (synthetic v3: site steer `duration` becomes a test-only `durationMin`)', () => {
    const TABLE: MigrationTable = {
      ...MIGRATIONS,
      'ems-site-steer': [
        // Listed out of order on purpose: steps run by version.
        {
          version: 3,
          up: (c) => {
            const { duration, ...rest } = c;
            return { ...rest, durationMin: duration === undefined || duration === '' ? 15 : Number(duration) };
          },
        },
        ...MIGRATIONS['ems-site-steer'],
      ],
    };

    it('a 0.1.0 flow goes through step 2 and then step 3', () => {
      const before = saved('ems-site-steer');
      const after = migrate('ems-site-steer', before, TABLE);
      const { duration, ...rest } = before;
      assert.deepEqual(after, { ...rest, ...V2['ems-site-steer'], durationMin: duration, version: 3 });
      assert.equal('duration' in after, false);
      assert.equal(currentVersion('ems-site-steer', TABLE), 3);
    });

    it('a version 2 config goes through step 3 only; a version 3 config through none', () => {
      const v2 = { type: 'ems-site-steer', duration: '30', stopAction: 'lift', version: 2 };
      const v3 = migrate('ems-site-steer', v2, TABLE);
      assert.deepEqual(v3, { type: 'ems-site-steer', durationMin: 30, stopAction: 'lift', version: 3 });
      assert.equal(migrate('ems-site-steer', v3, TABLE), v3);
    });

    it('upgrade() changes a node object in place: the renamed property goes, each change is reported', () => {
      const node: NodeConfig = { ...saved('ems-site-steer'), duration: 45 };
      Object.defineProperty(node, '_flow', { value: 'hidden', enumerable: false });
      const seen: Array<[string, unknown]> = [];
      const keys = upgrade(node, (k, v) => seen.push([k, v]), TABLE);
      assert.deepEqual(keys.sort(), ['allowMaximizeGridImport', 'duration', 'durationMin', 'maxGridPower', 'pvPeakPower', 'stopAction', 'version']);
      assert.equal(node.durationMin, 45);
      assert.equal('duration' in node, false);
      assert.equal(node.version, 3);
      assert.equal((node as { _flow?: string })._flow, 'hidden', 'properties it does not enumerate stay');
      assert.deepEqual(Object.fromEntries(seen), { duration: undefined, durationMin: 45, maxGridPower: '', allowMaximizeGridImport: true, stopAction: 'expire', pvPeakPower: '', version: 3 });
      assert.deepEqual(upgrade(node, undefined, TABLE), [], 'a second upgrade changes nothing');
    });
  });

  it('src/nodes/migrations.ts imports nothing (the browser runs the same table)', () => {
    const src = fs.readFileSync(path.join(__dirname, '..', 'src', 'nodes', 'migrations.ts'), 'utf8');
    assert.ok(!/^\s*import\s|require\(/m.test(src), 'no import or require');
  });

  it('each panel declares the current version as its default', () => {
    for (const type of Object.keys(V2)) {
      const html = fs.readFileSync(path.join(__dirname, '..', 'nodes', `${type}.html`), 'utf8');
      assert.match(html, new RegExp(`version: \\{ value: ${currentVersion(type)} \\}`), type);
    }
  });
});
