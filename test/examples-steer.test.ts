/**
 * Examples 6, 7 and 8, loaded as shipped: the night charging window (signals that end at the
 * quarter hour or the window's end, renewed only when due) and PV curtailment in % (stop lifts
 * the limit) and on an export limit in kW, on two sites so they do not overwrite each other;
 * grid limits (08) that the simulated site's grid power stays within, re-sent every minute.
 */
import assert from 'node:assert/strict';
import { MINUTE_MS, quarterHourValidUntil } from '../src/protocol/time';
import { DEFAULT_SITES } from '../src/simulator/index';
import { nodeRedVersion } from './helpers/node-red-path';
import { loadExample, readExample } from './helpers/examples';
import { logged, turns, useRuntime, useSimulator } from './helpers/red';

const COM = DEFAULT_SITES[0];
const HOME = DEFAULT_SITES[1];
const SITE = HOME.siteReference;
const hhmm = (t: number) => {
  const d = new Date(t);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
};
/** The epoch ms of the HH:MM of `t` (seconds dropped). */
const minuteOf = (t: number) => Math.floor(t / MINUTE_MS) * MINUTE_MS;

/** The renewal margin of example 06: a new signal lasts at least this long (unless the window ends first). */
const LEAD_MS = 2 * MINUTE_MS;

/** Example 06's function node, run outside Node-RED with its clock at `now`. */
function nightFunction() {
  const fn = readExample('06 Night charging schedule.json').find((n) => n.type === 'function' && n.name === 'in the window?');
  const body = new Function('msg', 'node', 'flow', 'Date', fn.func);
  return (now: number, flow: Map<string, unknown>, payload: unknown) => {
    class At extends Date { static now() { return now; } }
    const node = { status() {}, error(e: unknown) { throw new Error(String(e)); } };
    return body({ payload }, node, { get: (k: string) => flow.get(k), set: (k: string, v: unknown) => flow.set(k, v) }, At);
  };
}

describe(`examples: steering (06, 07) on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(30_000);
  const sim = useSimulator({ frozen: true });
  beforeEach(() => {
    sim.s.sim.reset();
  });
  useRuntime();
  const steering = () => sim.s.sim.steeringState(SITE).components;
  const commercial = () => sim.s.sim.steeringState(COM.siteReference).components;
  const steerRequests = () => logged(sim.s, /^POST \/sites\/:ref\/steering/).length;

  describe('06 night charging', () => {
    const NIGHT = '06 Night charging schedule.json';

    it('inside the window: charges at 5 kW until the quarter hour or the window end, then waits until a renewal is due', async () => {
      const ex = await loadExample(NIGHT, sim.s.url);
      const sent = ex.inbox('sent');
      const t0 = Date.now();
      const end = minuteOf(t0) + 5 * MINUTE_MS; // ends within this or the next quarter hour
      ex.fire('in the window?', { payload: { start: hhmm(t0 - 10 * MINUTE_MS), end: hhmm(end), powerKw: 5 } });
      const [msg] = await sent.count(1);
      const ess = steering().energyStorageSetting!;
      assert.deepEqual([ess.value, ess.unit], [-5, 'kW']);
      const allowed = [t0, Date.now()].map((t) => Math.min(end, quarterHourValidUntil(t, LEAD_MS)));
      assert.ok(allowed.includes(ess.validUntil), `validUntil ${new Date(ess.validUntil).toISOString()}, expected ${allowed.map((t) => new Date(t).toISOString())}`);
      assert.equal(msg.request.path, `/sites/${SITE}/steering/ess`);
      assert.equal(ex.node('in the window?').context().flow.get('nightChargeUntil'), ess.validUntil);

      // Fired again at once: the signal in force covers the window's end or has > 90 s left, so nothing is sent.
      const status = ex.status('in the window?');
      const before = steerRequests();
      ex.fire('in the window?', { payload: { start: hhmm(t0 - 10 * MINUTE_MS), end: hhmm(end), powerKw: 5 } });
      const s = await status.wait((x) => /^charging until/.test(x.text));
      assert.equal(s.fill, 'green');
      assert.equal(steerRequests(), before);
    });

    it('renews when the signal in force has less than 90 s left', async () => {
      const ex = await loadExample(NIGHT, sim.s.url);
      const sent = ex.inbox('sent');
      const t0 = Date.now();
      ex.node('in the window?').context().flow.set('nightChargeUntil', t0 + 30_000);
      const end = minuteOf(t0) + 2 * 60 * MINUTE_MS;
      ex.fire('in the window?', { payload: { start: hhmm(t0 - 60 * MINUTE_MS), end: hhmm(end), powerKw: 2.5 } });
      await sent.count(1);
      const ess = steering().energyStorageSetting!;
      assert.deepEqual([ess.value, ess.unit], [-2.5, 'kW']);
      assert.ok([t0, Date.now()].map((t) => quarterHourValidUntil(t, LEAD_MS)).includes(ess.validUntil));
    });

    it('at every second of a quarter hour, a new signal outlasts the renewal margin; ticks every minute keep charging without a gap', () => {
      const run = nightFunction();
      const base = new Date(2026, 10, 22, 3, 30, 0).getTime();
      const window = { start: '01:00', end: '05:00', powerKw: 5 };
      for (let s = 0; s < 15 * 60; s++) {
        const flow = new Map<string, unknown>();
        const first = run(base + s * 1000, flow, window);
        assert.ok(first, `sends at +${s} s`);
        flow.set('nightChargeUntil', first.payload.validUntil);
        assert.ok(first.payload.validUntil - (base + s * 1000) >= 2 * MINUTE_MS, `+${s} s: lasts 2 min or more`);
        assert.equal(run(base + s * 1000 + 500, flow, window), null, `+${s} s: fired again 0.5 s later, nothing is sent`);
      }
      // An hour of the shipped inject (every 60 s), stored as the flow's "sent" branch does.
      const flow = new Map<string, unknown>();
      let sends = 0;
      for (let t = base + 17_000; t < base + 60 * MINUTE_MS; t += MINUTE_MS) {
        const out = run(t, flow, window);
        if (out) { sends++; flow.set('nightChargeUntil', out.payload.validUntil); }
        assert.ok((flow.get('nightChargeUntil') as number) > t + MINUTE_MS, `in force until the next tick at ${new Date(t).toISOString()}`);
      }
      assert.ok(sends <= 5, `${sends} signals in an hour`);
    });

    it('outside the window sends nothing; a bad schedule is an error naming the fields', async () => {
      const ex = await loadExample(NIGHT, sim.s.url);
      const status = ex.status('in the window?');
      const t0 = Date.now();
      ex.fire('in the window?', { payload: { start: hhmm(t0 - 60 * MINUTE_MS), end: hhmm(t0 - 30 * MINUTE_MS), powerKw: 5 } });
      const s = await status.wait((x) => /^outside/.test(x.text));
      assert.equal(s.fill, 'grey');
      const failed = new Promise<any>((resolve) => ex.node('in the window?').once('call:error', (c: any) => resolve(c.args[0])));
      ex.fire('in the window?', { payload: { start: '1am', end: '05:00', powerKw: 5 } });
      assert.match(String(await failed), /msg.payload must be \{start: "HH:MM", end: "HH:MM", powerKw: > 0\}/);
      assert.equal(steerRequests(), 0);
      assert.equal(steering().energyStorageSetting, null);
    });

    it('the shipped schedule (01:00-05:00, 5 kW) charges only inside its window', async () => {
      const ex = await loadExample(NIGHT, sim.s.url);
      const status = ex.status('in the window?');
      const inject = ex.nodes.find((n) => n.name === 'every minute: 01:00-05:00, 5 kW');
      assert.deepEqual(JSON.parse(inject.payload), { start: '01:00', end: '05:00', powerKw: 5 });
      assert.equal(inject.repeat, '60');
      // Within 5 s of the window's edge (01:00 or 05:00 local), first let the edge pass, so the
      // hour read here is the hour the function node sees.
      const nextHour = new Date();
      nextHour.setMinutes(60, 0, 0);
      const left = nextHour.getTime() - Date.now();
      if (left < 5000 && [1, 5].includes(nextHour.getHours())) await new Promise((r) => setTimeout(r, left + 10));
      ex.fire('every minute: 01:00-05:00, 5 kW');
      const h = new Date().getHours();
      if (h >= 1 && h < 5) {
        await ex.inbox('sent').count(1);
        assert.equal(steering().energyStorageSetting!.value, -5);
      } else {
        await status.wait((x) => x.text === 'outside 01:00-05:00');
        assert.equal(steerRequests(), 0);
      }
    });
  });

  describe('07 PV curtailment', () => {
    const CURTAIL = '07 PV curtailment on an export limit.json';

    it('% limit (Commercial site): holds the PV at 60 % to the quarter hour, renewed; stop lifts the limit until that signal ends', async () => {
      const ex = await loadExample(CURTAIL, sim.s.url);
      const node = ex.nodes.find((n) => n.name === 'Commercial PV limit in % (renewed)');
      assert.deepEqual([node.site, node.renew, node.stopAction, node.pvPeakPower], [COM.siteReference, true, 'lift', COM.pv.peakW]);
      const sent = ex.inbox('sent (%)');
      const t0 = Date.now();
      ex.fire('Commercial: limit PV to 60 %');
      const [msg] = await sent.count(1);
      assert.equal(msg.request.path, `/sites/${COM.siteReference}/steering/curtailment`);
      const c = commercial().productionCurtailment!;
      assert.deepEqual([c.value, c.unit], [60, '%']);
      assert.ok([t0, Date.now()].map((t) => quarterHourValidUntil(t)).includes(c.validUntil));

      ex.fire('Commercial: stop (lift the limit)');
      await sent.count(2);
      const lifted = commercial().productionCurtailment!;
      assert.deepEqual([lifted.value, lifted.unit], [COM.pv.peakW, 'W'], 'the installed PV power: no curtailment');
      assert.equal(lifted.validUntil, c.validUntil, 'until the signal in force would have ended, not longer');
      assert.equal(steering().productionCurtailment, null, 'the Home site is not touched');
    });

    it('the two halves steer different sites, so neither overwrites the other\'s limit', async () => {
      const ex = await loadExample(CURTAIL, sim.s.url);
      ex.fire('Commercial: limit PV to 60 %');
      ex.fire('Home: every minute, 3 kW export');
      await ex.inbox('sent (%)').count(1);
      await ex.inbox('sent (kW)').count(1);
      assert.deepEqual([commercial().productionCurtailment!.value, commercial().productionCurtailment!.unit], [60, '%']);
      assert.equal(steering().productionCurtailment!.unit, 'kW');
      const sites = ex.nodes.filter((n) => n.type === 'ems-site-steer' && n.mode === 'curtailment').map((n) => n.site);
      assert.equal(new Set(sites).size, sites.length, `one curtailment sender per site: ${sites}`);
    });

    it('kW export limit (Home): PV limited to PV + grid + 3 kW, valid 5 minutes', async () => {
      const ex = await loadExample(CURTAIL, sim.s.url);
      const sent = ex.inbox('sent (kW)');
      const pvW = sim.s.sim.measure(HOME.pv.deviceReference, 'power').value;
      const gridW = sim.s.sim.measure(HOME.meter.deviceReference, 'power').value;
      const t0 = Date.now();
      ex.fire('Home: every minute, 3 kW export');
      const [msg] = await sent.count(1);
      const expectedKw = Math.round(Math.max(0, (pvW + gridW) / 1000 + 3) * 10) / 10;
      assert.equal(msg.pvW, pvW);
      assert.equal(msg.gridW, gridW);
      const c = steering().productionCurtailment!;
      assert.deepEqual([c.value, c.unit], [expectedKw, 'kW']);
      assert.ok(c.validUntil - t0 >= 5 * MINUTE_MS && c.validUntil - Date.now() <= 5 * MINUTE_MS, 'valid 5 minutes');
      assert.equal(msg.request.path, `/sites/${SITE}/steering/curtailment`);
      assert.equal(commercial().productionCurtailment, null, 'the Commercial site is not touched');
    });

    it('kW export limit: a missing limit is an error, nothing is sent', async () => {
      const ex = await loadExample(CURTAIL, sim.s.url);
      const failed = new Promise<any>((resolve) => ex.node('production limit').once('call:error', (c: any) => resolve(c.args[0])));
      ex.fire('Home grid power', {});
      assert.match(String(await failed), /msg.exportLimitKw must be a number of kW, 0 or more; got undefined/);
      assert.equal(steerRequests(), 0);
    });
  });
});

describe(`examples: grid limits (08) on Node-RED ${nodeRedVersion}`, function () {
  this.timeout(30_000);
  const GRID = '08 Grid limits - hold the grid power within bounds.json';
  // A frozen June morning: the same site state on every run (the simulator is deterministic for a seed and time).
  const sim = useSimulator({ frozen: true, startTime: Date.UTC(2026, 5, 21, 9, 30) });
  beforeEach(() => {
    sim.s.sim.reset();
  });
  useRuntime();
  const limitsOf = () => sim.s.sim.steeringState(COM.siteReference).components.gridLimits;
  const gridW = () => sim.s.sim.measure(COM.meter.deviceReference, 'power').value;

  it('import ≤ 200 kW, export ≤ 300 kW: sent to the grid-limits endpoint, valid 5 minutes; the site\'s grid power stays within', async () => {
    const ex = await loadExample(GRID, sim.s.url);
    const node = ex.nodes.find((n) => n.type === 'ems-site-steer');
    assert.deepEqual([node.site, node.mode, node.maxGridLimit, node.renew], [COM.siteReference, 'grid-limits', 1_000_000, false]);
    const sent = ex.inbox('sent');
    const t0 = Date.now();
    ex.fire('Commercial: import ≤ 200 kW, export ≤ 300 kW');
    const [msg] = await sent.count(1);
    assert.equal(msg.request.path, `/sites/${COM.siteReference}/steering/grid-limits`);
    assert.deepEqual([msg.request.body.upperLimit, msg.request.body.lowerLimit], [{ value: 200, unit: 'kW' }, { value: -300, unit: 'kW' }]);
    assert.ok(msg.request.body.validUntil - t0 >= 5 * MINUTE_MS && msg.request.body.validUntil - Date.now() <= 5 * MINUTE_MS, 'valid 5 minutes');
    assert.deepEqual([limitsOf()?.upperW, limitsOf()?.lowerW], [200_000, -300_000]);

    const checked = ex.inbox('grid vs limits');
    const status = ex.status('within the limits?');
    ex.fire('every 10 s: read the grid power');
    const [c] = await checked.count(1);
    assert.equal(c.payload.gridW, gridW());
    assert.deepEqual([c.payload.lowerW, c.payload.upperW], [-300_000, 200_000]);
    assert.equal(c.payload.within, true, `grid ${c.payload.gridW} W within −300 kW … 200 kW`);
    const shown = status.all.at(-1);
    assert.match(shown.text, /^grid -?\d+ kW within -300 kW … 200 kW$/);
    assert.equal(shown.fill, 'green');
  });

  it('the vendor\'s example (export at least 100 kW), the minute tick re-sends the choice, off stops sending', async () => {
    const ex = await loadExample(GRID, sim.s.url);
    const sent = ex.inbox('sent');
    ex.fire('Commercial: export at least 100 kW');
    const [a] = await sent.count(1);
    assert.deepEqual(Object.keys(a.request.body), ['upperLimit', 'validUntil']);
    assert.equal(limitsOf()?.upperW, -100_000);
    const checked = ex.inbox('grid vs limits');
    ex.fire('every 10 s: read the grid power');
    const [c] = await checked.count(1);
    assert.ok(c.payload.gridW <= -100_000 + 1, `the site exports at least 100 kW: grid ${c.payload.gridW} W`);
    assert.equal(c.payload.within, true);

    ex.fire('every minute: send the chosen limits again');
    const [, b] = await sent.count(2);
    assert.deepEqual(b.request.body.upperLimit, { value: -100, unit: 'kW' });
    const requests = logged(sim.s, /grid-limits/).length;
    const choice = ex.status('limits to send');
    ex.fire('Commercial: off (limits lapse)');
    const [, , stopped] = await sent.count(3);
    assert.deepEqual(stopped.payload, { stopped: true, renewing: false });
    assert.equal(choice.all.at(-1).text, 'off: the last limits end at their validUntil');
    assert.equal(limitsOf()?.upperW, -100_000, 'no cancel: the last limits hold until their validUntil');
    ex.fire('every minute: send the chosen limits again');
    await turns(20);
    assert.equal(sent.msgs.length, 3, 'the tick sends nothing after off');
    assert.equal(logged(sim.s, /grid-limits/).length, requests, 'nothing sent after off');
  });

  it('limits wider than the grid connection (maxGridLimit 1 MW) are refused: the error reaches the Catch node, nothing is sent', async () => {
    const ex = await loadExample(GRID, sim.s.url);
    const errors = ex.inbox('errors');
    ex.fire('limits to send', { payload: { lowerLimit: -1500 } });
    const [e] = await errors.count(1);
    assert.match(e.error.message, /msg\.payload\.lowerLimit must be within the node's limit maxGridLimit = 1000000 W/);
    assert.equal(logged(sim.s, /grid-limits/).length, 0);
  });
});
