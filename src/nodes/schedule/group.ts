/**
 * The schedule node in a group (a config node with a redisUrl): every instance that receives a
 * schedule plays it and records it in the group (one round trip per schedule); each request of
 * a run is claimed in the group before it goes out (one round trip), so it goes out once, from
 * the leader of the site. The others answer "standby". Without a group nothing here acts.
 */
import { createHash } from 'node:crypto';
import {
  type LeaderAnswer,
  type PlayRun,
  type Runtime,
  type SchedulePlayer,
  type SteerGate,
  type SteeringCommand,
} from '../../runtime';
import type { Status } from '../shared';

const KIND = 'schedule';

export interface ScheduleGroupDeps {
  id: string;
  player: SchedulePlayer;
  status: Status;
}

export class ScheduleGroup {
  private gate?: SteerGate;
  private off?: () => void;
  /** The site of the schedule last played, and its runs (all of them, as received). */
  private site?: string;
  private runs: PlayRun[] = [];

  constructor(private readonly deps: ScheduleGroupDeps) {}

  private attach(runtime: Runtime): SteerGate | undefined {
    if (!runtime.gate) return undefined;
    if (!this.gate) {
      this.gate = runtime.gate;
      this.off = runtime.gate.onChange((s, a) => this.changed(s, a));
    }
    return this.gate;
  }

  /** A schedule is played on `site` (on each instance that received it): recorded in the group, its site watched. */
  played(runtime: Runtime, site: string, runs: PlayRun[]): void {
    const gate = this.attach(runtime);
    if (!gate) return;
    this.site = site;
    this.runs = runs;
    gate.watch(site);
    const ends = runs.reduce((m, r) => Math.max(m, r.end), 0);
    if (ends > Date.now()) void gate.share(site, { kind: KIND, id: this.deps.id, ends, data: { runs } });
  }

  /** A schedule resumed from the node's context (deploy, restart): its site watched, its runs kept for a take-over. */
  resumed(runtime: Runtime, runs: PlayRun[], inForce?: PlayRun): void {
    const site = runs[0]?.site ?? inForce?.site;
    if (!this.attach(runtime) || site === undefined) return;
    this.site = site;
    this.runs = inForce ? [inForce, ...runs] : runs;
    this.gate!.watch(site);
  }

  /** The schedule was stopped: the group plays nothing more of it. */
  stopped(): void {
    if (this.site !== undefined) this.gate?.forget(this.site, KIND, this.deps.id);
    this.runs = [];
  }

  /** Before a request of a run goes out: claimed in the group (rejects when another instance sends it, or none may). */
  async claim(runtime: Runtime, cmd: SteeringCommand): Promise<void> {
    const gate = this.attach(runtime);
    if (!gate) return;
    const key = `sched:${this.deps.id}:${createHash('sha256').update(JSON.stringify(cmd)).digest('base64url').slice(0, 22)}`;
    await gate.claim(cmd.site, key, Math.max(0, (cmd.validUntil ?? 0) - Date.now()) + 60_000);
  }

  close(): void {
    this.off?.();
  }

  private changed(site: string, answer: LeaderAnswer): void {
    if (site !== this.site) return;
    if (answer.kind === 'other') this.deps.status.standby(answer.instance, site);
    else if (answer.kind === 'unknown' && answer.reason === 'unreachable') this.deps.status.redisUnreachable();
    else if (answer.kind === 'me') {
      this.deps.status.leading(site);
      void this.takeOver(site);
    }
  }

  /**
   * This instance leads `site` now (the last leader died, or Redis came back): the schedule recorded
   * in the group plays from the run in progress. Its claim says whether the last leader sent it
   * already, so nothing is sent twice and nothing is skipped (but for a leader that died between its
   * claim and its send).
   */
  private async takeOver(site: string): Promise<void> {
    const entries = await this.gate!.entries(site, KIND, this.deps.id);
    if (site !== this.site) return;
    const stored = (entries[entries.length - 1]?.data as { runs?: PlayRun[] } | undefined)?.runs;
    const runs = (Array.isArray(stored) ? stored : this.runs).filter((r) => r.end > Date.now());
    if (runs.length === 0 || this.deps.player.wasStopped) return;
    // What this player sent itself and still holds is not sent again (a lease kept across a blip of Redis).
    const inForce = this.deps.player.current;
    this.deps.player.resume(inForce ? { runs, inForce } : { runs });
  }
}
