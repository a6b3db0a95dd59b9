/**
 * Which schedules are playing on which site, per runtime (one config node and every node on
 * it): an `ems-schedule` node records the sites it steers and until when; the site-steer node
 * asks `runningScheduleFor(rt, site)` before sending, to warn that its request and the
 * schedule's next slot will replace each other's components.
 */

/** A schedule playing on a site. */
export interface RunningSchedule {
  /** The node playing it (its `owner` as registered). */
  owner: unknown;
  /** The node's name, or its id. */
  name: string;
  site: string;
  /** The end of the schedule's last run on the site (or of the request in force), epoch ms. */
  until: number;
}

interface Entry {
  name: string;
  /** Per site, the end of what the owner steers there. */
  sites: Map<string, number>;
}

const registry = new WeakMap<object, Map<unknown, Entry>>();

/**
 * Records what `owner` (an ems-schedule node) plays on runtime `rt`: per site, until when. An
 * empty list (stopped, done, closed) removes the owner.
 */
export function setRunningSchedule(
  rt: object,
  owner: unknown,
  name: string,
  runs: ReadonlyArray<{ site: string; end: number }>,
): void {
  let owners = registry.get(rt);
  if (runs.length === 0) {
    owners?.delete(owner);
    return;
  }
  if (!owners) registry.set(rt, (owners = new Map()));
  const sites = new Map<string, number>();
  for (const r of runs) sites.set(r.site, Math.max(sites.get(r.site) ?? 0, r.end));
  owners.set(owner, { name, sites });
}

/** Forgets `owner` on runtime `rt` (stopped, done or closed). */
export function clearRunningSchedule(rt: object, owner: unknown): void {
  registry.get(rt)?.delete(owner);
}

/**
 * The schedule playing on `site` from runtime `rt` at `now` (the one that lasts longest when
 * several do), or undefined. `except`: an owner to leave out (a schedule asking about itself).
 */
export function runningScheduleFor(
  rt: object,
  site: string,
  now = Date.now(),
  except?: unknown,
): RunningSchedule | undefined {
  let best: RunningSchedule | undefined;
  for (const [owner, e] of registry.get(rt) ?? []) {
    const until = e.sites.get(site);
    if (owner === except || until === undefined || until <= now) continue;
    if (!best || until > best.until) best = { owner, name: e.name, site, until };
  }
  return best;
}
