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
import { packageTimers } from '../../helpers/clock';
import { MINUTE_MS, QUARTER_HOUR_MS, formatClock } from '../../../src/protocol/time';
import { DEFAULT_SITES, startSimulator, type StartedSimulator } from '../../../src/simulator';
import { callsOf, cfg, flow, loadFlow, useRuntime } from '../../helpers/red';
import { scheduleNode } from '../../helpers/schedule';
import { accept, body, scheduleSteps, SITE, slotAt, T0 } from './flow';

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

  const { log, load, step } = scheduleSteps(
    () => clock,
    () => sim,
  );

  it('dry run: outputs the plan of requests, each with its send time, and sends nothing', async () => {
    clock.tick(2 * MINUTE_MS + 5 * MINUTE_MS);
    const deployed = await load({ dryRun: true });
    const reply = await deployed.ask({
      payload: {
        slots: [
          slotAt(0, { energyStorage: -100 }),
          slotAt(1, { energyStorage: -100 }),
          slotAt(2, { curtailment: 300, gridLimits: { upper: 50 } }),
        ],
        unit: 'kW',
      },
    });
    assert.equal(reply.dryRun, true);
    assert.deepEqual(reply.payload, [
      {
        at: T0 + 5 * MINUTE_MS,
        request: {
          method: 'POST',
          path: `/sites/${SITE}/steering/ess`,
          body: { setting: { value: -100, unit: 'kW' }, validUntil: T0 + 2 * QUARTER_HOUR_MS },
        },
        slots: [0, 1],
      },
      {
        at: T0 + 2 * QUARTER_HOUR_MS,
        request: {
          method: 'POST',
          path: `/sites/${SITE}/steering`,
          body: { productionCurtailment: { value: 300, unit: 'kW' }, validUntil: T0 + 3 * QUARTER_HOUR_MS },
        },
        slots: [2],
      },
      {
        at: T0 + 2 * QUARTER_HOUR_MS,
        request: {
          method: 'POST',
          path: `/sites/${SITE}/steering/grid-limits`,
          body: { upperLimit: { value: 50, unit: 'kW' }, validUntil: T0 + 3 * QUARTER_HOUR_MS },
        },
        slots: [2],
      },
    ]);
    assert.equal(
      deployed.status.all.at(-1).text,
      `dry run: 3 requests, ${formatClock(T0 + 5 * MINUTE_MS)}–${formatClock(T0 + 3 * QUARTER_HOUR_MS)}`,
    );
    assert.equal(packageTimers(clock), 0);
    assert.equal(log().length, 0);
  });

  it("a % curtailment is sent in W of the site's PV power (GET /sites), and refused naming the slot without it", async () => {
    const deployed = await load({ curtailmentUnit: '%' }, { percentCurtailment: 'convert' });
    await accept(deployed, { payload: [slotAt(0, { curtailment: 50 })] });
    await step(deployed);
    const peak = DEFAULT_SITES[0].pv.peakW;
    assert.deepEqual(body(log()[0]).productionCurtailment, { value: Math.round(peak / 2), unit: 'W' });
    const unknownSite = await load({ curtailmentUnit: '%', site: 'ste_unknown' }, { percentCurtailment: 'convert' });
    const err = await unknownSite.fails({ payload: [slotAt(1, { energyStorage: 1 }), slotAt(2, { curtailment: 40 })] });
    assert.match(
      err.error.message,
      /^ValidationError: msg\.payload\[1\]\.curtailment \(40 %\) cannot be sent: pvPeakPower is needed/,
    );
    assert.equal(log().length, 1);
  });

  it('a store that settings.js does not configure: a warning at deploy says the schedule will not survive a restart', async () => {
    await load({ store: 'file' });
    assert.match(
      String(callsOf('warn', 'n')[0]?.[0]),
      /^context store "file" is not configured \(settings\.js contextStorage\): the schedule is kept in the default store and does not survive a restart/,
    );
  });

  it('no server: a schedule is refused naming server; stop still ends the message', async () => {
    const deployed = await loadFlow(flow(scheduleNode({ server: '' }), cfg(sim.url)));
    assert.match(
      (await deployed.fails({ payload: [slotAt(0, { energyStorage: 1 })] })).error.message,
      /^ValidationError: server must be an ems-partner-config node/,
    );
    const before = deployed.caught.msgs.length;
    deployed.send({ payload: 'stop' });
    await deployed.status.wait((s) => s.text === 'stopped');
    assert.equal(deployed.caught.msgs.length, before);
  });
});
