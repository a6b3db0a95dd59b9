/**
 * What every shipped example must be before any runtime test loads it: a comment that
 * explains it, the built-in simulator as its server, wires and config references that
 * resolve, only core nodes and this package's, no secrets, and a runtime test of its own.
 * Node ids are unique across all examples and the demo flow, so importing one after another
 * (into npm start's Node-RED, where the demo runs) asks to resolve no conflict but the one a shared
 * config node makes: the MQTT broker node of examples 03, 04, 05 and 10, the same in each, kept once.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { exampleFiles, OURS, readExample } from '../../helpers/examples';

/** Ours without a config node: the price plan node is pure (no I/O). */
const NO_SERVER = ['ems-partner-config', 'ems-plan'];
const DASHBOARD = { module: '@flowfuse/node-red-dashboard', examples: /^(09|12) /, version: /^\^?\d+\.\d+\.\d+$/ };
const CORE = [
  'tab',
  'inject',
  'debug',
  'function',
  'change',
  'switch',
  'catch',
  'status',
  'comment',
  'link in',
  'link out',
  'mqtt in',
  'mqtt out',
  'mqtt-broker',
];
/**
 * Node types from the registry an example may use: by type, its module, the examples allowed to,
 * and the devDependency's form: node-red-contrib-influxdb at an exact version; Dashboard 2 as
 * npm start's demo has it (a caret range of a version).
 */
const CONTRIB: Record<string, { module: string; examples: RegExp; version: RegExp }> = {
  'influxdb out': { module: 'node-red-contrib-influxdb', examples: /^02 /, version: /^\d+\.\d+\.\d+$/ },
  influxdb: { module: 'node-red-contrib-influxdb', examples: /^02 /, version: /^\d+\.\d+\.\d+$/ },
  ...Object.fromEntries(
    ['ui-base', 'ui-theme', 'ui-page', 'ui-group', 'ui-chart', 'ui-table', 'ui-text'].map((t) => [t, DASHBOARD]),
  ),
};
const CONFIG_TYPES = ['ems-partner-config', 'mqtt-broker', 'influxdb', 'ui-base', 'ui-theme', 'ui-page', 'ui-group'];
const PKG = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
const DEMO_FILE = path.join(__dirname, '..', '..', '..', 'demo', 'flow.json');

/** Config nodes the examples share: the same id and settings in every example that has one (e3a5c0f1b2d400a1, …). */
const SHARED = /^e3a5c0f1b2d400a\d$/;

describe('examples: node ids', () => {
  it('are unique across all examples and the demo flow, config and broker nodes and tabs included; a shared node is identical wherever it is', () => {
    const owner = new Map<string, string>();
    const shared = new Map<string, string>();
    const clashes: string[] = [];
    const add = (id: string, where: string) => {
      if (owner.has(id)) clashes.push(`${id} in ${owner.get(id)} and ${where}`);
      else owner.set(id, where);
    };
    for (const n of JSON.parse(fs.readFileSync(DEMO_FILE, 'utf8'))) add(n.id, `demo/flow.json (${n.type})`);
    for (const file of exampleFiles()) {
      for (const n of readExample(file)) {
        if (!SHARED.test(n.id)) {
          add(n.id, `${file} (${n.type})`);
          continue;
        }
        const text = JSON.stringify(n);
        if (!shared.has(n.id)) add(n.id, `${file} (${n.type}, shared)`);
        else assert.equal(text, shared.get(n.id), `${file}: the shared ${n.type} ${n.id} as in the other examples`);
        shared.set(n.id, text);
      }
    }
    assert.deepEqual(clashes, []);
    assert.ok(owner.size > 100, `${owner.size} ids`);
  });

  it('are stable and readable: the tab a1a1a1a1a1a100 + the example number, first; its nodes e3a5c0f1b2d4 + the number + 01, 02, …; shared ones e3a5c0f1b2d400a1, …', () => {
    for (const file of exampleFiles()) {
      const nodes = readExample(file);
      assert.deepEqual(
        [nodes[0].type, nodes[0].id],
        ['tab', `a1a1a1a1a1a100${file.slice(0, 2)}`],
        `${file}: its tab first`,
      );
      const own = nodes
        .slice(1)
        .filter((n: any) => !SHARED.test(n.id))
        .map((n: any) => n.id)
        .sort();
      assert.deepEqual(
        own,
        own.map((_: string, i: number) => `e3a5c0f1b2d4${file.slice(0, 2)}${String(i + 1).padStart(2, '0')}`),
        file,
      );
    }
  });
});

describe('examples: as shipped', () => {
  const files = exampleFiles();

  it('has at least the nine examples of the guide, numbered', () => {
    assert.ok(files.length >= 9, `${files.length} examples`);
    for (const f of files) assert.match(f, /^\d\d [A-Z][^/]+\.json$/);
    for (const topic of [
      /^01 .*SOC/,
      /^02 .*[Tt]ime series/,
      /^03 .*Home Assistant/,
      /^04 .*MQTT/,
      /^05 .*[Nn]egative price/,
      /^06 .*[Nn]ight charging/,
      /^07 .*curtailment/,
      /^08 Grid limits/,
      /^09 Price plan/,
      /^10 Home Assistant - steer/,
    ]) {
      assert.ok(
        files.some((f) => topic.test(f)),
        `an example matching ${topic}`,
      );
    }
  });

  for (const file of files) {
    describe(file, () => {
      const nodes = readExample(file);
      const ids = new Map(nodes.map((n: any) => [n.id, n]));

      it('explains itself in a comment node and uses the built-in simulator', () => {
        const comments = nodes.filter((n: any) => n.type === 'comment');
        assert.equal(comments.length, 1);
        assert.ok(comments[0].name.length > 10);
        assert.ok(comments[0].info.split('\n').length >= 3, 'the comment has a description (info)');
        const cfgs = nodes.filter((n: any) => n.type === 'ems-partner-config');
        assert.equal(cfgs.length, 1);
        assert.equal(cfgs[0].simulator, true);
        assert.equal(
          cfgs[0].name,
          `Built-in simulator (example ${file.slice(0, 2)})`,
          'each example has its own config node, named after it',
        );
      });

      it("uses only core nodes and this package's (02 also node-red-contrib-influxdb, a pinned devDependency; 09 Dashboard 2, npm start's), with unique ids, resolvable wires and config references", () => {
        assert.equal(ids.size, nodes.length, 'ids are unique');
        const tabs = new Set(
          nodes.filter((n: any) => n.type !== 'tab' && !CONFIG_TYPES.includes(n.type)).map((n: any) => n.z),
        );
        assert.deepEqual(
          [...tabs],
          nodes.filter((n: any) => n.type === 'tab').map((n: any) => n.id),
          'every flow node on the one tab the file holds',
        );
        for (const n of nodes) {
          const contrib = CONTRIB[n.type];
          if (contrib) {
            assert.match(file, contrib.examples, `${n.type} (${contrib.module}) only where the example is about it`);
            assert.match(
              PKG.devDependencies?.[contrib.module] ?? '',
              contrib.version,
              `${contrib.module} is a devDependency (tests, npm start)`,
            );
          } else {
            assert.ok(
              OURS.includes(n.type) || CORE.includes(n.type),
              `${n.type} is a core node or one of this package's`,
            );
          }
          if (CONFIG_TYPES.includes(n.type)) assert.equal(n.z, undefined, `${n.type} is a global config node`);
          for (const port of n.wires ?? [])
            for (const to of port) assert.ok(ids.has(to), `${n.name || n.id} wires to ${to}`);
          if (OURS.includes(n.type) && !NO_SERVER.includes(n.type))
            assert.equal(ids.get(n.server)?.type, 'ems-partner-config');
          if (n.type === 'ems-plan') assert.equal(n.server, undefined, 'the price plan node has no config node');
          // Dashboard 2: widget -> group -> page -> base and theme, all in the example.
          if (n.type.startsWith('ui-') && !CONFIG_TYPES.includes(n.type))
            assert.equal(ids.get(n.group)?.type, 'ui-group', `${n.type} ${n.label}: its group`);
          if (n.type === 'ui-group') assert.equal(ids.get(n.page)?.type, 'ui-page');
          if (n.type === 'ui-page')
            assert.deepEqual([ids.get(n.ui)?.type, ids.get(n.theme)?.type], ['ui-base', 'ui-theme']);
          if (n.type.startsWith('mqtt ')) assert.equal(ids.get(n.broker)?.type, 'mqtt-broker');
          if (n.type === 'influxdb out') assert.equal(ids.get(n.influxdb)?.type, 'influxdb');
          if (n.type === 'catch' && Array.isArray(n.scope)) for (const s of n.scope) assert.ok(ids.has(s));
        }
      });

      it('carries no secrets', () => {
        const text = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'examples', file), 'utf8');
        assert.doesNotMatch(text, /"credentials"|"apiKey"|"clientSecret"|"password"/);
      });

      it('is loaded and checked by a runtime test', () => {
        const tests = fs
          .readdirSync(__dirname)
          .filter((f) => /\.test\.ts$/.test(f) && f !== path.basename(__filename));
        const named = tests.filter((t) => fs.readFileSync(path.join(__dirname, t), 'utf8').includes(`'${file}'`));
        assert.ok(named.length > 0, `no test loads ${file}`);
      });
    });
  }
});
