/**
 * How deep a value is nested, found with a recursion no deeper than the limit (a value too deep
 * for a full recursive walk must not overflow the stack here either) and at a cost linear in its
 * size: each object is walked once, however often it is referred to. A reference back to an
 * object that contains it adds no level (a copy keeps such a reference as one: Node-RED's
 * cloneMessage does).
 */

/** Whether a value is a level of nesting: an object or array, not binary data (a Buffer is bytes, not levels). */
function isLevel(v: unknown): v is object {
  return v !== null && typeof v === 'object' && !ArrayBuffer.isView(v) && !(v instanceof ArrayBuffer);
}

/** A plain object whose values are all plain values: one level, found without making a list of them. */
function isLeafObject(o: object): boolean {
  for (const k in o) {
    const child = (o as Record<string, unknown>)[k];
    if (child !== null && typeof child === 'object') return false;
  }
  return true;
}

/** The values inside an object, array, Map or Set. */
function inside(o: object): unknown[] {
  if (Array.isArray(o)) return o;
  if (o instanceof Map) return [...o.values()];
  if (o instanceof Set) return [...o];
  return Object.values(o);
}

const TOO_DEEP = Number.POSITIVE_INFINITY;

/** Why a value is refused: nested too deep, or an array (Map, Set) of more elements than allowed. */
export type InputProblem = { kind: 'deep' } | { kind: 'long'; length: number };

/**
 * Whether `value` has more than `maxDepth` levels of objects and arrays (a plain value has 0,
 * `{a: 1}` 1, `{a: [1]}` 2), or an array, Map or Set of more than `maxElements` elements (found
 * by its length, before any element is read). Stops as soon as it knows. The walk recurses at
 * most `maxDepth` calls deep whatever the value's depth (a limit of a few hundred at most:
 * INPUTS.maxDepth is 64), and costs one pass over the value: an object is walked once however
 * often it is referred to (its height is kept), and a plain object of plain values, the common
 * case of a long list, costs no allocation.
 */
export function inputProblem(
  value: unknown,
  maxDepth: number,
  maxElements = Number.POSITIVE_INFINITY,
): InputProblem | undefined {
  if (!isLevel(value)) return undefined;
  const heights = new Map<object, number>();
  const path: object[] = [];
  let long: number | undefined;
  /** The levels from `o` down (itself counts 1), or TOO_DEEP once they pass `room` (or an array is too long). */
  const height = (o: object, room: number): number => {
    if (room <= 0) return TOO_DEEP;
    const known = heights.get(o);
    if (known !== undefined) return known > room ? TOO_DEEP : known;
    const size = Array.isArray(o) ? o.length : o instanceof Map || o instanceof Set ? o.size : -1;
    if (size > maxElements) {
      long = size;
      return TOO_DEEP;
    }
    if (size < 0 && isLeafObject(o)) return 1;
    const items = inside(o);
    let levels = 1;
    path.push(o);
    for (let i = 0; i < items.length; i++) {
      const child = items[i];
      // A reference back to an object being walked adds no level: Node-RED's copy keeps it as a reference.
      if (!isLevel(child) || path.includes(child)) continue;
      const below = height(child, room - 1);
      if (below === TOO_DEEP) {
        path.pop();
        return TOO_DEEP;
      }
      if (below + 1 > levels) levels = below + 1;
    }
    path.pop();
    if (levels > 1) heights.set(o, levels);
    return levels;
  };
  if (height(value, maxDepth) <= maxDepth) return undefined;
  return long === undefined ? { kind: 'deep' } : { kind: 'long', length: long };
}

/** Whether `value` has more than `max` levels of objects and arrays (inputProblem without a cap on elements). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  return inputProblem(value, max) !== undefined;
}

/** Message properties Node-RED itself leaves out when it copies a message (the HTTP request and response). */
const NOT_COPIED = new Set(['req', 'res']);

/**
 * The properties of a message nested deeper than `max` levels (see nestedDeeperThan); none for
 * most. Every property counts, not only those a node reads: Node-RED copies the whole message
 * for a Catch node.
 */
export function deepProperties(msg: object, max: number): string[] {
  const deep: string[] = [];
  for (const key of Object.keys(msg)) {
    if (NOT_COPIED.has(key)) continue;
    if (nestedDeeperThan((msg as Record<string, unknown>)[key], max)) deep.push(key);
  }
  return deep;
}

/**
 * The properties of a message that are refused before any work: nested deeper than `maxDepth`,
 * or holding an array of more than `maxElements` elements (every property but req and res, as
 * deepProperties); none for most.
 */
export function refusedProperties(
  msg: object,
  maxDepth: number,
  maxElements: number,
): Array<{ key: string; problem: InputProblem }> {
  const out: Array<{ key: string; problem: InputProblem }> = [];
  for (const key of Object.keys(msg)) {
    if (NOT_COPIED.has(key)) continue;
    const problem = inputProblem((msg as Record<string, unknown>)[key], maxDepth, maxElements);
    if (problem) out.push({ key, problem });
  }
  return out;
}
