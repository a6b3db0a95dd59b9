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
import { packageTimers, nextPackageTimer } from '../../helpers/clock';
import { MINUTE_MS, QUARTER_HOUR_MS, formatClock } from '../../../src/protocol/time';
import { startSimulator, type StartedSimulator } from '../../../src/simulator';
import { callsOf, cfg, flow, helper, Inbox, loadFlow, turns, useRuntime, type Loaded } from '../../helpers/red';
import { scheduleNode } from '../../helpers/schedule';
import { accept, body, HOME, scheduleSteps, SITE, slotAt, T0 } from './flow';

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

  const { log, load, step, runOut } = scheduleSteps(
    () => clock,
    () => sim,
  );
  /** Resolves once node `n` showed a status matching `re` (any instance of it, e.g. after a redeploy). */
  async function shown(re: RegExp, from = 0): Promise<string> {
    for (let i = 0; i < 10_000; i++) {
      const hit = callsOf('status', 'n')
        .slice(from)
        .map((a) => a[0]?.text)
        .find((t) => re.test(t ?? ''));
      if (hit) return hit;
      await new Promise((r) => setImmediate(r));
    }
    assert.fail(`no status ${re}; saw ${JSON.stringify(callsOf('status', 'n').slice(-5))}`);
  }

  it('a 96-slot day: each run at its start, valid until its end, one request per change of setting, one timer; outputs and status', async () => {
    const values = Array.from({ length: 96 }, (_, i) => [-200, -200, -100, 0, 150, 150][Math.floor(i / 4) % 6]);
    const changes = values.filter((v, i) => i === 0 || values[i - 1] !== v).length;
    const deployed = await load();
    const shown = await accept(deployed, {
      payload: values.map((v, i) => slotAt(i, { energyStorage: v })),
      topic: 'day',
    });
    assert.equal(shown.text, `waiting: slot 1/96 at ${formatClock(T0)}`);
    assert.equal(log().length, 0, "nothing before the first slot's start");
    for (let k = 0; k < changes; k++) await step(deployed);
    assert.equal(deployed.out.msgs.length, changes);
    const entries = log();
    assert.equal(entries.length, changes, 'one request per change of setting');
    for (const [k, e] of entries.entries()) {
      const sent = deployed.out.msgs[k];
      const first = sent.slots[0];
      const last = sent.slots[sent.slots.length - 1];
      assert.equal(e.time, T0 + first * QUARTER_HOUR_MS, `request ${k} at its first slot's start`);
      assert.equal(
        body(e).validUntil,
        T0 + (last + 1) * QUARTER_HOUR_MS,
        `request ${k} valid until its last slot's end`,
      );
      assert.ok(sent.slots.every((i: number) => values[i] === values[first]));
      assert.notEqual(values[last + 1], values[first], 'merged up to the change');
      assert.deepEqual(sent.request, { method: 'POST', path: `/sites/${SITE}/steering/ess`, body: body(e) });
      assert.equal(sent.payload.requestId, e.requestId);
      assert.equal(sent.site, SITE);
    }
    const lastMsg = deployed.out.msgs.at(-1);
    const statusText = deployed.status.all.filter((s) => /^slot/.test(s.text)).at(-1).text;
    const endAt = T0 + (lastMsg.slots.at(-1) + 1) * QUARTER_HOUR_MS;
    assert.equal(
      statusText,
      `slots ${lastMsg.slots[0] + 1}–${lastMsg.slots.at(-1) + 1}/96 · ESS ${String(values[95]).replace('-', '−')} kW until ${formatClock(endAt)}`,
    );
    assert.ok(
      deployed.status.all.some((s) => s.text === `slots 1–8/96 · ESS −200 kW until ${formatClock(T0 + 2 * 3_600_000)}`),
    );
    // The last request runs out: done, no timer left, nothing on output 2 (verify off).
    await runOut(deployed);
    assert.equal(packageTimers(clock), 0);
    assert.equal(deployed.reports.msgs.length, 0);
    assert.equal(deployed.caught.msgs.length, 0);
  });

  it('the slot in progress goes out at once; msg.site overrides the site', async () => {
    clock.tick(2 * MINUTE_MS + 20 * MINUTE_MS);
    const deployed = await load();
    deployed.send({
      payload: [slotAt(0, { energyStorage: 1 }), slotAt(1, { energyStorage: 2 }), slotAt(2, { energyStorage: 3 })],
      site: HOME,
    });
    const [m] = await deployed.out.count(1);
    assert.equal(log().length, 1);
    assert.equal(log()[0].time, T0 + 20 * MINUTE_MS);
    assert.deepEqual(m.request, {
      method: 'POST',
      path: `/sites/${HOME}/steering/ess`,
      body: { setting: { value: 2, unit: 'kW' }, validUntil: T0 + 2 * QUARTER_HOUR_MS },
    });
    assert.deepEqual(m.slots, [1]);
    await turns();
    assert.equal(deployed.status.all.at(-1).text, `slot 2/3 · ESS 2 kW until ${formatClock(T0 + 2 * QUARTER_HOUR_MS)}`);
  });

  // The turn of slot 2 comes `left` ms before its end: its timer fires late (the machine slept).
  async function lateTurn(left: number): Promise<Loaded> {
    const deployed = await load();
    await accept(deployed, {
      payload: [slotAt(0, { energyStorage: 1 }), slotAt(1, { energyStorage: 2 }), slotAt(2, { energyStorage: 3 })],
    });
    await step(deployed); // slot 1, at T0
    // Date jumps without the timer firing: the timer of slot 2 (due in 15 min) then fires at
    // T0 + 30 min − left.
    clock.setSystemTime(T0 + QUARTER_HOUR_MS - left);
    return deployed;
  }

  it('a run whose turn comes less than 1 s before its end (here exactly 1 s) is not sent: skipped, warned, shown; the next goes out at its start', async () => {
    const deployed = await lateTurn(1_000);
    await nextPackageTimer(clock);
    await turns();
    assert.equal(clock.now, T0 + 2 * QUARTER_HOUR_MS - 1_000);
    assert.deepEqual(
      log().map((e) => body(e).setting.value),
      [1],
      'nothing POSTed for slot 2',
    );
    assert.equal(deployed.out.msgs.length, 1);
    const warned = callsOf('warn', 'n')
      .map((a) => String(a[0]))
      .filter((w) => /not sent/.test(w));
    assert.equal(warned.length, 1, warned.join('; '));
    assert.match(
      warned[0],
      new RegExp(
        `not sent: its turn came at ${new Date(T0 + 2 * QUARTER_HOUR_MS - 1_000).toISOString()}, less than 1 s before its end \\(${new Date(T0 + 2 * QUARTER_HOUR_MS).toISOString()}\\)$`,
      ),
    );
    assert.equal(deployed.status.all.at(-1).text, 'slot 2/3 not sent (late)');
    assert.equal(deployed.caught.msgs.length, 0, 'a late turn is no error');
    await step(deployed); // slot 3 at its start, 1 s later
    assert.deepEqual(
      log().map((e) => [e.time, body(e).setting.value, body(e).validUntil]),
      [
        [T0, 1, T0 + QUARTER_HOUR_MS],
        [T0 + 2 * QUARTER_HOUR_MS, 3, T0 + 3 * QUARTER_HOUR_MS],
      ],
    );
  });

  it('a run whose turn comes 1001 ms before its end is still sent, valid until its end', async () => {
    const deployed = await lateTurn(1_001);
    await nextPackageTimer(clock);
    await turns();
    // A skip is decided (and shown) at once; a send is answered later.
    assert.deepEqual(
      deployed.status.all.filter((x) => /not sent/.test(x.text ?? '')),
      [],
    );
    await deployed.out.count(2);
    assert.equal(deployed.status.all.at(-1).text, `slot 2/3 · ESS 2 kW until ${formatClock(T0 + 2 * QUARTER_HOUR_MS)}`);
    assert.deepEqual(
      log().map((e) => [e.time, body(e).setting.value, body(e).validUntil]),
      [
        [T0, 1, T0 + QUARTER_HOUR_MS],
        [T0 + 2 * QUARTER_HOUR_MS - 1_001, 2, T0 + 2 * QUARTER_HOUR_MS],
      ],
    );
    assert.deepEqual(
      callsOf('warn', 'n').filter((a) => /not sent/.test(String(a[0]))),
      [],
    );
  });

  it('refusals name the slot and the field, send nothing, and leave the playing schedule as it is', async () => {
    const deployed = await load({ maxEssPower: 200_000 });
    await accept(deployed, { payload: [slotAt(0, { energyStorage: -150 }), slotAt(1, { energyStorage: -100 })] });
    const bad: Array<[unknown, RegExp]> = [
      [
        [
          slotAt(0, { energyStorage: 1 }),
          slotAt(1, { energyStorage: 2 }),
          slotAt(2, { energyStorage: 3 }),
          slotAt(3, { energyStorage: -250 }),
        ],
        /^ValidationError: msg\.payload\[3\]\.energyStorage must be within the node's limit maxEssPower = 200000 W/,
      ],
      [
        [slotAt(0, { energyStorage: 1 }), { start: T0 + 5 * MINUTE_MS, duration: 15, energyStorage: 1 }],
        /^ValidationError: msg\.payload\[1\]\.start overlaps msg\.payload\[0\]/,
      ],
      [
        [slotAt(1, { energyStorage: 1 }), slotAt(0, { energyStorage: 1 })],
        /^ValidationError: msg\.payload\[1\]\.start must not be before the start of msg\.payload\[0\]/,
      ],
      [
        [slotAt(0, { energyStorage: 1, gridTarget: 5 })],
        /^ValidationError: msg\.payload\[0\]\.gridTarget cannot be combined with energyStorage/,
      ],
      [
        [slotAt(0, { energyStorage: 1 }), slotAt(1, { energyStorag: 2 })],
        /^ValidationError: msg\.payload\[1\]\.energyStorag is not a slot field/,
      ],
      [
        [slotAt(-8, { energyStorage: 1 }), slotAt(-7, { energyStorage: 1 })],
        /^ValidationError: msg\.payload has only slots in the past/,
      ],
      [
        { slots: [slotAt(0, { energyStorage: 1 }), { start: T0, end: T0 - 1, energyStorage: 1 }] },
        /^ValidationError: msg\.payload\.slots\[1\]\.end must be after the slot's start/,
      ],
      ['go', /^ValidationError: msg\.payload must be an array of slots/],
    ];
    for (const [payload, re] of bad) {
      const err = await deployed.fails({ payload });
      assert.match(err.error.message, re);
    }
    assert.match(deployed.status.all.at(-1).text, /^bad msg\.payload/);
    assert.equal(log().length, 0, 'nothing sent');
    // The accepted schedule still plays: slot 0 at its start.
    await step(deployed);
    assert.deepEqual(body(log()[0]).setting, { value: -150, unit: 'kW' });
  });

  it('replace: the new schedule takes over from its first slot; the old request in force is cut there', async () => {
    const deployed = await load();
    await accept(deployed, {
      payload: [
        ...Array.from({ length: 8 }, (_, i) => slotAt(i, { energyStorage: -200 })),
        slotAt(8, { energyStorage: 100 }),
      ],
    });
    await step(deployed);
    clock.tick(30 * MINUTE_MS);
    deployed.send({ payload: [slotAt(4, { energyStorage: -50 }), slotAt(5, { energyStorage: -50 })] });
    const [, cut] = await deployed.out.count(2);
    assert.deepEqual(cut.request.body, { setting: { value: -200, unit: 'kW' }, validUntil: T0 + 3_600_000 });
    assert.deepEqual(cut.slots, [0, 1, 2, 3]);
    await step(deployed);
    assert.deepEqual(
      log().map((e) => [e.time, body(e).setting.value, body(e).validUntil]),
      [
        [T0, -200, T0 + 2 * 3_600_000],
        [T0 + 30 * MINUTE_MS, -200, T0 + 3_600_000],
        [T0 + 3_600_000, -50, T0 + 90 * MINUTE_MS],
      ],
    );
    await runOut(deployed);
    assert.equal(log().length, 3, "the old schedule's later slots are never sent");
  });

  it('stop: nothing more is sent, no timer is left; the status says when the slot in force runs out', async () => {
    const deployed = await load();
    await accept(deployed, { payload: [slotAt(0, { energyStorage: -200 }), slotAt(1, { energyStorage: -100 })] });
    await step(deployed);
    const stopped = deployed.status.wait((s) => /^stopped/.test(s.text));
    deployed.send({ payload: 'stop' });
    assert.equal((await stopped).text, `stopped; the last request runs out at ${formatClock(T0 + QUARTER_HOUR_MS)}`);
    assert.equal(packageTimers(clock), 0);
    clock.tick(3_600_000);
    await turns();
    assert.equal(log().length, 1);
    assert.equal(sim.sim.steeringState(SITE).components.energyStorageSetting, null, 'the setting ran out at its end');
  });

  it('redeploy mid-schedule: resumes at the slot in progress, sends nothing twice, the next slot at its start', async () => {
    const nodes = flow(scheduleNode(), cfg(sim.url), { id: 'reports', type: 'helper', wires: [] });
    const deployed = await loadFlow(nodes);
    await accept(deployed, {
      payload: [
        slotAt(0, { energyStorage: -200 }),
        slotAt(1, { energyStorage: -100 }),
        slotAt(2, { energyStorage: 0 }),
      ],
    });
    await step(deployed);
    clock.tick(5 * MINUTE_MS);
    const statuses = callsOf('status', 'n').length;
    await helper.setFlows(nodes, 'full');
    const out = new Inbox(helper.getNode('out'));
    assert.equal(await shown(/^slot /, statuses), `slot 1/3 · ESS −200 kW until ${formatClock(T0 + QUARTER_HOUR_MS)}`);
    await turns();
    assert.equal(log().length, 1, 'nothing sent twice');
    assert.equal(packageTimers(clock), 1);
    await nextPackageTimer(clock);
    await out.count(1);
    assert.deepEqual(
      log().map((e) => [e.time, body(e).setting.value]),
      [
        [T0, -200],
        [T0 + QUARTER_HOUR_MS, -100],
      ],
    );
  });

  it('redeploy after stop: the node stays stopped', async () => {
    const nodes = flow(scheduleNode(), cfg(sim.url), { id: 'reports', type: 'helper', wires: [] });
    const deployed = await loadFlow(nodes);
    await accept(deployed, { payload: [slotAt(0, { energyStorage: -200 }), slotAt(1, { energyStorage: -100 })] });
    await step(deployed);
    const stopped = deployed.status.wait((s) => /^stopped/.test(s.text));
    deployed.send({ payload: 'stop' });
    await stopped;
    const statuses = callsOf('status', 'n').length;
    await helper.setFlows(nodes, 'full');
    assert.equal(
      await shown(/^stopped/, statuses),
      `stopped; the last request runs out at ${formatClock(T0 + QUARTER_HOUR_MS)}`,
    );
    assert.equal(packageTimers(clock), 0);
    clock.tick(3_600_000);
    await turns();
    assert.equal(log().length, 1);
  });
});
