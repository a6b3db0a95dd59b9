/**
 * Each node's reference is written once, in docs/nodes/<node>.md; the build makes the en-US editor help from it
 * (scripts/build-help.js). The German help is written by hand and keeps the same sections, in the same order.
 * The docs' headings go down one level at a time.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { localeFile } from '../../helpers/node-files';

const { helpFromPage } = require('../../../scripts/build-help.js') as {
  helpFromPage: (type: string, markdown: string) => string;
};
const ROOT = path.resolve(__dirname, '..', '..', '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const TYPES = Object.keys(PKG['node-red'].nodes);
const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), 'utf8');

/** The German heading of each English one the help uses. */
const GERMAN: Record<string, string[]> = {
  Inputs: ['Eingänge', 'Eingaben'],
  Outputs: ['Ausgänge', 'Ausgaben'],
  Details: ['Details'],
  Status: ['Status'],
  'Fleet read': ['Flotte lesen'],
  'When the service is unreachable': ['Wenn der Dienst nicht erreichbar ist'],
  Connection: ['Verbindung'],
  Advanced: ['Erweitert'],
  'Request budget': ['Anfragebudget'],
  'Bursts and input bounds': ['Lastspitzen und Grenzen der Eingabe'],
  'Group (Redis)': ['Gruppe (Redis)'],
  Endpoints: ['Endpunkte'],
  'Re-planning': ['Neu planen'],
  'Self-consumption slots': ['Eigenverbrauchs-Slots'],
  'Forecasts from the site itself': ['Prognosen aus dem Standort selbst'],
  Example: ['Beispiel'],
  Flow: ['Flow'],
  'Mode stats': ['Modus stats'],
  'Checked before anything is sent': ['Geprüft, bevor etwas gesendet wird'],
  Playing: ['Abspielen'],
  'Replacing and stopping': ['Ersetzen und Stoppen'],
  'Restarts lose nothing': ['Neustarts verlieren nichts'],
  'Delivery check': ['Lieferprüfung'],
  'Dry run': ['Probelauf'],
  Modes: ['Modi'],
  'Fleets and portfolio': ['Flotten und Portfolio'],
  Validity: ['Gültigkeit'],
  'Curtailment in %': ['Abregelung in %'],
  Safety: ['Sicherheit'],
};

/** The markdown headings of a text outside fenced code, as [level, text]. */
function markdownHeadings(markdown: string): Array<[number, string]> {
  let fenced = false;
  const headings: Array<[number, string]> = [];
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) fenced = !fenced;
    const heading = !fenced && /^(#{1,6}) (.*)$/.exec(line);
    if (heading) headings.push([heading[1].length, heading[2].trim()]);
  }
  return headings;
}

/** The sections of the German help: its h3 and h4, as "level text". */
function germanSections(html: string): string[] {
  return [...html.matchAll(/<h([34])>([\s\S]*?)<\/h\1>/g)].map(
    (match) => `${match[1]} ${match[2].replace(/<[^>]+>/g, '').trim()}`,
  );
}

describe('docs: each node written once, the help made from it', () => {
  it('every node of package.json has its page in docs/nodes/, and docs/nodes.md links each and the README safety notes', () => {
    const index = read('docs/nodes.md');
    for (const type of TYPES) {
      assert.ok(fs.existsSync(path.join(ROOT, 'docs', 'nodes', `${type}.md`)), `docs/nodes/${type}.md`);
      assert.ok(index.includes(`](nodes/${type}.md)`), `docs/nodes.md links ${type}`);
    }
    assert.ok(index.includes('](../README.md#safety-notes-on-steering)'), 'links the README safety notes');
    assert.ok(/^## Safety notes on steering$/m.test(read('README.md')), 'the README holds them');
    for (const file of ['docs/nodes.md', ...TYPES.map((type) => `docs/nodes/${type}.md`)])
      assert.doesNotMatch(read(file), /^#+ Safety notes/m, `${file} repeats the safety notes`);
  });

  it('the built en-US help of every node is the one made from its page', () => {
    for (const type of TYPES) {
      const built = read(`dist/nodes/locales/en-US/${type}.html`);
      assert.equal(built, helpFromPage(type, read(`docs/nodes/${type}.md`)), `${type}: run npm run build`);
      assert.match(built, new RegExp(`^<script type="text/markdown" data-help-name="${type}">\\n`));
    }
  });

  it('the German help has the sections of the English help, in the same order, for every node', () => {
    for (const type of TYPES) {
      const english = markdownHeadings(helpFromPage(type, read(`docs/nodes/${type}.md`)))
        .filter(([level]) => level === 3 || level === 4)
        .map(([level, text]) => `${level} ${text}`);
      const german = germanSections(fs.readFileSync(localeFile('de', type, 'html'), 'utf8'));
      assert.ok(english.length > 0, `${type}: the English help has sections`);
      assert.equal(german.length, english.length, `${type}: ${english.join(', ')} against ${german.join(', ')}`);
      english.forEach((section, index) => {
        const [level, ...words] = section.split(' ');
        const text = words.join(' ');
        const expected = (GERMAN[text] ?? []).map((translation) => `${level} ${translation}`);
        assert.ok(expected.length > 0, `${type}: "${text}" has no German heading in this test's table`);
        assert.ok(
          expected.includes(german[index]),
          `${type}: section ${index + 1} is ${section}, in German ${german[index]}`,
        );
      });
    }
  });

  it("the help lists message properties as Node-RED does (an output's too), drops images, links the pages on GitHub, keeps prose colons from reading as properties", () => {
    const page = [
      '# Title `ems-x`',
      '',
      'First paragraph.',
      '',
      '![image](../images/x.png)',
      '',
      '## Inputs',
      '',
      '- `payload` _(number, optional)_: The value: see [A1](../assumptions.md).',
      '  A second line.',
      '- **Base URL** _(string)_: The service.',
      '- **Curtail** _(path with \\<site\\>)_: A path.',
      '',
      '## Outputs',
      '',
      '1. Service response',
      '',
      '   - `request` _(object)_: What was sent.',
      '',
      '### Range',
      '',
      'Range: the last (hours) up to now: `12:00`.',
      '',
      'An error (`split applies to one',
      'device: …`) and ``a`b: c``: both code.',
    ].join('\n');
    const help = helpFromPage('ems-x', page);
    assert.doesNotMatch(help, /Title|image/);
    assert.match(help, /^### Inputs$/m);
    assert.match(help, /^#### Range$/m);
    assert.match(help, /<dt class="optional">payload <span class="property-type">number<\/span><\/dt>/);
    assert.match(help, /<dt>Base URL <span class="property-type">string<\/span><\/dt>/);
    assert.match(help, /A second line\./);
    assert.match(help, /<dt>Curtail <span class="property-type">path with &lt;site&gt;<\/span><\/dt>/);
    // an output's properties stay inside its item of the numbered list
    assert.match(help, /^1\. Service response\n\n {3}<dl class="message-properties">\n {3}<dt>request /m);
    assert.match(help, /\(https:\/\/github\.com\/ems-partner\/node-red\/blob\/main\/docs\/assumptions\.md\)/);
    assert.match(help, /^Range&#58; the last \(hours\) up to now&#58; `12:00`\.$/m);
    // a code span keeps its colons, also across a line break or opened by two backticks
    assert.match(help, /^An error \(`split applies to one\ndevice: …`\) and ``a`b: c``&#58; both code\.$/m);
    assert.throws(() => helpFromPage('ems-x', 'a </script> b'), /<\/script/);
  });

  it('the headings of docs/*.md and docs/nodes/*.md go down one level at a time, from one title', () => {
    const files = ['docs', 'docs/nodes'].flatMap((dir) =>
      fs
        .readdirSync(path.join(ROOT, dir))
        .filter((file) => file.endsWith('.md'))
        .map((file) => `${dir}/${file}`),
    );
    assert.ok(files.length >= 14, files.join(', '));
    const jumps: string[] = [];
    for (const file of files) {
      const headings = markdownHeadings(read(file));
      if (headings.filter(([level]) => level === 1).length !== 1) jumps.push(`${file}: not one # title`);
      headings.forEach(([level, text], index) => {
        const previous = index === 0 ? 0 : headings[index - 1][0];
        if (level > previous + 1) jumps.push(`${file}: ${'#'.repeat(level)} ${text} after a level ${previous}`);
      });
    }
    assert.deepEqual(jumps, []);
  });
});
