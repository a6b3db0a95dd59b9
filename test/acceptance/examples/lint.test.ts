/**
 * Every shipped example lints with nrlint (1.2.0, the devDependency) and its
 * default rules with 0 problems: `nrlint -c .nrlintrc.js <example>`, where .nrlintrc.js is what
 * `nrlint --init` writes (every rule on). Without its tab node nrlint threw on every example.
 * And every node of this package is saved at its type's current version: the versions and the
 * properties each step adds come from the code (src/nodes/shared/migrations.ts), so a migration added
 * later fails this until the examples are saved again.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MIGRATIONS, currentVersion, migrate, versionOf } from '../../../src/nodes/shared/migrations';
import { EXAMPLES_DIR, exampleFiles, OURS, readExample } from '../../helpers/examples';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..');
const NRLINT = path.join(ROOT, 'node_modules', 'nrlint', 'bin', 'nrlint.js');
const CONFIG = path.join(ROOT, '.nrlintrc.js');

/** nrlint's JSON report of a flow file, and whatever it wrote to stderr. */
async function nrlint(file: string): Promise<{ problems: any[]; stderr: string; stdout: string }> {
  const result = await run(process.execPath, [NRLINT, '-c', CONFIG, '-f', 'json', file], { cwd: ROOT }).catch((e) => e);
  let problems: any[];
  try {
    problems = JSON.parse(String(result.stdout).trim().split('\n').at(-1) ?? '');
  } catch {
    problems = [{ message: `no JSON report: ${result.stdout}` }];
  }
  return { problems, stderr: String(result.stderr), stdout: String(result.stdout) };
}

describe('examples: nrlint', function () {
  this.timeout(120_000);

  it(".nrlintrc.js is nrlint's own default configuration (nrlint --init): every rule on", async () => {
    const { stdout } = await run(process.execPath, [NRLINT, '--init'], { cwd: ROOT });
    const load = (text: string) => {
      const module = { exports: {} as any };
      new Function('module', text)(module);
      return module.exports;
    };
    assert.deepEqual(load(fs.readFileSync(CONFIG, 'utf8')), load(stdout));
    assert.deepEqual(Object.keys(load(stdout).rules).sort(), [
      'align-to-grid',
      'function-eslint',
      'max-flow-size',
      'no-duplicate-http-in-urls',
      'no-loops',
      'no-overlapping-nodes',
      'no-unconnected-http-nodes',
      'no-unnamed-functions',
      'no-unnamed-links',
    ]);
  });

  for (const file of exampleFiles()) {
    it(`${file}: 0 problems, nothing thrown`, async () => {
      const result = await nrlint(path.join(EXAMPLES_DIR, file));
      assert.deepEqual(result.problems, []);
      assert.doesNotMatch(result.stdout + result.stderr, /Error|at Object\./, 'no rule threw');
    });
  }

  it('can fail: an example without its tab makes nrlint throw (as every example did), a bad function is reported', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-nrlint-'));
    try {
      const nodes = readExample(exampleFiles()[0]);
      const noTab = path.join(dir, 'no-tab.json');
      fs.writeFileSync(noTab, JSON.stringify(nodes.filter((n) => n.type !== 'tab')));
      const thrown = await nrlint(noTab);
      assert.match(thrown.stdout + thrown.stderr, /TypeError/);
      const bad = path.join(dir, 'bad.json');
      fs.writeFileSync(
        bad,
        JSON.stringify(
          nodes.map((n) =>
            n.type === 'debug'
              ? { ...n, type: 'function', name: '', func: 'var unused = 1;\nreturn msg;', outputs: 1 }
              : n,
          ),
        ),
      );
      const rules = new Set((await nrlint(bad)).problems.map((p) => p.rule));
      assert.deepEqual([...rules].sort(), ['function-eslint', 'no-unnamed-functions']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('examples: saved at the current version of every node', () => {
  it("the package's types and their current versions, read from the code", () => {
    for (const type of Object.keys(MIGRATIONS)) assert.ok(OURS.includes(type), type);
    assert.deepEqual(
      OURS.map((t) => [t, currentVersion(t)])
        .filter(([, v]) => (v as number) > 1)
        .map(([t]) => t)
        .sort(),
      Object.keys(MIGRATIONS).sort(),
    );
  });

  for (const file of exampleFiles()) {
    it(`${file}: no node of ours below its type's current version, nothing a migration would still add`, () => {
      const ours = readExample(file).filter((n) => OURS.includes(n.type));
      assert.ok(ours.length > 0);
      for (const n of ours) {
        const at = `${n.type} ${n.name || n.id}`;
        assert.ok(
          versionOf(n) >= currentVersion(n.type),
          `${at}: version ${versionOf(n)}, current ${currentVersion(n.type)}`,
        );
        assert.deepEqual(migrate(n.type, n), n, `${at}: a migration still changes it`);
      }
    });
  }

  it('a config node saved before version 3 would keep sending % curtailment as % (the reason to save at the current version); the examples convert, as a new config node does', () => {
    const old: Record<string, unknown> = { type: 'ems-partner-config', simulator: true, version: 1 };
    assert.equal(migrate('ems-partner-config', old).percentCurtailment, 'send');
    for (const file of exampleFiles()) {
      for (const n of readExample(file).filter((x) => x.type === 'ems-partner-config'))
        assert.equal(n.percentCurtailment, 'convert', file);
    }
  });
});
