'use strict';
/** Renders the benchmark results as BENCHMARKS.md: intro, machine, summary, one section per benchmark. */
const fs = require('node:fs');
const path = require('node:path');

const cell = (v) => {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return v.map((x) => (x && typeof x === 'object' && x.name ? x.name : cell(x))).join(', ');
  if (typeof v === 'object')
    return Object.entries(v)
      .map(([k, x]) => `${k} ${cell(x)}`)
      .join(', ');
  return String(v).replace(/\|/g, '\\|');
};

function table(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** A table of the named alternatives (rows) and their figures (columns). */
function alternativesTable(alts) {
  const cols = [...new Set(Object.values(alts).flatMap((a) => Object.keys(a)))];
  return table(
    ['', ...cols],
    Object.entries(alts).map(([name, a]) => [name, ...cols.map((c) => a[c])]),
  );
}

function render(run, intro, notes) {
  const machine = run.machine;
  const out = [intro.trim(), ''];
  out.push('## Machine and run', '');
  out.push(
    table(
      ['', ''],
      [
        ['CPU', `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGB} GB`],
        ['OS', machine.os],
        ['Node.js', machine.node],
        ['Node-RED', machine.nodeRed],
        ['Load average at start (1, 5, 15 min)', machine.loadAverage.join(', ')],
        ['Run', `${run.generatedAt}, ${run.totalSeconds} s in all (\`npm run bench\`)`],
      ],
    ),
    '',
  );
  out.push('## Summary', '');
  const rows = [];
  run.benchmarks.forEach((b, i) => {
    if (b.error) rows.push([i + 1, b.title || b.id, 'did not complete', b.error, '✘']);
    else for (const g of b.goals) rows.push([i + 1, b.title, g.goal, g.measured, g.met ? '✔ met' : '✘ not met']);
  });
  out.push(table(['#', 'Benchmark', 'Goal', 'Measured', ''], rows), '');
  run.benchmarks.forEach((b, i) => {
    out.push(`## ${i + 1}. ${b.title || b.id}`, '');
    if (notes[b.id] && notes[b.id].what) out.push(notes[b.id].what.trim(), '');
    if (b.error) {
      out.push(`**Did not complete:** ${b.error}`, '');
      return;
    }
    if (b.measuredAt && b.measuredAt !== run.generatedAt)
      out.push(`Measured apart from the run above: ${b.measuredAt} (\`node bench/run-all.js --merge ${b.id}\`).`, '');
    if (b.settings) out.push(`Settings: ${cell(b.settings)}.`, '');
    if (b.method) out.push(`Method: ${b.method}`, '');
    if (b.alternatives) out.push(alternativesTable(b.alternatives), '');
    for (const t of b.tables || []) out.push(t.title, '', alternativesTable(t.rows), '');
    if (b.lowInflight)
      out.push(
        `With ${b.lowInflight.inflight} reads in flight:`,
        '',
        alternativesTable(b.lowInflight.alternatives),
        '',
      );
    if (b.results)
      out.push(
        table(
          ['Result', 'Value'],
          Object.entries(b.results)
            .filter(([k]) => k !== 'installedPackageNames')
            .map(([k, v]) => [k, v]),
        ),
        '',
      );
    for (const [name, r] of Object.entries(b.references || {}))
      out.push(
        `Reference "${name}" (${r.what}):`,
        '',
        table(
          ['Result', 'Value'],
          Object.entries(r).filter(([k]) => k !== 'what'),
        ),
        '',
      );
    if (b.floor)
      out.push(
        `Floor (${b.floor.what}):`,
        '',
        table(
          ['Result', 'Value'],
          Object.entries(b.floor).filter(([k]) => k !== 'what'),
        ),
        '',
      );
    if (b.ratios) out.push(table(['Ratio', 'Value'], Object.entries(b.ratios)), '');
    for (const [k, v] of Object.entries(b).filter(([k]) => /^answers/.test(k))) out.push(`${k}: ${v}`, '');
    out.push(
      table(
        ['Goal', 'Measured', ''],
        b.goals.map((g) => [g.goal, g.measured, g.met ? '✔ met' : '✘ not met']),
      ),
      '',
    );
    if (notes[b.id] && notes[b.id].profile) out.push(`**Where the time goes.** ${notes[b.id].profile.trim()}`, '');
    const failed = b.goals.filter((g) => !g.met);
    if (failed.length && notes[b.id] && notes[b.id].limits)
      out.push(`**What limits it.** ${notes[b.id].limits.trim()}`, '');
  });
  return `${out.join('\n').trim()}\n`;
}

function writeReport(root, run) {
  const dir = path.join(root, 'bench');
  fs.writeFileSync(path.join(dir, 'results.json'), `${JSON.stringify(run, null, 2)}\n`);
  const intro = fs.readFileSync(path.join(dir, 'intro.md'), 'utf8');
  const notes = require(path.join(dir, 'method-and-limits.js'));
  fs.writeFileSync(path.join(root, 'BENCHMARKS.md'), render(run, intro, notes));
}

module.exports = { render, writeReport };
