/**
 * The `ems-schedule` node in a real Node-RED runtime (node-red-node-test-helper),
 * sending to the simulator on 127.0.0.1:0. Time is @sinonjs/fake-timers, installed for Date,
 * setTimeout and clearTimeout: the node's one timer, Node-RED's and the simulator's clock all
 * follow it, so a day of slots passes in no time. Each step fires the node's timer and waits
 * (in real time, bounded) for the request it sent; the simulator's log shows when each request
 * arrived, in simulated time.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { MINUTE_MS, QUARTER_HOUR_MS, formatClock } from '../../../src/protocol/time';
import { startSimulator, type StartedSimulator } from '../../../src/simulator';
import { callsOf, cfg, flow, helper, loadFlow, siteSteer, useRuntime } from '../../helpers/red';
import { scheduleNode } from '../../helpers/schedule';
import { runningScheduleFor } from '../../../src/runtime/schedules';
import { accept, HOME, scheduleSteps, SITE, slotAt, T0 } from './flow';

describe('nodes: ems-schedule', () => {
  useRuntime();
  let clock: ReturnType<typeof FakeTimers.install>;
  let sim: StartedSimulator;
  beforeEach(async () => {
    clock = FakeTimers.install({ now: T0 - 2 * MINUTE_MS, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    sim = await startSimulator({ port: 0 }); // its clock follows the fake Date
  });
  afterEach(async () => {
    // (useRuntime's afterEach unloaded the flow first, on the fake clock)
    clock.uninstall();
    await sim.close();
  });
  const { step, runOut } = scheduleSteps(
    () => clock,
    () => sim,
  );

  it("the runtime knows which schedule plays on which site until when (for site steer's warning); a second schedule node on the site warns", async () => {
    const deployed = await loadFlow([
      ...flow(scheduleNode({ name: 'day plan' }), cfg(sim.url)),
      { id: 'n2', type: 'ems-schedule', z: 'tab', x: 100, y: 200, server: 'cfg', ...scheduleNode(), wires: [[], []] },
    ]);
    const rt = await helper.getNode('cfg').runtime();
    await accept(deployed, { payload: [slotAt(0, { energyStorage: -200 }), slotAt(1, { energyStorage: -100 })] });
    const running = runningScheduleFor(rt, SITE);
    assert.deepEqual(
      { name: running?.name, until: running?.until, owner: running?.owner === deployed.node },
      { name: 'day plan', until: T0 + 2 * QUARTER_HOUR_MS, owner: true },
    );
    assert.equal(runningScheduleFor(rt, HOME), undefined);
    helper.getNode('n2').receive({ payload: [slotAt(4, { energyStorage: 5 })] });
    let warned: any[] | undefined;
    for (let i = 0; i < 1000 && !warned; i++) {
      warned = callsOf('warn', 'n2').find((a) => /also plays a schedule/.test(String(a[0])));
      await new Promise((r) => setImmediate(r));
    }
    assert.match(
      String(warned?.[0]),
      new RegExp(
        `^schedule node "day plan" also plays a schedule on ${SITE} until ${formatClock(T0 + 2 * QUARTER_HOUR_MS)}`,
      ),
    );
    const stopped = deployed.status.wait((s) => /^stopped/.test(s.text));
    deployed.send({ payload: 'stop' });
    await stopped;
    assert.equal(runningScheduleFor(rt, SITE)?.name, 'n2', 'the other node still plays (its id: no name)');
  });

  it('site steer warns when it sends to a site with a running schedule (naming it); not for another site, nor once the schedule is stopped or done', async () => {
    const steer = (id: string, site: string) => ({
      id,
      type: 'ems-site-steer',
      z: 'tab',
      x: 100,
      y: 300,
      server: 'cfg',
      ...siteSteer(site),
      wires: [[]],
    });
    const nodes = [
      ...flow(scheduleNode({ name: 'day plan' }), cfg(sim.url), { id: 'reports', type: 'helper', wires: [] }),
      steer('s1', SITE),
      steer('s2', HOME),
    ];
    const warnings = (id: string) =>
      callsOf('warn', id)
        .map((a) => String(a[0]))
        .filter((w) => /plays on/.test(w));
    /** Sends a value through site steer node `id` and waits until it was sent (its status says so). */
    async function steerNow(id: string, value: number): Promise<void> {
      const before = callsOf('status', id).length;
      helper.getNode(id).receive({ payload: value });
      for (
        let i = 0;
        i < 10_000 &&
        !callsOf('status', id)
          .slice(before)
          .some((a) => /^sent /.test(a[0]?.text ?? ''));
        i++
      )
        await new Promise((r) => setImmediate(r));
      assert.match(callsOf('status', id).at(-1)?.[0]?.text ?? '', /^sent /, `${id} sent`);
    }
    let deployed = await loadFlow(nodes);
    await accept(deployed, { payload: [slotAt(0, { energyStorage: -200 }), slotAt(1, { energyStorage: -100 })] });
    await step(deployed);
    await steerNow('s1', -5);
    await steerNow('s2', -5);
    assert.deepEqual(warnings('s1'), [
      `schedule "day plan" plays on ${SITE} until ${formatClock(T0 + 2 * QUARTER_HOUR_MS)}: this request and its next slot replace each other's components`,
    ]);
    assert.deepEqual(warnings('s2'), [], 'another site: no warning');
    // Stopped: no warning.
    const stopped = deployed.status.wait((s) => /^stopped/.test(s.text));
    deployed.send({ payload: 'stop' });
    await stopped;
    await steerNow('s1', -4);
    assert.equal(warnings('s1').length, 1, 'the schedule was stopped');
    // A schedule waiting for its first slot warns; once it played to its end (done), no warning
    // (the calls recorded start again with the new flow).
    deployed = await loadFlow(nodes);
    await accept(deployed, { payload: [slotAt(4, { energyStorage: -200 })] });
    await steerNow('s1', -3);
    assert.equal(warnings('s1').length, 1, 'waiting: warns');
    assert.match(
      warnings('s1')[0],
      new RegExp(`^schedule "day plan" plays on ${SITE} until ${formatClock(T0 + 5 * QUARTER_HOUR_MS)}:`),
    );
    await step(deployed); // slot 4's start: sent
    await runOut(deployed); // its end: done
    await steerNow('s1', -2);
    assert.equal(warnings('s1').length, 1, 'the schedule is done');
  });
});
