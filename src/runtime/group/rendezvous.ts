/**
 * Rendezvous (highest random weight) hashing: each key goes to the member with the highest
 * hash of (member, key). Every key has exactly one owner, the split is even on average, and
 * when a member leaves only its own keys move (each to the member that ranked second for it).
 */
import { createHash } from 'node:crypto';

/** The weight of (member, key): a hash, then the member's name, so that equal hashes still order the same everywhere. */
function weight(member: string, key: string): string {
  return `${createHash('sha256').update(member).update('\u0000').update(key).digest('hex')}\u0000${member}`;
}

/** The owner of `key` among `members` (undefined when there are none). */
export function ownerOf(key: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = '';
  for (const member of members) {
    const memberWeight = weight(member, key);
    if (memberWeight > bestWeight) {
      best = member;
      bestWeight = memberWeight;
    }
  }
  return best;
}

/** Splits `keys` over `members`: member -> its keys, in the keys' order. */
export function split(keys: readonly string[], members: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>(members.map((m) => [m, []]));
  for (const k of keys) {
    const owner = ownerOf(k, members);
    if (owner !== undefined) out.get(owner)!.push(k);
  }
  return out;
}
