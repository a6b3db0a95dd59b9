#!/usr/bin/env node
// `npm run lint` and `npm run format`: Prettier, ESLint (typescript-eslint, with types) and knip.
// They live in tools/lint/ with a lock of their own: typescript-eslint needs TypeScript's JavaScript
// API (5.x), which TypeScript 7, the project's compiler, no longer has, and npm cannot hold both
// under one root. This script installs that tree on first use (npm ci, from its lock) so a fresh
// clone needs nothing beyond `npm install` at the root.
//   node scripts/lint.js             check formatting, lint the whole tree, dead code (knip)
//   node scripts/lint.js --format    write the formatting, then lint
//   node scripts/lint.js --fix       write the formatting and ESLint's safe fixes
//   npm test runs the first form: the whole tree is at zero problems, and knip finds nothing unused
// Each tool's own report comes first; the last lines are one summary per tool.
'use strict';
const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { stripVTControlCharacters } = require('util');

const root = path.resolve(__dirname, '..');
const tools = path.join(root, 'tools', 'lint');
const bin = (name) => path.join(tools, 'node_modules', '.bin', name);

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status === 0;
}

/**
 * Whether tools/lint/node_modules holds what tools/lint/package-lock.json locks: each package that is not
 * optional, at its version. Read from the packages, not from file times: a fresh checkout gives the lock a
 * newer time than a tree installed from that very lock.
 */
function installed() {
  const lock = JSON.parse(fs.readFileSync(path.join(tools, 'package-lock.json'), 'utf8'));
  return Object.entries(lock.packages).every(([where, locked]) => {
    if (where === '' || locked.optional) return true;
    try {
      return JSON.parse(fs.readFileSync(path.join(tools, where, 'package.json'), 'utf8')).version === locked.version;
    } catch {
      return false;
    }
  });
}

if (!installed()) {
  const modules = path.join(tools, 'node_modules');
  // npm ci empties node_modules first, through a link too: a tree shared by other checkouts would be emptied under them
  if (fs.lstatSync(modules, { throwIfNoEntry: false })?.isSymbolicLink()) {
    console.error(
      `lint: tools/lint/node_modules links to ${fs.readlinkSync(modules)}, which does not match tools/lint/package-lock.json; ` +
        'run `npm ci` in the checkout that owns it, or replace the link with a directory of its own',
    );
    process.exit(1);
  }
  console.log('lint: installing the lint tools into tools/lint/node_modules (npm ci, once)');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  if (!run(npm, ['ci', '--no-audit', '--no-fund'], { cwd: tools })) process.exit(1);
}

const fix = process.argv.includes('--fix');
const write = process.argv.includes('--format') || fix;
// The whole tree: npm test runs the same checks as npm run lint.
const withKnip = true;
const eslintTargets = ['.'];

/** Each tool: its arguments, and its report read as counts for the summary (undefined: a failure without counts). */
const steps = [
  {
    tool: 'prettier',
    // --cache: a file unchanged since its last check (content and options, in node_modules/.cache/prettier) is
    // not formatted again; a fresh clone has no cache and checks every file
    args: [write ? '--write' : '--check', '--cache', '--log-level', 'warn', '.'],
    // --check warns once per file it would change, then once more with the total
    summary: (report, ok) => {
      if (write) return ok ? 'formatting written' : undefined;
      const files = report.split('\n').filter((line) => /^\[warn\] (?!Code style issues)/.test(line)).length;
      if (files > 0) return `${files} file(s) not formatted (npm run format)`;
      return ok ? 'every file formatted' : undefined;
    },
  },
  {
    tool: 'eslint',
    args: ['-c', 'tools/lint/eslint.config.mjs', '--max-warnings', '0', ...(fix ? ['--fix'] : []), ...eslintTargets],
    // the stylish report names each file on a line of its own, then "✖ N problems (E errors, W warnings)"
    summary: (report, ok) => {
      const total = /✖ (\d+) problems? \((\d+) errors?, (\d+) warnings?\)/.exec(report);
      if (!total) return ok ? '0 problems' : undefined;
      const files = report.split('\n').filter((line) => /^(\/|[A-Za-z]:\\)/.test(line)).length;
      return `${total[1]} problems (${total[2]} errors, ${total[3]} warnings) in ${files} file(s)`;
    },
  },
];
if (withKnip && fs.existsSync(path.join(root, 'knip.jsonc')))
  steps.push({
    tool: 'knip',
    // a configuration hint (an entry that matches no file, say) fails too: knip would quietly check less
    args: ['--no-progress', '--treat-config-hints-as-errors'],
    // knip heads each kind of finding with "Kind (N)"
    summary: (report, ok) => {
      const kinds = [...report.matchAll(/^([A-Z][A-Za-z ]+) \((\d+)\)\s*$/gm)];
      if (kinds.length === 0) return ok ? 'no unused files, exports or dependencies' : undefined;
      return kinds.map((kind) => `${kind[2]} ${kind[1].toLowerCase()}`).join(', ');
    },
  });

/** Runs a tool, its output shown as it comes and kept (colour codes removed) for the summary. */
function runTool(tool, args) {
  return new Promise((resolve, reject) => {
    // the tools colour their report for a terminal; they would not through a pipe without FORCE_COLOR
    const env = process.stdout.isTTY ? { ...process.env, FORCE_COLOR: '1' } : process.env;
    const child = spawn(bin(tool), args, { cwd: root, env, stdio: ['inherit', 'pipe', 'pipe'] });
    let report = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      report += chunk;
    });
    child.stderr.on('data', (chunk) => {
      process.stderr.write(chunk);
      report += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ ok: code === 0, report: stripVTControlCharacters(report) }));
  });
}

async function main() {
  const lines = [];
  for (const { tool, args, summary } of steps) {
    const started = Date.now();
    const { ok, report } = await runTool(tool, args);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const counted = summary(report, ok) ?? 'see its report above';
    lines.push({ ok, line: `lint: ${tool.padEnd(8)} ${ok ? 'passed' : 'FAILED'}  ${counted} (${seconds} s)` });
  }
  console.log('');
  for (const { line } of lines) console.log(line);
  return lines.every(({ ok }) => ok);
}

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (err) => {
    console.error(`lint: ${err.message}`);
    process.exit(1);
  },
);
