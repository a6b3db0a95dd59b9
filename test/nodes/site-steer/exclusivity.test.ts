/**
 * The vendor's steering facts: asset steering (combined, ESS-only, curtailment-only) and grid target
 * cannot be used together; a request of one ends the other in force on the site. A site-steer
 * node that sends one type to a site on which this Node-RED (any node on the same config
 * node) has the other in force warns (node.warn and a yellow status). Grid limits never warn;
 * nothing warns once the other type has expired, was cancelled, or is on another site. The
 * runtime's bookkeeping (SteeringTypes) is also tested with an injected clock.
 */
import assert from 'node:assert/strict';
import { formatClock, MINUTE_MS } from '../../../src/protocol/time';
import { DEFAULT_SITES } from '../../../src/simulator';
import { callsOf, cfg, flow, helper, loadFlow, siteSteer, useRuntime, useSimulator } from '../../helpers/red';

const COM = DEFAULT_SITES[0].siteReference;
const HOME = DEFAULT_SITES[1].siteReference;

/** A flow of an ESS node (`n`), a grid-target node (`gt`), a grid-limits node (`gl`) and a curtailment node (`cu`), all on one config node. */
function nodes(url: string, extra: Record<string, unknown> = {}) {
  const on = (id: string, mode: string, more: Record<string, unknown> = {}) =>
    siteSteer(COM, { id, server: 'cfg', mode, wires: [['out']], ...extra, ...more });
  return flow(
    siteSteer(COM, { mode: 'ess', ...extra }),
    cfg(url),
    on('gt', 'grid-target'),
    on('gl', 'grid-limits', { upperLimitValue: '', lowerLimitValue: '' }),
    on('cu', 'curtailment'),
  );
}

describe('site steer: asset steering and grid target exclude each other (the node warns)', () => {
  const sim = useSimulator({ frozen: false });
  useRuntime();
  beforeEach(() => sim.s.sim.reset());
  const state = () => sim.s.sim.steeringState(COM).components;
  const warnings = (id: string) => callsOf('warn', id).map((a) => String(a[0]));

  /** Sends `msg` to node `id` and awaits its output. */
  async function ask(f: Awaited<ReturnType<typeof loadFlow>>, id: string, msg: Record<string, unknown>): Promise<any> {
    const before = f.out.msgs.length;
    helper.getNode(id).receive(msg);
    const all = await f.out.count(before + 1);
    assert.equal(f.caught.msgs.length, 0, f.caught.msgs[0]?.error?.message);
    return all[before];
  }
  /** The last status node `id` showed. */
  const statusOf = (id: string) => callsOf('status', id).at(-1)?.[0];

  it('a grid target after asset steering: warns that the service ends the asset steering; yellow status', async () => {
    const loaded = await loadFlow(nodes(sim.s.url));
    const ess = await ask(loaded, 'n', { payload: -50 });
    const until = ess.request.body.validUntil;
    const gt = await ask(loaded, 'gt', { payload: 20 });
    const warned = warnings('gt');
    assert.equal(warned.length, 1);
    assert.match(
      warned[0],
      new RegExp(
        `^sent grid 20 kW until \\d\\d:\\d\\d to ${COM}: the service ends the asset steering \\(ESS, curtailment, maximize grid import\\) this Node-RED had in force until ${formatClock(until)} \\(asset steering and grid target cannot be used together`,
      ),
    );
    const status = statusOf('gt');
    assert.equal(status.fill, 'yellow');
    assert.equal(status.text, `sent grid 20 kW until ${formatClock(gt.request.body.validUntil)}; ends asset steering`);
    assert.deepEqual(warnings('n'), [], 'the ESS node sent first: no warning');
    assert.equal(statusOf('n').fill, 'green');
    // The simulator as the service behaves (vendor notes): the grid target ended the ESS setting.
    assert.equal(state().energyStorageSetting, null);
    assert.equal(state().gridTarget?.value, 20);
  });

  it('asset steering after a grid target: warns that the service ends the grid target (ESS and curtailment nodes)', async () => {
    const loaded = await loadFlow(nodes(sim.s.url));
    for (const [id, msg] of [
      ['n', { payload: 10 }],
      ['cu', { payload: 300 }],
    ] as const) {
      const gt = await ask(loaded, 'gt', { payload: -5 });
      await ask(loaded, id, msg);
      const warned = warnings(id);
      assert.equal(warned.length, 1, `${id} warns once`);
      assert.match(
        warned[0],
        new RegExp(
          `the service ends the grid target this Node-RED had in force until ${formatClock(gt.request.body.validUntil)}`,
        ),
      );
      assert.match(statusOf(id).text, /; ends grid target$/);
      assert.equal(statusOf(id).fill, 'yellow');
      assert.equal(state().gridTarget, null, 'the simulator ended the grid target');
    }
    assert.equal(warnings('gt').length, 1, 'the second grid target ended the ESS setting: one warning of gt');
  });

  it('asset steering after asset steering, and a grid target after a grid target, do not warn', async () => {
    const loaded = await loadFlow(nodes(sim.s.url));
    await ask(loaded, 'n', { payload: 1 });
    await ask(loaded, 'cu', { payload: 100 });
    await ask(loaded, 'n', { payload: 2 });
    const reloaded = await loadFlow(nodes(sim.s.url));
    sim.s.sim.reset();
    await ask(reloaded, 'gt', { payload: 1 });
    await ask(reloaded, 'gt', { payload: 2 });
    for (const id of ['n', 'cu', 'gt']) assert.deepEqual(warnings(id), [], id);
  });

  it('grid limits never warn, and are never warned about', async () => {
    const loaded = await loadFlow(nodes(sim.s.url));
    await ask(loaded, 'n', { payload: 1 });
    await ask(loaded, 'gl', { payload: { upperLimit: 50 } });
    await ask(loaded, 'gt', { payload: 3 }); // ends the ESS setting: gt warns about asset steering only
    await ask(loaded, 'gl', { payload: { lowerLimit: -50 } });
    await ask(loaded, 'n', { payload: 4 });
    assert.deepEqual(warnings('gl'), []);
    assert.equal(statusOf('gl').fill, 'green');
    assert.equal(warnings('gt').length, 1);
    assert.doesNotMatch(warnings('gt')[0], /grid limits/);
    assert.equal(warnings('n').length, 1);
    assert.doesNotMatch(warnings('n')[0], /grid limits/);
    assert.ok(state().gridLimits, 'grid limits coexist with both');
  });

  it('no warning when the other type has expired, was cancelled, or is on another site', async () => {
    const loaded = await loadFlow(nodes(sim.s.url, { validity: 'msg' }));
    // Expired: an ESS signal valid 400 ms.
    const short = Date.now() + 400;
    await ask(loaded, 'n', { payload: 1, validUntil: short });
    await new Promise((r) => setTimeout(r, Math.max(0, short - Date.now()) + 20));
    await ask(loaded, 'gt', { payload: 2, validUntil: Date.now() + 5 * MINUTE_MS });
    assert.deepEqual(warnings('gt'), []);
    assert.equal(statusOf('gt').fill, 'green');
    // Cancelled: stop in grid-target mode sends the DELETE; asset steering after it does not warn.
    await ask(loaded, 'gt', { payload: 'stop' });
    await ask(loaded, 'n', { payload: 3, validUntil: Date.now() + 5 * MINUTE_MS });
    assert.deepEqual(warnings('n'), []);
    // Another site.
    await ask(loaded, 'gt', { payload: 4, site: HOME, validUntil: Date.now() + 5 * MINUTE_MS });
    assert.deepEqual(warnings('gt'), []);
  });

  it('a dry run neither warns nor ends what is in force', async () => {
    const loaded = await loadFlow([
      ...nodes(sim.s.url),
      siteSteer(COM, {
        id: 'dry',
        server: 'cfg',
        mode: 'grid-target',
        dryRun: true,
        wires: [['out']],
        z: 'tab',
        x: 100,
        y: 100,
      }),
    ]);
    await ask(loaded, 'n', { payload: 1 });
    const dryReply = await ask(loaded, 'dry', { payload: 5 });
    assert.equal(dryReply.dryRun, true);
    assert.deepEqual(warnings('dry'), []);
    assert.equal(statusOf('dry').fill, 'grey');
    await ask(loaded, 'gt', { payload: 6 });
    assert.equal(warnings('gt').length, 1, 'the asset steering was still in force after the dry run');
  });
});
