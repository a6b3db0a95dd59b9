#!/usr/bin/env node
/**
 * `npm run lint:flows [-- <dir>]`: the two checks the Node-RED Flows library applies, run offline.
 *
 *  1. nrlint (devDependency) with its default rules (.nrlintrc.js, what `nrlint --init` writes)
 *     over every flow in examples/ (or <dir>), one file at a time: the nrlint CLI takes a single file.
 *  2. `node-red-dev validate` (the scorecard tool, devDependency) on a copy of what `npm pack`
 *     packs. The tool looks up the Flows catalogue and the npm registry and stops when it cannot
 *     reach them; test/helpers/scorecard-offline.ts answers those lookups from 127.0.0.1 (an
 *     empty catalogue, the locked packuments), so this runs without a network.
 *
 * Exits 0 when nrlint reports nothing and the scorecard tool printed only passed checks; else 1,
 * with what was found. Builds dist/ first when it is missing (the scorecard reads the build).
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const NRLINT = path.join(root, 'node_modules', 'nrlint', 'bin', 'nrlint.js');
const CONFIG = path.join(root, '.nrlintrc.js');
/** The flows to lint: examples/, or the directory given as the first argument. */
const EXAMPLES = path.resolve(process.argv[2] || path.join(root, 'examples'));
const shown = (f) => path.relative(root, path.join(EXAMPLES, f));

function lintExamples() {
  const files = fs
    .readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.json'))
    .sort();
  let failed = 0;
  for (const f of files) {
    const result = spawnSync(process.execPath, [NRLINT, '-c', CONFIG, '-f', 'json', path.join(EXAMPLES, f)], {
      cwd: root,
      encoding: 'utf8',
    });
    let problems;
    try {
      problems = JSON.parse(String(result.stdout).trim().split('\n').at(-1) ?? '');
    } catch {
      problems = undefined;
    }
    if (
      result.status === 0 &&
      Array.isArray(problems) &&
      problems.length === 0 &&
      !/Error|at Object\./.test(result.stdout + result.stderr)
    ) {
      console.log(`nrlint  ok      ${shown(f)}`);
      continue;
    }
    failed++;
    console.log(`nrlint  FAILED  ${shown(f)}`);
    if (Array.isArray(problems))
      for (const p of problems)
        console.log(
          `        ${p.rule ?? '?'}: ${p.message ?? JSON.stringify(p)}${p.nodes ? ` (nodes ${p.nodes.join(', ')})` : ''}`,
        );
    else console.log(`        exit ${result.status}\n${result.stdout}${result.stderr}`);
  }
  console.log(`nrlint: ${files.length - failed} of ${files.length} flows with 0 problems`);
  return files.length > 0 && failed === 0;
}

async function scorecard() {
  if (!fs.existsSync(path.join(root, 'dist', 'nodes', 'ems-partner-config.js'))) {
    console.log('lint:flows: dist/ is missing, building once (npm run build)...');
    const build = spawnSync('npm', ['run', 'build'], {
      cwd: root,
      stdio: 'inherit',
      shell: process.platform === 'win32',
    });
    if (build.status !== 0) throw new Error('the build failed');
  }
  // The offline stand-in is TypeScript, shared with the test suite: loaded through tsx (devDependency).
  const { require: tsxRequire } = require('tsx/cjs/api');
  const { findings, packedCopy, serveOffline, validate } = tsxRequire(
    '../test/helpers/scorecard-offline.ts',
    __filename,
  );
  const served = await serveOffline();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-lint-flows-'));
  try {
    await packedCopy(root, dir);
    const validation = await validate(dir, served);
    const found = findings(validation);
    const ok =
      validation.code === 0 &&
      /^Complete$/m.test(validation.stdout) &&
      found.length === 0 &&
      served.unexpected.length === 0;
    console.log(
      `node-red-dev validate (offline): exit ${validation.code}, ${validation.stdout.split(/\r?\n/).filter((l) => l.startsWith('✅ ')).length} checks passed`,
    );
    if (!ok) {
      for (const l of found) console.log(`        ${l}`);
      for (const u of served.unexpected)
        console.log(`        looked up something the offline stand-in cannot answer: ${u}`);
      if (validation.code !== 0) console.log(`${validation.stdout}${validation.stderr}`);
    }
    return ok;
  } finally {
    await served.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

(async () => {
  const linted = lintExamples();
  const scored = await scorecard();
  console.log(linted && scored ? 'lint:flows: ok' : 'lint:flows: problems found (above)');
  process.exitCode = linted && scored ? 0 : 1;
})().catch((e) => {
  console.error(`lint:flows: ${e && e.stack ? e.stack : e}`);
  process.exitCode = 1;
});
