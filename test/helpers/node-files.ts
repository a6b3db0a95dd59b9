/**
 * Where a node's editor files are written: in its folder, src/nodes/<node>/ (the panel <type>.html, the messages
 * and help locales/<lang>/<type>.{json,html}). scripts/assemble-nodes.js copies them to dist/nodes/ for Node-RED.
 */
import fs from 'node:fs';
import path from 'node:path';

const NODES_DIR = path.resolve(__dirname, '..', '..', 'src', 'nodes');

/** The folder (absolute) of a node type: the one holding its panel, <type>.html. */
export function nodeFolder(type: string): string {
  const folder = fs.readdirSync(NODES_DIR).find((name) => fs.existsSync(path.join(NODES_DIR, name, `${type}.html`)));
  if (!folder) throw new Error(`no src/nodes/*/${type}.html`);
  return path.join(NODES_DIR, folder);
}

/** A node type's panel: its definition and form, as Node-RED gets it. */
export function panelFile(type: string): string {
  return path.join(nodeFolder(type), `${type}.html`);
}

/** A node type's messages (json) or help (html) in a language. */
export function localeFile(lang: string, type: string, ext: 'json' | 'html'): string {
  // the en-US help is built from docs/nodes/<type>.md by `npm run build` (scripts/build-help.js)
  if (lang === 'en-US' && ext === 'html')
    return path.join(NODES_DIR, '..', '..', 'dist', 'nodes', 'locales', lang, `${type}.html`);
  return path.join(nodeFolder(type), 'locales', lang, `${type}.${ext}`);
}

/** Every node type with a panel in src/nodes/<node>/. */
export function nodeTypes(): string[] {
  return fs
    .readdirSync(NODES_DIR)
    .flatMap((folder) => {
      const dir = path.join(NODES_DIR, folder);
      return fs.statSync(dir).isDirectory() ? fs.readdirSync(dir).filter((f) => /^ems-[a-z-]+\.html$/.test(f)) : [];
    })
    .map((file) => file.replace(/\.html$/, ''))
    .sort();
}
