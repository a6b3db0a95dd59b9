/**
 * Reliability test 2: 300 seeded random sequences of steering messages (ESS, curtailment,
 * maximize grid import, random units and validity) into one site each, sent in bursts, with
 * the simulator at 15 % 429, 15 % 503, 5 % connection resets and 0-50 ms latency. After each
 * sequence every message has been answered and the site's steering state equals the
 * sequential application of every message sent to that site so far. Twenty sites run side by
 * side, each through its own sequences, to keep the run bounded.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { helper, NODES, Inbox, until, useRuntime } from '../../helpers/red';
import { manySites, useCrashWatch } from '../../helpers/faults';
import { startSimulator, DEFAULT_SITES, type StartedSimulator } from '../../../src/simulator';

const SITES = manySites(DEFAULT_SITES[1], 20);
/** Sequences per site: 20 sites x 15 = 300 sequences. */
const ROUNDS = 15;

type Comp = { value: number | boolean; unit?: string; validUntil: number };
type Msg = { payload: Record<string, unknown> };

const power = fc.record({ value: fc.integer({ min: -9000, max: 9000 }), unit: fc.constantFrom('W', 'kW', 'MW', 'kw') });
const limit = fc.oneof(
  fc.record({ value: fc.integer({ min: 0, max: 9000 }), unit: fc.constantFrom('W', 'kW', 'MW') }),
  fc.record({ value: fc.integer({ min: 0, max: 100 }), unit: fc.constant('%') }),
);
const message = fc
  .record({
    energyStorage: fc.option(power, { nil: undefined }),
    curtailment: fc.option(limit, { nil: undefined }),
    maximizeGridImport: fc.option(fc.boolean(), { nil: undefined }),
    validityMin: fc.integer({ min: 5, max: 90 }),
  })
  .filter((m) => m.energyStorage !== undefined || m.curtailment !== undefined || m.maximizeGridImport !== undefined);
/** A sequence: its messages and how they are cut into bursts. */
const sequence = fc.record({
  msgs: fc.array(message, { minLength: 1, maxLength: 12 }),
  cuts: fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 3 }),
});

const UNIT: Record<string, string> = { W: 'W', kW: 'kW', MW: 'MW', kw: 'kW', '%': '%' };

/** What the site must show after applying the messages one by one. */
function expected(msgs: Msg[]): Record<string, Comp | null> {
  const state: Record<string, Comp | null> = {
    energyStorageSetting: null,
    productionCurtailment: null,
    maximizeGridImport: null,
  };
  for (const { payload: p } of msgs) {
    const validUntil = p.validUntil as number;
    const set = (name: string, v: unknown) => {
      if (v === undefined) return;
      state[name] =
        typeof v === 'boolean'
          ? { value: v, validUntil }
          : { value: (v as Comp).value as number, unit: UNIT[(v as Comp).unit!], validUntil };
    };
    set('energyStorageSetting', p.energyStorage);
    set('productionCurtailment', p.curtailment);
    set('maximizeGridImport', p.maximizeGridImport);
  }
  return state;
}

describe('reliability 2: ordered steering under faults', function () {
  this.timeout(240_000);
  useRuntime();
  const crashes = useCrashWatch();
  let simulator: StartedSimulator;
  before(async () => {
    simulator = await startSimulator({
      seed: 11,
      sites: SITES,
      faults: { rate429: 0.15, rate503: 0.15, resetRate: 0.05, retryAfterSeconds: 0, latencyMs: [0, 50] },
    });
  });
  after(async () => {
    await simulator.close();
  });

  it('300 random sequences: every message answered, final state = sequential application, zero mismatches', async () => {
    const flow: object[] = [
      { id: 'cfg', type: 'ems-partner-config', baseUrl: simulator.url, simulator: false, retries: 15, concurrency: 6 },
    ];
    SITES.forEach((site, i) =>
      flow.push(
        {
          id: `n${i}`,
          type: 'ems-site-steer',
          server: 'cfg',
          site: site.siteReference,
          siteType: 'str',
          mode: 'combined',
          essValue: '',
          curtailmentValue: '',
          maximizeGridImport: 'unchanged',
          validity: 'msg',
          wires: [[`out${i}`]],
        },
        { id: `out${i}`, type: 'helper' },
      ),
    );
    flow.push(
      { id: 'c', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', type: 'helper' },
    );
    await helper.load(NODES, flow);
    const outs = SITES.map((_, i) => new Inbox(helper.getNode(`out${i}`)));
    const caught = new Inbox(helper.getNode('caught'));
    const seqs = fc.sample(sequence, { numRuns: ROUNDS * SITES.length, seed: 42 });
    const base = Date.now() + 60 * 60_000;
    let mismatches = 0;
    let messages = 0;
    const sentBefore = simulator.sim.stats().requests;
    await Promise.all(
      SITES.map(async (site, i) => {
        const node = helper.getNode(`n${i}`);
        const history: Msg[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const seq = seqs[i * ROUNDS + round];
          const msgs: Msg[] = seq.msgs.map((m) => ({
            payload: {
              ...(m.energyStorage && { energyStorage: m.energyStorage }),
              ...(m.curtailment && { curtailment: m.curtailment }),
              ...(m.maximizeGridImport !== undefined && { maximizeGridImport: m.maximizeGridImport }),
              validUntil: base + m.validityMin * 60_000,
            },
          }));
          const start = outs[i].msgs.length;
          const cuts = [...new Set(seq.cuts.filter((c) => c < msgs.length))].sort((a, b) => a - b);
          let from = 0;
          for (const cut of [...cuts, msgs.length]) {
            for (const m of msgs.slice(from, cut)) node.receive({ ...m });
            from = cut;
            await new Promise((r) => setImmediate(r)); // bursts in separate ticks
          }
          await until(
            [outs[i], caught],
            () => outs[i].msgs.length - start >= msgs.length || caught.msgs.length > 0,
            60_000,
            () => `answers on site ${i}, sequence ${round}: ${outs[i].msgs.length - start}/${msgs.length}`,
          );
          assert.deepEqual(
            caught.msgs.map((m) => m.error.message),
            [],
            'no message failed',
          );
          messages += msgs.length;
          history.push(...msgs);
          const want = expected(history);
          const got = simulator.sim.steeringState(site.siteReference).components as Record<string, Comp | null>;
          for (const name of Object.keys(want)) {
            const actual = got[name] && {
              value: got[name]!.value,
              ...(got[name]!.unit !== undefined && { unit: got[name]!.unit }),
              validUntil: got[name]!.validUntil,
            };
            try {
              assert.deepEqual(actual, want[name]);
            } catch {
              mismatches++;
            }
          }
        }
      }),
    );
    const requests = simulator.sim.stats().requests - sentBefore;
    console.log(
      `      ${ROUNDS * SITES.length} sequences, ${messages} messages, ${requests} steering requests sent (faults: ${JSON.stringify(simulator.sim.stats().faults)}), mismatches ${mismatches}`,
    );
    assert.equal(mismatches, 0);
    assert.deepEqual(crashes.events, []);
  });

  it('a burst of 100 slider moves sends at most 2 requests and ends at the last value', async () => {
    simulator.sim.setFaults({});
    simulator.sim.clearLog();
    await helper.load(NODES, [
      { id: 'cfg', type: 'ems-partner-config', baseUrl: simulator.url, simulator: false },
      {
        id: 'n',
        type: 'ems-site-steer',
        server: 'cfg',
        site: SITES[0].siteReference,
        siteType: 'str',
        mode: 'ess',
        essValue: 'payload',
        essValueType: 'msg',
        essUnit: 'kW',
        validity: 'quarter-hour',
        wires: [['out']],
      },
      { id: 'out', type: 'helper' },
    ]);
    const out = new Inbox(helper.getNode('out'));
    for (let v = 1; v <= 100; v++) helper.getNode('n').receive({ payload: v });
    const msgs = await out.count(100, 20_000);
    assert.equal(simulator.sim.requestLog.filter((e) => e.route.includes('steering')).length <= 2, true);
    assert.equal(simulator.sim.steeringState(SITES[0].siteReference).components.energyStorageSetting!.value, 100);
    assert.ok(msgs.filter((m) => m.merged).length >= 98, 'merged messages say so');
  });
});
