/**
 * Steering limits are on by default: a site steer or schedule node as a user drops it (no
 * property changed) never sends a value beyond what the site can take. Its power limits are
 * empty, which is the site's rating as GET /sites lists it (the simulator's site list names
 * them); where the service names none, the node refuses to steer until a limit is set, with a
 * Catch-able error naming the property and the forms it accepts. The same for every site of a
 * fleet or portfolio message. A flow saved by an earlier version keeps its limits off ("none",
 * migrated) and warns once at deploy (test/acceptance/flows/0.1.0.test.ts, test/nodes/shared/migrations.test.ts).
 */
import assert from 'node:assert/strict';
import { QUARTER_HOUR_MS } from '../../../src/protocol/time';
import { cfg, flow, loadFlow, useRuntime, useSimulator } from '../../helpers/red';
import { scheduleNode } from '../../helpers/schedule';
import { limitWarnings } from '../../helpers/limit-warnings';

describe('steering limits on by default', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();
  beforeEach(() => sim.s.sim.reset());

  describe('schedule', () => {
    const start = Math.ceil((Date.now() + 3_600_000) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
    const slot = (i: number, extra: Record<string, unknown>) => ({
      start: start + i * QUARTER_HOUR_MS,
      end: start + (i + 1) * QUARTER_HOUR_MS,
      ...extra,
    });
    const load = (extra: Record<string, unknown> = {}, config: Record<string, unknown> = {}) =>
      loadFlow(flow(scheduleNode(extra), cfg(sim.s.url, config), { id: 'reports', type: 'helper', wires: [] }));

    it("a new node: a slot beyond the site's rating refuses the whole schedule, naming the slot; a schedule within it is taken", async () => {
      const loaded = await load();
      const failure = await loaded.fails({
        payload: [slot(0, { energyStorage: -200 }), slot(1, { energyStorage: 600 })],
      });
      assert.match(
        failure.error.message,
        /^ValidationError: msg\.payload\[1\]\.energyStorage must be within the site's battery rating 500000 W/,
      );
      const gridFailure = await loaded.fails({ payload: [slot(0, { gridLimits: { lower: -900 } })] });
      assert.match(
        gridFailure.error.message,
        /^ValidationError: msg\.payload\[0\]\.gridLimits\.lower must be within the site's grid connection/,
      );
      const shown = loaded.status.wait((s) => /^waiting:/.test(s.text ?? ''), 10_000, 'the schedule accepted');
      loaded.send({ payload: [slot(0, { energyStorage: -200 }), slot(1, { energyStorage: 400 })] });
      await shown;
      assert.deepEqual(limitWarnings('n'), []);
    });

    it('a service that names no ratings: refused until a limit is set, naming it', async () => {
      const loaded = await load({}, { pathSites: '/not-published/sites' });
      const failure = await loaded.fails({ payload: [slot(0, { energyStorage: 5 })] });
      assert.match(
        failure.error.message,
        /^ValidationError: maxEssPower is not set, so it is the site's rating, and there is none for/,
      );
      const bounded = await load({ maxEssPower: 10_000 }, { pathSites: '/not-published/sites' });
      const shown = bounded.status.wait((s) => /^waiting:/.test(s.text ?? ''), 10_000, 'the schedule accepted');
      bounded.send({ payload: [slot(0, { energyStorage: 5 })] });
      await shown;
    });

    it('a schedule node saved by the previous release (no version, limits 0 or empty) keeps them off and warns once at deploy', async () => {
      const { version: _, ...old } = scheduleNode({
        maxEssPower: 0,
        maxCurtailment: 0,
        maxGridPower: '',
        maxGridLimit: '',
      });
      const loaded = await loadFlow(flow(old, cfg(sim.s.url), { id: 'reports', type: 'helper', wires: [] }));
      assert.deepEqual(limitWarnings('n'), [
        'steers without a limit: maxEssPower, maxCurtailment, maxGridPower, maxGridLimit are "none" (a flow saved by an earlier version, where an empty or 0 limit meant no limit); set each to the most the site may be asked for in W, or leave it empty for the site\'s rating (GET /sites)',
      ]);
      const shown = loaded.status.wait((s) => /^waiting:/.test(s.text ?? ''), 10_000, 'the schedule accepted');
      loaded.send({ payload: [slot(0, { energyStorage: 600 })] });
      await shown;
      assert.equal(limitWarnings('n').length, 1);
    });
  });
});
