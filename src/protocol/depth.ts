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
    const c = (o as Record<string, unknown>)[k];
    if (c !== null && typeof c === 'object') return false;
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

/**
 * Whether `value` has more than `max` levels of objects and arrays (a plain value has 0,
 * `{a: 1}` 1, `{a: [1]}` 2). Stops as soon as it knows. The walk recurses at most `max` calls
 * deep whatever the value's depth (a limit of a few hundred at most: INPUTS.maxDepth is 64), and
 * costs one pass over the value: an object is walked once however often it is referred to
 * (its height is kept), and a plain object of plain values, the common case of a long list,
 * costs no allocation.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (!isLevel(value)) return false;
  const heights = new Map<object, number>();
  const path: object[] = [];
  /** The levels from `o` down (itself counts 1), or TOO_DEEP once they pass `room`. */
  const height = (o: object, room: number): number => {
    if (room <= 0) return TOO_DEEP;
    const known = heights.get(o);
    if (known !== undefined) return known > room ? TOO_DEEP : known;
    if (!Array.isArray(o) && !(o instanceof Map) && !(o instanceof Set) && isLeafObject(o)) return 1;
    const items = inside(o);
    let h = 1;
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
      if (below + 1 > h) h = below + 1;
    }
    path.pop();
    if (h > 1) heights.set(o, h);
    return h;
  };
  return height(value, max) > max;
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
