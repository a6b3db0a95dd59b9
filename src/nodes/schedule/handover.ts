/**
 * The state a schedule node hands to its successor on a redeploy, per runtime and node id:
 * Node-RED deletes a node's context when it closes unless settings.js configures a context store.
 */
import type { PlayerState } from '../../runtime';

/** What a closing node hands to the node deployed next with its id. */
export interface Handed {
  state: PlayerState;
  store?: string;
  held?: string;
}

/** Per runtime (RED), per node id. */
const handover = new WeakMap<object, Map<string, Handed>>();

/** What the node closed last with this id on this runtime handed over (taken: a second call gets nothing). */
export function takeHandover(runtime: object, id: string): Handed | undefined {
  const handed = handover.get(runtime)?.get(id);
  handover.get(runtime)?.delete(id);
  return handed;
}

/** Hands `handed` to the node deployed next with this id on this runtime. */
export function handOver(runtime: object, id: string, handed: Handed): void {
  if (!handover.has(runtime)) handover.set(runtime, new Map());
  handover.get(runtime)!.set(id, handed);
}
