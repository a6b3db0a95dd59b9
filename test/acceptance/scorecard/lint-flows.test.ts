/**
 * `npm run lint:flows` (scripts/lint-flows.js), the command the README gives for linting flows:
 * nrlint over each example (its CLI takes one file) and node-red-dev validate with its catalogue
 * and registry lookups answered from 127.0.0.1, so it runs as written without a network.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exampleFiles, readExample } from '../../helpers/examples';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'lint-flows.js');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

/** Runs the script with every proxy variable pointing nowhere reachable: only its own stand-in answers. */
function lintFlows(...args: string[]) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HTTPS_PROXY: 'http://127.0.0.1:9',
    HTTP_PROXY: 'http://127.0.0.1:9',
    https_proxy: 'http://127.0.0.1:9',
    http_proxy: 'http://127.0.0.1:9',
  };
  const result = spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 150_000 });
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}

describe('npm run lint:flows: nrlint over each example and node-red-dev validate, offline', function () {
  this.timeout(300_000);

  it('is the npm script the README names', () => {
    assert.equal(PKG.scripts['lint:flows'], 'node scripts/lint-flows.js');
    assert.match(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'), /npm run lint:flows/);
  });

  it('lints every example with 0 problems and runs the scorecard to the end with only passed checks: exit 0', () => {
    assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'nodes', 'ems-site-steer.html')), 'dist/ is built');
    const result = lintFlows();
    assert.equal(result.code, 0, result.out);
    for (const f of exampleFiles())
      assert.match(result.out, new RegExp(`nrlint  ok      examples/${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));
    assert.match(
      result.out,
      new RegExp(`nrlint: ${exampleFiles().length} of ${exampleFiles().length} flows with 0 problems`),
    );
    assert.match(result.out, /node-red-dev validate \(offline\): exit 0, \d+ checks passed/);
    assert.match(result.out, /lint:flows: ok$/m);
  });

  it('fails (exit 1) and names the flow and the rule when a flow has a problem', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-lint-flows-test-'));
    try {
      const nodes = readExample(exampleFiles()[0]);
      fs.writeFileSync(
        path.join(dir, 'bad.json'),
        JSON.stringify(
          nodes.map((n) =>
            n.type === 'debug' ? { ...n, type: 'function', name: '', func: 'return msg;', outputs: 1 } : n,
          ),
        ),
      );
      const result = lintFlows(dir);
      assert.equal(result.code, 1, result.out);
      assert.match(result.out, /nrlint {2}FAILED {2}.*bad\.json\n {8}no-unnamed-functions: /);
      assert.match(result.out, /lint:flows: problems found/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
