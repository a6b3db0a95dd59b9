/**
 * A huge array that counts every read of an element (index gets, `in`, descriptors, key
 * lists): the proof that code refused it by its length alone is the count, not a time.
 */

/** A `length`-element array (each element `item`) that counts every read of an element. */
export function countedReads(length: number, item: unknown): { list: any[]; reads: () => number } {
  let reads = 0;
  const index = (k: string | symbol) => typeof k === 'string' && /^\d+$/.test(k);
  const list = new Proxy(new Array(length).fill(item), {
    get: (t, k, r) => {
      if (index(k)) reads++;
      return Reflect.get(t, k, r);
    },
    has: (t, k) => {
      if (index(k)) reads++;
      return Reflect.has(t, k);
    },
    getOwnPropertyDescriptor: (t, k) => {
      if (index(k)) reads++;
      return Reflect.getOwnPropertyDescriptor(t, k);
    },
    ownKeys: (t) => {
      reads += t.length;
      return Reflect.ownKeys(t);
    },
  });
  return { list, reads: () => reads };
}
