#!/usr/bin/env node
/**
 * Regenerates the README's screenshots (docs/images/*.png): builds the package, then runs the
 * browser suite (test/browser/) with EMS_SCREENSHOTS=1, which makes each checked step save its
 * picture into docs/images/ instead of .test-tmp/. A normal `npm test` never touches docs/.
 *
 *   node scripts/screenshots.js [extra mocha arguments, e.g. -g 'palette']
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const images = path.join(root, 'docs', 'images');

function run(cmd, args, env) {
  const result = spawnSync(cmd, args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...env },
    shell: process.platform === 'win32',
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run('npm', ['run', 'build']);
const started = Date.now();
const mocha = require.resolve('mocha/bin/mocha.js', { paths: [root] });
// --no-config: .mocharc.json's spec would add every other suite to the run.
run(
  process.execPath,
  [
    mocha,
    '--no-config',
    '--require',
    'tsx/cjs',
    '--extension',
    'ts',
    '--timeout',
    '30000',
    '--exit',
    'test/browser/**/*.test.ts',
    ...process.argv.slice(2),
  ],
  { EMS_SCREENSHOTS: '1' },
);

const pngs = fs.existsSync(images)
  ? fs
      .readdirSync(images)
      .filter((f) => f.endsWith('.png'))
      .sort()
  : [];
const fresh = pngs.filter((f) => fs.statSync(path.join(images, f)).mtimeMs >= started);
const stale = pngs.filter((f) => !fresh.includes(f));
console.log(`\nscreenshots: ${fresh.length} written to ${path.relative(root, images)}/`);
for (const f of fresh) console.log(`  ${f}`);
if (stale.length) console.log(`not produced by this run (left as they are): ${stale.join(', ')}`);
