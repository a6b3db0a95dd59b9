/**
 * Re-planning as the node does it: `ems-plan` with Re-plan on (model-predictive control) in a real
 * Node-RED runtime. The node keeps the last prices and forecasts and plans again at each quarter
 * hour (one timer per node, cleared on close), on a fresh SOC (device read's `<device>/soc`, topic
 * `soc`, msg.soc) and at once on a delivery report that says no or partly; it hands on only what
 * changed (from the first changed slot, in ems-schedule's shape, never a slot that ended) and says
 * so in msg.replan. Time is @sinonjs/fake-timers (Date, setTimeout, clearTimeout): nothing sleeps.
 */
import assert from 'node:assert/strict';
import { HOUR_MS, MINUTE_MS, QUARTER_HOUR_MS } from '../../../src/protocol/time';
import { loadFlow, turns, useRuntime, type Loaded } from '../../helpers/red';
import { useFakeClock, type InstalledClock } from '../../helpers/clock';
import { planFlow, T0 } from './flow';
import { planNode as sitePlanNode } from './site-flow';

/** 16 quarter hours from T0: cheap, dear, cheap, dear (per kWh), with a load of 1 kW and PV at midday. */
const PRICES = [0.3, 0.3, 0.1, 0.1, 0.12, 0.45, 0.5, 0.4, 0.11, 0.09, 0.2, 0.35, 0.48, 0.3, 0.22, 0.18].map(
  (price, k) => ({
    start: T0 + k * QUARTER_HOUR_MS,
    end: T0 + (k + 1) * QUARTER_HOUR_MS,
    importPrice: price,
    exportPrice: 0.05,
  }),
);
const LOAD = PRICES.map((_p, k) => 1000 + 100 * (k % 3));
/** The site model's node with Re-plan on. */
const planNode = (extra: Record<string, unknown> = {}) => sitePlanNode({ replan: true, ...extra });

describe('nodes: ems-plan re-planning', () => {
  useRuntime();
  let clock: InstalledClock;
  useFakeClock(
    () => ({ now: T0 + 5 * MINUTE_MS, toFake: ['Date', 'setTimeout', 'clearTimeout'] }),
    (c) => {
      clock = c;
    },
  );
  /** Moves the clock to `t`, firing the timers due on the way. */
  async function moveTo(t: number): Promise<void> {
    await clock.tickAsync(t - Date.now());
    await turns();
  }
  async function start(extra: Record<string, unknown> = {}): Promise<{ f: Loaded; first: any }> {
    const deployed = await loadFlow(planFlow(planNode(extra)));
    const first = await deployed.ask({
      payload: { prices: PRICES, loadForecast: LOAD },
      soc: 50,
      site: 'ste_mine',
      topic: 'tomorrow',
    });
    return { f: deployed, first };
  }
  /** A message's payload: from its first slot on, each slot the plan's (schedule shape), none ended. */
  function checkHanded(m: any, now: number): void {
    const slots = m.plan.slots;
    const first = slots.findIndex((s: any) => s.end === m.payload[0].end);
    assert.ok(first >= 0);
    assert.deepEqual(
      m.payload.map((s: any) => [s.start, s.end, s.energyStorage]),
      slots.slice(first).map((s: any) => [s.start, s.end, s.energyStorage]),
    );
    for (const s of m.payload)
      assert.deepEqual(Object.keys(s).sort(), [
        'end',
        'energyKWh',
        'energyStorage',
        'price',
        'socEnd',
        'socStart',
        'start',
      ]);
    assert.ok(
      m.payload.every((s: any) => s.end > now && s.start >= now),
      'no slot in the past',
    );
    assert.equal(m.replan.changed[0], 0, 'the first slot handed on is a changed one');
    assert.ok(m.replan.changed.every((k: number) => k >= 0 && k < m.payload.length));
  }

  it('new prices: every slot handed on, the slot in progress from now; msg.replan says why, from which SOC and which slots changed', async () => {
    const { f, first } = await start();
    assert.equal(first.topic, 'tomorrow');
    assert.equal(first.site, 'ste_mine');
    assert.equal(first.payload.length, 16);
    assert.equal(first.payload[0].start, T0 + 5 * MINUTE_MS);
    assert.deepEqual(first.replan, {
      trigger: 'input',
      at: T0 + 5 * MINUTE_MS,
      soc: 50,
      socFrom: 'message',
      changed: [...Array(16).keys()],
      slots: 16,
    });
    checkHanded(first, Date.now());
    assert.equal(f.caught.msgs.length, 0);
  });

  it('at each quarter hour it plans again from the SOC its plan expects; unchanged: nothing is sent; one timer, cleared on close', async () => {
    const timers0 = clock.countTimers();
    const { f } = await start();
    assert.equal(clock.countTimers() - timers0, 1, "the node's one timer");
    const statuses = f.status.all.length;
    await moveTo(T0 + QUARTER_HOUR_MS);
    assert.equal(f.out.msgs.length, 1, 'nothing changed, nothing sent');
    assert.match(f.status.all.at(-1).text, /^re-plan \(quarter hour\): no change · \d\d:\d\d$/);
    assert.ok(f.status.all.length > statuses);
    assert.equal(clock.countTimers() - timers0, 1, 'armed again for the next quarter hour, still one');
    await moveTo(T0 + 2 * QUARTER_HOUR_MS);
    assert.equal(f.status.all.filter((s: any) => /quarter hour/.test(s.text)).length, 2);
    // a second message with prices replaces the kept ones; still one timer
    await f.ask({
      payload: { prices: PRICES.map((p) => ({ ...p, importPrice: p.importPrice + 0.01 })), loadForecast: LOAD },
      soc: 50,
    });
    assert.equal(clock.countTimers() - timers0, 1);
    const node = f.node;
    await new Promise<void>((resolve) => {
      node.close(false).then(resolve);
    });
    assert.equal(clock.countTimers() - timers0, 0, 'closed: no timer left');
  });

  it('a fresh SOC from device read (topic <device>/soc) plans again at once; only the slots from the first changed one are handed on', async () => {
    const { f, first } = await start();
    await moveTo(T0 + 12 * MINUTE_MS);
    const planned = first.plan.soc[1].soc; // at the end of slot 0
    const reply = await f.ask({ topic: 'dvc_battery/soc', payload: 20, measurement: { property: 'soc' } });
    assert.equal(reply.replan.trigger, 'soc');
    assert.equal(reply.replan.socFrom, 'reading');
    assert.equal(reply.replan.soc, 20);
    assert.equal(reply.plan.soc[0].soc, 20);
    assert.equal(reply.topic, 'tomorrow', "the kept message's fields (topic, site) go along");
    assert.equal(reply.site, 'ste_mine');
    assert.notEqual(reply._msgid, first._msgid, 'a message of its own');
    checkHanded(reply, Date.now());
    assert.ok(planned > 20);
    assert.match(f.status.all.at(-1).text, /^re-plan \(SOC\): \d+ of 16 slots changed/);
    // msg.soc and topic soc work too; the same SOC again: nothing changed
    const before = f.out.msgs.length;
    f.send({ soc: 20 });
    f.send({ topic: 'soc', payload: '20' });
    await f.status.count((s: any) => /no change/.test(s.text), 2, 0);
    assert.equal(f.out.msgs.length, before);
  });

  it("a delivery report that says partly or no plans again at once, from the plan's SOC moved by what was measured; yes and unknown plan nothing", async () => {
    const { f, first } = await start();
    const slot0 = first.plan.slots[0];
    await moveTo(slot0.end);
    const quarter = f.out.msgs.length; // the quarter hour's re-plan (from the plan's own SOC) changed nothing
    f.send({
      topic: 'delivery',
      payload: {
        followed: 'yes',
        asked: slot0.energyStorage,
        measured: slot0.energyStorage,
        from: slot0.start,
        until: slot0.end,
      },
    });
    f.send({
      topic: 'delivery',
      payload: { followed: 'unknown', asked: slot0.energyStorage, measured: null, from: slot0.start, until: slot0.end },
    });
    await turns();
    assert.equal(f.out.msgs.length, quarter, 'no re-plan on yes or unknown');
    // The battery delivered 3 kW less than asked over slot 0 (asked to discharge, or to charge).
    const asked = slot0.energyStorage.value;
    const measured = asked > 0 ? asked - 3 : asked + 3; // less discharged, or less charged (or, idle, 3 kW discharged)
    const reply = await f.ask({
      topic: 'delivery',
      payload: {
        followed: 'partly',
        asked: slot0.energyStorage,
        measured: { value: measured, unit: 'kW' },
        from: slot0.start,
        until: slot0.end,
      },
    });
    assert.equal(reply.replan.trigger, 'delivery');
    assert.equal(reply.replan.socFrom, 'plan+delivery');
    const slotHours = (slot0.end - slot0.start) / HOUR_MS;
    const shift = (asked > 0 ? 3 / Math.sqrt(0.9) : asked < 0 ? -3 * Math.sqrt(0.9) : -3 / Math.sqrt(0.9)) * slotHours; // kWh in the store against the plan
    assert.ok(
      Math.abs(reply.replan.soc - (slot0.socEnd + shift * 10)) < 1e-6,
      `${reply.replan.soc} vs ${slot0.socEnd} + ${shift * 10}`,
    );
    checkHanded(reply, Date.now());
  });

  it('a SOC before any prices waits; prices without a SOC then plan from that reading', async () => {
    const deployed = await loadFlow(planFlow(planNode()));
    deployed.send({ topic: 'soc', payload: 64 });
    await deployed.status.count((s: any) => /^SOC 64 % · waiting for prices/.test(s.text), 1);
    const reply = await deployed.ask({ payload: { prices: PRICES, loadForecast: LOAD } });
    assert.equal(reply.replan.soc, 64);
    assert.equal(reply.replan.socFrom, 'reading');
  });

  it('prices before any SOC are kept (no error); the first SOC reading plans them', async () => {
    const deployed = await loadFlow(planFlow(planNode()));
    deployed.send({ payload: { prices: PRICES, loadForecast: LOAD } });
    await deployed.status.count((s: any) => /^prices kept · waiting for a SOC/.test(s.text), 1);
    assert.equal(deployed.caught.msgs.length, 0);
    const reply = await deployed.ask({ topic: 'dvc_battery/soc', payload: 33 });
    assert.deepEqual(
      [reply.replan.trigger, reply.replan.soc, reply.replan.socFrom, reply.payload.length],
      ['soc', 33, 'reading', 16],
    );
  });

  it('when the kept prices have all ended the plan ends quietly: no error, no timer, until new prices come', async () => {
    const timers0 = clock.countTimers();
    const { f } = await start();
    await moveTo(PRICES.at(-1)!.end);
    assert.match(f.status.all.at(-1).text, /^plan ended: no prices ahead/);
    assert.equal(f.caught.msgs.length, 0);
    assert.equal(clock.countTimers() - timers0, 0);
    f.send({ topic: 'soc', payload: 40 });
    await f.status.count((s: any) => /^SOC 40 % · waiting for prices/.test(s.text), 1);
  });

  it('a bad SOC reading is refused naming its field; the kept plan goes on', async () => {
    const { f } = await start();
    const caught = await f.fails({ topic: 'dvc_battery/soc', payload: 140 });
    assert.match(caught.error.message, /^ValidationError: msg\.payload must be within \[0, 100\]; got 140/);
    const c2 = await f.fails({ soc: 'full' });
    assert.match(c2.error.message, /^ValidationError: msg\.soc must be a finite number/);
    await moveTo(T0 + QUARTER_HOUR_MS);
    assert.match(f.status.all.at(-1).text, /^re-plan \(quarter hour\)/);
  });
});
