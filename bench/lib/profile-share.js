'use strict';
/**
 * Reads a V8 CPU profile (.cpuprofile, as the inspector's Profiler.stop returns it) and says which
 * share of the busy samples (all but "(idle)") have their own frame in one of the package's files
 * (a script whose URL lies under `distDir`), with the breakdown by file. Built-ins a package
 * function calls (timers, EventTarget, Map) are charged to themselves, not to the package: this is
 * the package's own code, the strict count.
 */
const path = require('node:path');
const { pathToFileURL } = require('node:url');

/** { busySamples, ownSamples, ownPct, byFile: [{ file, samples, pct }] } for one profile. */
function packageShare(profile, distDir) {
  const prefixes = [path.resolve(distDir) + path.sep, pathToFileURL(path.resolve(distDir)).href + '/'];
  const ownFile = (url) => {
    const prefix = prefixes.find((p) => url.startsWith(p));
    return prefix === undefined ? undefined : url.slice(prefix.length);
  };
  const fileOf = new Map();
  for (const node of profile.nodes) {
    const { functionName, url } = node.callFrame;
    fileOf.set(node.id, functionName === '(idle)' ? null : ownFile(url || ''));
  }
  let busySamples = 0;
  let ownSamples = 0;
  const perFile = new Map();
  for (const id of profile.samples) {
    const file = fileOf.get(id);
    if (file === null) continue;
    busySamples++;
    if (file === undefined) continue;
    ownSamples++;
    perFile.set(file, (perFile.get(file) || 0) + 1);
  }
  const pct = (n) => (busySamples ? (n / busySamples) * 100 : 0);
  const byFile = [...perFile]
    .map(([file, samples]) => ({ file, samples, pct: pct(samples) }))
    .sort((a, b) => b.samples - a.samples);
  return { busySamples, ownSamples, ownPct: pct(ownSamples), byFile };
}

module.exports = { packageShare };

if (require.main === module) {
  // node bench/lib/profile-share.js <file.cpuprofile> [distDir]: prints the share and the breakdown.
  const fs = require('node:fs');
  const profile = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const share = packageShare(profile, process.argv[3] || require('./common').DIST);
  process.stdout.write(`own ${share.ownPct.toFixed(1)} % of ${share.busySamples} busy samples\n`);
  for (const f of share.byFile) process.stdout.write(`  ${f.pct.toFixed(2).padStart(6)} %  ${f.file}\n`);
}
