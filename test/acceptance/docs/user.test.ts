/**
 * What a new user reads: the README, docs/ (not architecture.md, written for engineers), the
 * help of every node (en-US and de) and the examples' comment nodes. The references they show
 * answer on the built-in simulator; the README says how to connect to a real service with the
 * config node's own choices; "falls back" says to what; no internal notes (issue numbers, test
 * files, .test-tmp, an assumption number without its link, a version the package never had).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_PATHS, PATH_KEYS, PATH_SETTINGS } from '../../../src/protocol/paths';
import { BUILT_IN_SITES } from '../../../src/simulator/index';
import { exampleFiles, readExample } from '../../helpers/examples';
import { useSimulator } from '../../helpers/sim';
import { localeFile, nodeTypes } from '../../helpers/node-files';

const semver: any = require('semver');
const ROOT = path.resolve(__dirname, '..', '..', '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), 'utf8');
const LOCALES = ['en-US', 'de'].flatMap((l) =>
  nodeTypes().flatMap((type) => ['json', 'html'].map((ext) => path.relative(ROOT, localeFile(l, type, ext as 'json')))),
);
const DOCS = ['docs', 'docs/nodes'].flatMap((dir) =>
  fs
    .readdirSync(path.join(ROOT, dir))
    .filter((f) => f.endsWith('.md') && f !== 'architecture.md')
    .map((f) => `${dir}/${f}`),
);
/** The README without its section for contributors (Develop), which may name test files and .test-tmp. */
const README = read('README.md').replace(/\n## Develop\n[\s\S]*?(?=\n## )/, '\n');
/** Each example's comment nodes (name and text), as "examples/<file> (comment)". */
const COMMENTS: Array<[string, string]> = exampleFiles().map((f) => [
  `examples/${f} (comment)`,
  readExample(f)
    .filter((n: any) => n.type === 'comment')
    .map((n: any) => `${n.name}\n${n.info ?? ''}`)
    .join('\n'),
]);
/** Every user-facing text: [where, text]. */
const USER: Array<[string, string]> = [
  ['README.md', README],
  ...DOCS.map((f): [string, string] => [f, read(f)]),
  ...LOCALES.map((f): [string, string] => [f, read(f)]),
  ...COMMENTS,
];

/** Occurrences of `re` (global) in a text, with 40 characters around each. */
function found(text: string, re: RegExp): string[] {
  return [...text.matchAll(re)].map((m) =>
    text.slice(Math.max(0, m.index! - 40), m.index! + m[0].length + 40).replace(/\s+/g, ' '),
  );
}

describe('user docs: references, connecting, "falls back", no internal notes', () => {
  const sim = useSimulator({ sites: BUILT_IN_SITES.map((s) => ({ ...s })) });

  it('every device and site reference shown answers on the built-in simulator (one-character names like dvc_a only show the form)', async () => {
    const refs = new Map<string, string>();
    for (const [where, text] of USER)
      for (const m of text.matchAll(/\b(dvc|ste)_([A-Za-z0-9]+)\b/g)) if (!refs.has(m[0])) refs.set(m[0], where);
    assert.ok(refs.size > 10, `${refs.size} references found`);
    const bad: string[] = [];
    for (const [ref, where] of refs) {
      const suffix = ref.slice(4);
      if (/^[a-z0-9]$/.test(suffix)) continue; // dvc_a, ste_b, dvc_x, dvc_1: the form, in shapes and quoted errors
      const url = ref.startsWith('dvc_')
        ? `${sim.url}/devices/${ref}/measurement?property=power`
        : `${sim.url}/sites/${ref}/state`;
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status !== 200) bad.push(`${ref} (${where}): HTTP ${response.status}`);
    }
    assert.deepEqual(bad, []);
  });

  it("the help of the nodes that take a device or site names references of the simulator's sites", () => {
    const known = new Set(
      BUILT_IN_SITES.flatMap((s) => [
        s.siteReference,
        s.battery.deviceReference,
        s.pv.deviceReference,
        s.meter.deviceReference,
      ]),
    );
    for (const f of ['ems-device-read', 'ems-time-series', 'ems-site-steer', 'ems-schedule', 'ems-partner-config']) {
      for (const l of ['en-US', 'de']) {
        const refs = [
          ...fs.readFileSync(localeFile(l, f, 'html'), 'utf8').matchAll(/\b(dvc|ste)_[A-Za-z0-9]{12}\b/g),
        ].map((m) => m[0]);
        assert.ok(refs.length > 0 && refs.every((r) => known.has(r)), `${l}/${f}.html: ${refs.join(', ')}`);
      }
    }
  });

  it("no literal {base_url} (the specification's placeholder) in the help, README or docs", () => {
    for (const [where, text] of USER) assert.deepEqual(found(text, /\{base_url\}/g), [], where);
  });

  it("the README has a section on connecting to a real service: base URL, the config node's auth choices, the configurable paths with their defaults, Test connection", () => {
    const section = /\n## Connect to your service\n([\s\S]*?)\n## /.exec(README)?.[1];
    assert.ok(section, 'README § Connect to your service');
    const labels = JSON.parse(fs.readFileSync(localeFile('en-US', 'ems-partner-config', 'json'), 'utf8'))[
      'ems-partner-config'
    ];
    for (const label of [
      labels.label.baseUrl,
      labels.label.test,
      labels.label.endpoints,
      labels.label.apiKeyHeader,
      labels.label.tokenUrl,
      labels.label.clientId,
      labels.label.clientSecret,
    ]) {
      assert.ok(section!.includes(label), `names "${label}"`);
    }
    for (const [type, label] of Object.entries<string>(labels.authType))
      assert.ok(section!.includes(`*${label}*`), `auth ${type}: "${label}"`);
    for (const key of PATH_KEYS) {
      const row = new RegExp(
        `\\| ${labels.label[PATH_SETTINGS[key].property]} \\| \`${PATH_SETTINGS[key].property}\` \\| \`${DEFAULT_PATHS[key]}\` \\|`,
      );
      assert.match(section!, row, `path ${key}`);
    }
  });

  it('"the site falls back" says to what: the EMS\'s own control', () => {
    for (const [where, text] of USER) {
      if (where === 'docs/assumptions.md') continue; // kept as it is (its A27 says "fall back"); the README defines it
      if (/\/locales\/de\//.test(where)) {
        assert.deepEqual(
          found(text, /zurückfällt|fällt\b[^.<]{0,80}\bzurück\b/g),
          [],
          `${where}: "zurückfallen" without "zur eigenen Regelung des EMS"`,
        );
        continue;
      }
      if (/\bfall(s|ing)? back\b/i.test(text))
        assert.match(
          text,
          /falls? back[^.]{0,30}?\sto the EMS's own control/,
          `${where} says "fall back" without saying to what`,
        );
    }
    // The README defines it before its first use, for every page.
    const readme = read('README.md');
    const defined = readme.indexOf('**falls back**');
    assert.ok(defined > 0 && defined < readme.search(/falls? back(?!\*)/), 'README defines "falls back" first');
    assert.match(
      readme.slice(defined, defined + 300),
      /to the EMS's own control: what the EMS does when no signal is in force/,
    );
  });

  it('no internal notes: issue numbers, test files, .test-tmp, assumption numbers without their link', () => {
    for (const [where, text] of USER) {
      if (where === 'docs/assumptions.md') continue; // the assumptions' own table
      assert.deepEqual(found(text, /\bissue \d+/gi), [], `${where}: an issue number`);
      assert.deepEqual(found(text, /\btest\/[\w/.-]+|\.test-tmp\b/g), [], `${where}: a test file or .test-tmp`);
      // a page of docs/nodes/ links ../assumptions.md; the help made from it, the same page on GitHub
      const bare = text.replace(
        /\[A\d{1,3}\]\((\.\.\/)?(https:\/\/github\.com\/ems-partner\/node-red\/blob\/main\/)?(docs\/)?assumptions\.md(#[\w-]+)?\)/g,
        '',
      );
      assert.deepEqual(
        found(bare, /(?<![\w`])A\d{1,3}\b/g),
        [],
        `${where}: an assumption number without a link to docs/assumptions.md`,
      );
    }
  });

  it('no version of this package above its own, and no count of the examples that is not theirs', () => {
    const words = [
      'zero',
      'one',
      'two',
      'three',
      'four',
      'five',
      'six',
      'seven',
      'eight',
      'nine',
      'ten',
      'eleven',
      'twelve',
      'thirteen',
      'fourteen',
      'fifteen',
    ];
    for (const [where, text] of USER) {
      if (where === 'docs/assumptions.md') continue; // the assumptions' own table, kept as written
      // 0.x.y versions are this package's (the dependencies named are 1.x and later); an IP's "0.0.1" is not a version.
      for (const v of text.matchAll(/(?<![\d.])0\.\d+\.\d+(?![\d.])/g))
        assert.ok(semver.lte(v[0], PKG.version), `${where}: version ${v[0]} of a ${PKG.version} package`);
    }
    for (const where of ['README.md', 'docs/examples.md']) {
      for (const m of read(where).matchAll(
        new RegExp(`\\ball (${words.join('|')})(?=,? (examples|one after|of the examples)\\b)`, 'g'),
      )) {
        assert.equal(
          words.indexOf(m[1]),
          exampleFiles().length,
          `${where}: "all ${m[1]}" of ${exampleFiles().length} examples`,
        );
      }
    }
  });
});
