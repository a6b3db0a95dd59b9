/**
 * Migrations of saved node properties (src/nodes/shared/migrations.ts): each step of each node type,
 * idempotence, no change to values a flow already holds, and a synthetic later version (a
 * rename of site steer's `duration` to a test-only `durationMin`) through the same machinery.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { MIGRATIONS, currentVersion, migrate } from '../../src/nodes/shared/migrations';
import { panelFile } from '../helpers/node-files';

describe('migrations', () => {
  describe("the editor takes each node's version from the one table (resources/migrations.js)", () => {
    const ROOT = path.join(__dirname, '..', '..');
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
