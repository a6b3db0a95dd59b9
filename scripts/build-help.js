#!/usr/bin/env node
/**
 * Each node's reference is written once, in docs/nodes/<node>.md; the editor's en-US help is made
 * from it. `helpFromPage(type, markdown)` turns a page into the help file Node-RED loads, a
 * `<script type="text/markdown" data-help-name="<type>">` that the editor renders with its own
 * markdown renderer (the one it uses for node descriptions), so the help looks like every other
 * node's and no renderer ships with the package. Run as a script, it writes the help of every page
 * to a folder: `node scripts/build-help.js [out dir]` (default dist/nodes/locales/en-US, beside the
 * entry files scripts/assemble-nodes.js writes, where Node-RED reads a node set's help).
 *
 * What changes between the page and the help:
 * - the page's title (`#`) goes: the editor shows the node's name; `##` becomes `###` (Node-RED's
 *   Inputs / Outputs / Details), `###` becomes `####`;
 * - images go (the sidebar is narrow, and the help must work offline);
 * - relative links point to the page on GitHub (the sidebar has no docs folder);
 * - a list of message properties, items written `` - `name` _(type)_: text `` (or `**Label**` for a
 *   field of the panel; "optional" in the type marks it optional), becomes Node-RED's property list
 *   (`<dl class="message-properties">`), its text still markdown;
 * - colons of prose (not of code spans or link targets) are written `&#58;`: the editor's renderer reads
 *   `: name (type) : text` anywhere in a line as a property, so "Range: the last (hours) …: …" would not stay prose.
 */
'use strict';
const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');
const PAGES = path.join(ROOT, 'docs', 'nodes');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
/** Where relative links of a page point: the page's folder on GitHub. */
const PAGES_URL = `${PKG.homepage.replace(/#.*$/, '')}/blob/main/docs/nodes/`;

const PROPERTY_ITEM = /^( *)- (`[^`]+`|\*\*[^*]+\*\*) _\(([^)]*)\)_: ?(.*)$/;

const escapeHtml = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A property's name as HTML, without its markdown (the editor sets property names in monospace). */
const nameHtml = (name) => escapeHtml(name.replace(/^(`|\*\*)(.*)\1$/, '$2'));
/** A property's type as HTML; `\<` in the page (so GitHub shows `<`) is a plain `<`. */
const typeHtml = (type) => escapeHtml(type.replace(/\\(.)/g, '$1'));

/**
 * A run of property items (each with its continuation lines, indented two more) as Node-RED's property list,
 * indented as the items are (inside an output of a numbered list, say).
 */
function propertyList(items, pageName) {
  const indent = PROPERTY_ITEM.exec(items[0][0])[1];
  const out = ['<dl class="message-properties">'];
  for (const item of items) {
    const [, , name, type, first] = PROPERTY_ITEM.exec(item[0]);
    const optional = /(^|,\s*)optional$/.test(type);
    const shownType = type.replace(/,?\s*optional$/, '');
    const rest = item.slice(1).map((line) => line.slice(indent.length + 2));
    const body = linksOf([first, ...rest].join('\n').trim(), pageName);
    const term = `${nameHtml(name)} <span class="property-type">${typeHtml(shownType)}</span>`;
    out.push(`<dt${optional ? ' class="optional"' : ''}>${term}</dt>`, '<dd>', '', body, '', '</dd>');
  }
  out.push('</dl>');
  return out.flatMap((entry) => entry.split('\n')).map((line) => (line === '' ? '' : indent + line));
}

/**
 * Every colon of a paragraph's prose as `&#58;`; code spans (opened and closed by runs of as many backticks, also
 * across a line break) and link targets keep theirs. The editor's renderer tries its property-line rule at each
 * colon, and guarding only the colons that match it would unguard earlier ones.
 */
function guardColons(paragraph) {
  let out = '';
  let index = 0;
  while (index < paragraph.length) {
    const char = paragraph[index];
    let end = index + 1;
    if (char === '`') {
      const run = /^`+/.exec(paragraph.slice(index))[0];
      const closing = new RegExp(`(?<!\`)\`{${run.length}}(?!\`)`, 'g');
      closing.lastIndex = index + run.length;
      const close = closing.exec(paragraph);
      end = close ? close.index + run.length : index + run.length;
    } else if (char === '(' && paragraph[index - 1] === ']' && paragraph.indexOf(')', index) > 0) {
      end = paragraph.indexOf(')', index) + 1;
    }
    out += char === ':' ? '&#58;' : paragraph.slice(index, end);
    index = end;
  }
  return out;
}

/** Whether `line` (followed by `next`) belongs to the property item above it: indented two more, or a blank line inside it. */
function continues(line, next = '', indent = '') {
  const inside = (text) =>
    text.startsWith(indent + '  ') && /\S/.test(text.slice(indent.length + 2, indent.length + 3));
  return inside(line) || (line === '' && inside(next));
}

/** A relative link of a page, as an absolute address on GitHub. */
function absolute(target) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return target;
  return new URL(target, PAGES_URL + 'x').href;
}

/**
 * The en-US help of node type `type` from its page's markdown.
 * @param {string} type
 * @param {string} markdown
 * @param {string} [pageName] the page's file name, for links to its own sections (default `<type>.md`)
 */
function helpFromPage(type, markdown, pageName = `${type}.md`) {
  const lines = markdown.replace(/\r\n/g, '\n').split('\n');
  const out = [];
  let fenced = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    if (/^```/.test(line)) fenced = !fenced;
    if (fenced || /^```/.test(line)) {
      out.push(line);
      continue;
    }
    if (/^# /.test(line)) continue;
    if (/^!\[[^\]]*\]\([^)]*\)\s*$/.test(line)) continue;
    const heading = /^(#{2,5}) (.*)$/.exec(line);
    if (heading) {
      out.push(`#${heading[1]} ${heading[2]}`);
      continue;
    }
    const property = PROPERTY_ITEM.exec(line);
    if (property) {
      const items = [];
      const sameList = (next) => PROPERTY_ITEM.exec(next)?.[1] === property[1];
      while (index < lines.length && sameList(lines[index])) {
        const item = [lines[index++]];
        while (index < lines.length && continues(lines[index], lines[index + 1], property[1]))
          item.push(lines[index++]);
        items.push(item);
      }
      index--;
      out.push(...propertyList(items, pageName));
      continue;
    }
    out.push(linksOf(line, pageName));
  }
  const body = guardParagraphs(out)
    .join('\n')
    .replace(/^\n+/, '')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd();
  if (/<\/script/i.test(body)) throw new Error(`docs/nodes/${pageName}: "</script" would end the help early`);
  return `<script type="text/markdown" data-help-name="${type}">\n${body}\n</script>\n`;
}

/** Links made absolute, images dropped. */
function linksOf(text, pageName) {
  return text
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\]\(([^)\s]+)\)/g, (whole, target) =>
      target.startsWith('#') ? `](${absolute(pageName + target)})` : `](${absolute(target)})`,
    );
}

/** The help's lines with the colons of each paragraph guarded; fenced code and HTML lines as they are. */
function guardParagraphs(lines) {
  const out = [];
  let paragraph = [];
  const flush = () => {
    if (paragraph.length) out.push(...guardColons(paragraph.join('\n')).split('\n'));
    paragraph = [];
  };
  let fenced = false;
  for (const line of lines) {
    const fence = /^\s*```/.test(line);
    if (fence) fenced = !fenced;
    if (fence || fenced || line.trim() === '' || /^\s*<\/?d[ltd][ >]/.test(line)) {
      flush();
      out.push(line);
    } else paragraph.push(line);
  }
  flush();
  return out;
}

/** Node types that have a page: docs/nodes/<type>.md. */
function pageTypes(dir = PAGES) {
  return fs
    .readdirSync(dir)
    .filter((file) => /^ems-[a-z-]+\.md$/.test(file))
    .map((file) => file.slice(0, -3))
    .sort();
}

/** Writes `<out>/<type>.html` for every page. */
function writeHelp(outDir, dir = PAGES) {
  fs.mkdirSync(outDir, { recursive: true });
  for (const type of pageTypes(dir)) {
    const page = fs.readFileSync(path.join(dir, `${type}.md`), 'utf8');
    fs.writeFileSync(path.join(outDir, `${type}.html`), helpFromPage(type, page));
  }
}

module.exports = { helpFromPage };

// Silent, as the build's other steps: `npm pack --json` runs the build and its stdout must stay JSON.
if (require.main === module)
  writeHelp(path.resolve(ROOT, process.argv[2] || path.join('dist', 'nodes', 'locales', 'en-US')));
