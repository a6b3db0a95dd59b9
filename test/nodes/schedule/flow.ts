/**
 * What the schedule node tests share: the simulator's sites, the first slot's start (a quarter hour
 * two hours or more ahead) and slots from it, and the steps of a test that runs the node on a fake
 * clock against the simulator.
 */
import assert from 'node:assert/strict';
import type FakeTimers from '@sinonjs/fake-timers';
import { packageTimers, nextPackageTimer } from '../../helpers/clock';
import { QUARTER_HOUR_MS } from '../../../src/protocol/time';
import { DEFAULT_SITES, type StartedSimulator } from '../../../src/simulator';
import { cfg, flow, helper, Inbox, loadFlow, turns, type Loaded } from '../../helpers/red';
import { scheduleNode } from '../../helpers/schedule';

export const SITE = DEFAULT_SITES[0].siteReference;
export const HOME = DEFAULT_SITES[1].siteReference;
export const T0 = Math.ceil((Date.now() + 2 * 3_600_000) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
export const slotAt = (i: number, extra: Record<string, unknown>) => ({
  start: T0 + i * QUARTER_HOUR_MS,
  end: T0 + (i + 1) * QUARTER_HOUR_MS,
  ...extra,
});
const steerRoute = /^POST \/sites\/:ref\/steering/;

export const body = (e: { body?: unknown }) => e.body as any;
/** Sends a schedule and waits until the node took it (its status says what it does next). */
export async function accept(f: Loaded, msg: Record<string, unknown>): Promise<any> {
  const shown = f.status.wait((s) => /^(waiting:|slots? )/.test(s.text ?? ''), 10_000, 'the schedule accepted');
  f.send(msg);
  return shown;
}

/**
 * The steps of a test on the fake clock and the simulator that the describe block's hooks install
 * (read when a step runs, so each test gets its own).
 */
export function scheduleSteps(
  currentClock: () => ReturnType<typeof FakeTimers.install>,
  currentSim: () => StartedSimulator,
) {
  /** The steering requests the simulator took. */
  const log = () => currentSim().sim.requestLog.filter((e) => steerRoute.test(e.route));
  async function load(
    extra: Record<string, unknown> = {},
    config: Record<string, unknown> = {},
  ): Promise<Loaded & { reports: Inbox }> {
    const deployed = await loadFlow(
      flow(scheduleNode(extra), cfg(currentSim().url, config), { id: 'reports', type: 'helper', wires: [] }),
    );
    return { ...deployed, reports: new Inbox(helper.getNode('reports')) };
  }
  /** Fires the node's one timer (the only one due) and waits for the `n` outputs it causes. */
  async function step(f: Loaded, n = 1): Promise<void> {
    assert.equal(packageTimers(currentClock()), 1, 'one timer');
    const before = f.out.msgs.length;
    await nextPackageTimer(currentClock());
    if (n > 0) await f.out.count(before + n);
    await turns();
  }
  /** Fires the node's last timer (the end of the last request): the status says done. */
  async function runOut(f: Loaded): Promise<void> {
    assert.equal(packageTimers(currentClock()), 1, 'one timer');
    await nextPackageTimer(currentClock());
    await turns();
    assert.equal(f.status.all.at(-1).text, 'done');
  }
  return { log, load, step, runOut };
}
