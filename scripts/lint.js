#!/usr/bin/env node
// `npm run lint` and `npm run format`: Prettier, ESLint (typescript-eslint, with types) and knip.
// They live in tools/lint/ with a lock of their own: typescript-eslint needs TypeScript's JavaScript
// API (5.x), which TypeScript 7, the project's compiler, no longer has, and npm cannot hold both
// under one root. This script installs that tree on first use (npm ci, from its lock) so a fresh
// clone needs nothing beyond `npm install` at the root.
//   node scripts/lint.js           check formatting, lint, dead code (what npm test runs)
//   node scripts/lint.js --format  write the formatting, then lint
//   node scripts/lint.js --fix     write the formatting and ESLint's safe fixes
//   node scripts/lint.js --enforced  what npm test runs: the formatting of the whole tree, ESLint on
//                                    the folders already brought to zero problems (ENFORCED)
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const tools = path.join(root, 'tools', 'lint');
const bin = (name) => path.join(tools, 'node_modules', '.bin', name);

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status === 0;
}

function installed() {
  const marker = path.join(tools, 'node_modules', '.package-lock.json');
  if (!fs.existsSync(marker)) return false;
  return fs.statSync(marker).mtimeMs >= fs.statSync(path.join(tools, 'package-lock.json')).mtimeMs;
}

if (!installed()) {
  console.log('lint: installing the lint tools into tools/lint/node_modules (npm ci, once)');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  if (!run(npm, ['ci', '--no-audit', '--no-fund'], { cwd: tools })) process.exit(1);
}

// The folders and files ESLint already finds clean; npm test keeps them so. The others (src/client,
// the read side of src/runtime and its budget, the device-read node, nodes/shared's status.ts and
// poll-backoff.ts, test/, bench/) are being brought to zero; `npm run lint` shows what is left there.
const ENFORCED = [
  'src/protocol',
  'src/plan',
  'src/simulator',
  'src/editor',
  'src/runtime/group',
  'src/nodes/config',
  'src/nodes/plan',
  'src/nodes/request',
  'src/nodes/schedule',
  'src/nodes/time-series',
  'src/nodes/site-steer',
  'src/nodes/shared/config-node.ts',
  'src/nodes/shared/evaluate.ts',
  'src/nodes/shared/index.ts',
  'src/nodes/shared/lazy.ts',
  'src/nodes/shared/max-split.ts',
  'src/nodes/shared/messages.ts',
  'src/nodes/shared/migration-step.ts',
  'src/nodes/shared/migrations.ts',
  'src/nodes/shared/node-red-api.ts',
  'src/nodes/shared/renewal.ts',
  'src/nodes/shared/scaffold.ts',
  'src/nodes/shared/steer-command.ts',
  'src/nodes/shared/steer-grid-limits.ts',
  'src/nodes/shared/steer-percent.ts',
  'src/nodes/shared/steer-ratings.ts',
  'src/nodes/shared/steer-settings.ts',
  'src/nodes/shared/steer-verify.ts',
  'src/runtime/builtin-simulator.ts',
  'src/runtime/delivery-check.ts',
  'src/runtime/delivery-clock.ts',
  'src/runtime/delivery-readings.ts',
  'src/runtime/fleet.ts',
  'src/runtime/index.ts',
  'src/runtime/runtime.ts',
  'src/runtime/schedule-player.ts',
  'src/runtime/schedules.ts',
  'src/runtime/shared-clock.ts',
  'src/runtime/steering-queue.ts',
  'src/runtime/steering-types.ts',
  'scripts',
  'tools/lint',
];
const enforced = process.argv.includes('--enforced');
const write = process.argv.includes('--format') || process.argv.includes('--fix');
const steps = [
  ['prettier', [write ? '--write' : '--check', '--log-level', 'warn', '.']],
  [
    'eslint',
    [
      '-c',
      'tools/lint/eslint.config.mjs',
      '--max-warnings',
      '0',
      ...(process.argv.includes('--fix') ? ['--fix'] : []),
      ...(enforced ? ENFORCED : ['.']),
    ],
  ],
];
if (!enforced && fs.existsSync(path.join(root, 'knip.jsonc'))) steps.push(['knip', ['--no-progress']]);

let failed = 0;
for (const [tool, args] of steps) {
  const started = Date.now();
  const ok = run(bin(tool), args);
  console.log(`lint: ${tool} ${ok ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (!ok) failed++;
}
process.exit(failed ? 1 : 0);
