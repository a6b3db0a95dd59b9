/**
 * How deep a value is nested, found without recursion (a value too deep for a recursive walk
 * must not overflow the stack here either) and at a cost linear in its size: each object is
 * walked once, however often it is referred to. A reference back to an object that contains
 * it adds no level (a copy keeps such a reference as one: Node-RED's cloneMessage does).
 */

/** Whether a value is a level of nesting: an object or array, not binary data (a Buffer is bytes, not levels). */
function isLevel(v: unknown): v is object {
  return v !== null && typeof v === 'object' && !ArrayBuffer.isView(v) && !(v instanceof ArrayBuffer);
}

/** The values inside an object, array, Map or Set. */
function inside(o: object): unknown[] {
  if (Array.isArray(o)) return o;
  if (o instanceof Map) return [...o.values()];
  if (o instanceof Set) return [...o];
  return Object.values(o);
}

interface Frame {
  obj: object;
  items: unknown[];
  i: number;
  /** Levels from this object down (itself counts 1), of the items walked so far. */
  height: number;
}

/**
 * Whether `value` has more than `max` levels of objects and arrays (a plain value has 0,
 * `{a: 1}` 1, `{a: [1]}` 2). Stops as soon as it knows.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (!isLevel(value)) return false;
  const heights = new Map<object, number>();
  const onPath = new Set<object>();
  const stack: Frame[] = [];
  const enter = (o: object): boolean => {
    if (stack.length + 1 > max) return true;
    onPath.add(o);
    stack.push({ obj: o, items: inside(o), i: 0, height: 1 });
    return false;
  };
  if (enter(value)) return true;
  while (stack.length > 0) {
    const f = stack[stack.length - 1];
    if (f.i < f.items.length) {
      const child = f.items[f.i++];
      // A reference back to an object being walked adds no level: Node-RED's copy keeps it as a reference.
      if (!isLevel(child) || onPath.has(child)) continue;
      const known = heights.get(child);
      if (known === undefined) {
        if (enter(child)) return true;
      } else if (stack.length + known > max) return true;
      else f.height = Math.max(f.height, 1 + known);
      continue;
    }
    stack.pop();
    onPath.delete(f.obj);
    heights.set(f.obj, f.height);
    if (stack.length > 0) {
      const parent = stack[stack.length - 1];
      parent.height = Math.max(parent.height, 1 + f.height);
    }
  }
  return false;
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
