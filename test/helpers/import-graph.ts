/**
 * The import graph of src/, read from the files as text (TypeScript 7 has no compiler API):
 * every relative `import … from`, `export … from`, side-effect `import '…'`, `require('…')` and
 * `import('…')` of each .ts file, resolved to the file it names. Lines that start a comment
 * (`//`, `/*`, `*`) are skipped. Used by test/acceptance/architecture/imports.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface ImportEdge {
  /** Importing file, relative to the repository root with forward slashes (src/client/client.ts). */
  from: string;
  /** The specifier as written ('../protocol/time'). */
  spec: string;
  /** The file it resolves to (src/protocol/time.ts); null when it names no .ts file. */
  to: string | null;
  /** Whether the whole statement is type-only (`import type`, `export type`, `typeof import(…)`): erased at run time. */
  typeOnly: boolean;
}

const STATEMENT =
  /^[ \t]*(import|export)\s+(type\s+)?(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?)?\s*from\s*(['"])([^'"\n]+)\3/gm;
const SIDE_EFFECT = /^[ \t]*import\s*(['"])([^'"\n]+)\1/gm;
const CALL = /(typeof\s+)?\b(require|import)\s*\(\s*(['"])([^'"\n]+)\3\s*\)/g;

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const entryPath = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...listTs(entryPath));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(entryPath);
  }
  return out;
}

function resolve(root: string, fromAbs: string, spec: string): string | null {
  const base = path.resolve(path.dirname(fromAbs), spec.replace(/\.js$/, ''));
  for (const c of [`${base}.ts`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(c)) return path.relative(root, c).split(path.sep).join('/');
  }
  return null;
}

/** Every relative import of every .ts file under `<root>/src` (`to` null when it resolves to no file). */
export function importGraph(root: string): { files: string[]; edges: ImportEdge[] } {
  const abs = listTs(path.join(root, 'src')).sort();
  const files = abs.map((f) => path.relative(root, f).split(path.sep).join('/'));
  const edges: ImportEdge[] = [];
  abs.forEach((file, i) => {
    const text = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
      .join('\n');
    const add = (spec: string, typeOnly: boolean) => {
      if (!spec.startsWith('.')) return;
      const to = resolve(root, file, spec);
      edges.push({ from: files[i], spec, to, typeOnly });
    };
    for (const m of text.matchAll(STATEMENT)) add(m[4], Boolean(m[2]));
    for (const m of text.matchAll(SIDE_EFFECT)) add(m[2], false);
    for (const m of text.matchAll(CALL)) add(m[4], Boolean(m[1]) && m[2] === 'import');
  });
  return { files, edges };
}

/**
 * The folder a file belongs to: src/<room> for protocol, client, runtime, plan and simulator;
 * src/nodes/<node> for each node folder and src/nodes/shared (src/nodes holds no file of its own: Node-RED's
 * entries are built by scripts/assemble-nodes.js), src for the package entry src/index.ts.
 */
export function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[1] === 'nodes' && parts.length > 3) return parts.slice(0, 3).join('/');
  return parts.slice(0, -1).join('/');
}

/** The layer of a folder: protocol, client, runtime, plan, simulator, nodes or entry (src/index.ts). */
export function layerOf(folder: string): string {
  const top = folder.split('/')[1];
  return top ?? 'entry';
}

/**
 * Every import circle: for each strongly connected set of files (two or more, or a file importing
 * itself), one shortest circle through its first file, as a path that ends where it starts.
 */
export function circles(files: string[], edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const e of edges) if (e.to) next.get(e.from)?.push(e.to);
  // Tarjan's strongly connected components
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        comp.push(member);
      } while (member !== v);
      if (comp.length > 1 || (next.get(v) ?? []).includes(v)) found.push(shortestCircle(comp.sort(), next));
    }
  };
  for (const f of files) if (!idx.has(f)) visit(f);
  return found;
}

/** A shortest path from comp[0] back to itself inside comp (breadth first). */
function shortestCircle(comp: string[], next: Map<string, string[]>): string[] {
  const inside = new Set(comp);
  const start = comp[0];
  const from = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    for (const w of next.get(queue[i]) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path: string[] = [];
        for (let at = queue[i]; at !== start; at = from.get(at)!) path.unshift(at);
        return [start, ...path, start];
      }
      if (!from.has(w)) {
        from.set(w, queue[i]);
        queue.push(w);
      }
    }
  }
  return comp;
}
