/**
 * The Flows library's scorecard, by the real tool: `node-red-dev validate` (devDependency)
 * on a copy of what `npm pack` packs from the build, offline: the catalogue it reads is empty
 * and served, with the Node-RED facts and the locked packuments, from 127.0.0.1
 * (test/helpers/scorecard-offline.ts says what it looks up and how it is pointed there).
 * Any warning or error fails, and so does any line the tool prints that is not a passed check:
 * the tool exits 0 and counts a node it could not parse as neither passed nor failed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  findings,
  packedCopy,
  serveOffline,
  validate,
  type Served,
  type Validation,
} from '../../helpers/scorecard-offline';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const NODES: Record<string, string> = PKG['node-red'].nodes;
/** What validate 0.1.6 checks (P02 is disabled in the tool): package, nodes, dependencies. */
const CHECKS = ['P01', 'P03', 'P04', 'P05', 'P06', 'P07', 'P08', 'N01', 'N02', 'D01', 'D02', 'D03'];
/** The node types an example must use: all but config nodes (as the tool reads their category). */
const EXAMPLE_TYPES = Object.entries(NODES)
  .filter(
    ([, js]) =>
      !/category:\s*(['"])config\1/.test(fs.readFileSync(path.join(ROOT, js.replace(/\.js$/, '.html')), 'utf8')),
  )
  .map(([type]) => type)
  .sort();

describe('scorecard: the real node-red-dev validate, offline on the packed package', function () {
  this.timeout(180_000);
  let served: Served;
  let dir = '';
  let validation: Validation;

  before(async () => {
    assert.ok(
      fs.existsSync(path.join(ROOT, 'dist', 'nodes', 'ems-site-steer.html')),
      'dist/ is built (npm test builds first)',
    );
    served = await serveOffline();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-scorecard-'));
    await packedCopy(ROOT, dir);
    validation = await validate(dir, served);
  });

  after(async () => {
    await served?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const output = () =>
    `exit ${validation.code}${validation.signal ? ` (${validation.signal})` : ''}\n--- stdout\n${validation.stdout}\n--- stderr\n${validation.stderr}`;

  it('runs to the end: exit 0, "Complete", its scorecard written', () => {
    assert.equal(validation.code, 0, output());
    assert.match(validation.stdout, /^Complete$/m, output());
    assert.equal(typeof validation.scorecard, 'object', `no scorecard file\n${output()}`);
    assert.equal(validation.scorecard.package?.name, PKG.name);
  });

  it('ran its checks (a silent tool cannot pass): each one in the scorecard, ✅ lines printed', () => {
    const ran = Object.keys(validation.scorecard ?? {}).filter((k) => /^[PND]\d\d$/.test(k));
    assert.ok(ran.length > 0, `no checks ran\n${output()}`);
    assert.deepEqual(
      CHECKS.filter((c) => !ran.includes(c)),
      [],
      `checks missing from the scorecard\n${output()}`,
    );
    const passed = validation.stdout.split(/\r?\n/).filter((l) => l.startsWith('✅ ')).length;
    assert.ok(passed > 0, `no ✅ line\n${output()}`);
  });

  it('looked everything up locally: the empty catalogue, Node-RED, each runtime dependency; nothing else', () => {
    const asked = (re: RegExp) => served.requests.filter((r) => re.test(r)).length;
    assert.ok(asked(/^https:\/\/catalogue\.nodered\.org\/catalogue\.json$/) >= 2, 'catalogue: P08 and N01');
    assert.ok(asked(/^https:\/\/registry\.npmjs\.org\/node-red$/) >= 1, 'Node-RED: P06, P07');
    for (const dep of Object.keys(PKG.dependencies ?? {})) {
      const escaped = encodeURIComponent(dep).replace(/^%40/, '@');
      assert.ok(
        asked(new RegExp(`^(http://127\\.0\\.0\\.1:\\d+)?/(${escaped}|${escaped.replace('%2F', '%2f')})$`)) >= 1,
        `registry: ${dep}`,
      );
    }
    assert.deepEqual(served.unexpected, []);
  });

  it("parsed every node's editor file: each non-config type is in N02, with or without an example", () => {
    assert.doesNotMatch(`${validation.stdout}\n${validation.stderr}`, /Unable to parse/, output());
    const missing =
      /Examples not found for the following nodes: (.*)$/m
        .exec(validation.stderr)?.[1]
        .split(',')
        .map((s) => s.trim()) ?? [];
    assert.deepEqual([...(validation.scorecard?.N02?.nodes ?? []), ...missing].sort(), EXAMPLE_TYPES, output());
  });

  it('no warning, no error, nothing but passed checks in its output', () => {
    const found = findings(validation);
    assert.deepEqual(found, [], `${found.length} finding(s):\n${found.join('\n')}\n\n${output()}`);
  });

  it('every check passes in its scorecard', () => {
    const failed = Object.entries<any>(validation.scorecard ?? {}).filter(
      ([k, r]) => k !== 'package' && r?.test !== true,
    );
    assert.deepEqual(failed, [], output());
  });
});
