/**
 * Reliability tests 3 and 6.
 * 3: property-based fuzzing: each flow node gets 2,000 arbitrary messages (wrong types, NaN,
 *    Infinity, huge numbers, nested junk, prototype-pollution keys); each ends in exactly one
 *    output or one error that names a field; Node-RED keeps running; Object.prototype is untouched.
 * 6: 500 random steering messages beyond the node's limits, with validUntil in the past, or
 *    with validUntil not after validFrom: zero requests reach the simulator.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { helper, NODES, Inbox, until, useRuntime } from '../../helpers/red';
import { useCrashWatch } from '../../helpers/faults';
import { startSimulator, DEFAULT_SITES, type StartedSimulator } from '../../../src/simulator';

const [COM] = DEFAULT_SITES;
const BAT = COM.battery.deviceReference;
const PER_NODE = 2_000;
const CHUNK = 250;

/** An error message that starts by naming a field: `<field> must …`, `msg.payload.x is not …`. */
const NAMES_A_FIELD =
  /^(\w*Error: )?(msg\.)?[A-Za-z_$][\w$]*(\.[\w$]+|\[\d+\]|\["(?:[^"\\]|\\.)*"\])* (must|is|sets|was|needs)\b/;

const junk = fc.oneof(
  fc.anything({
    withBigInt: false,
    withBoxedValues: true,
    withNullPrototype: true,
    withObjectString: true,
    withDate: true,
    withTypedArray: true,
    withSparseArray: true,
    maxDepth: 3,
  }),
  fc.constantFrom(
    NaN,
    Infinity,
    -Infinity,
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER + 2,
    -0,
    '',
    ' ',
    '1e999',
    '0x10',
    'kW',
    'stop',
    true,
    null,
    [],
    {},
    new Date(NaN),
  ),
  fc.constant(JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}}')),
);
const nearValid = {
  ref: fc.oneof(
    fc.constantFrom(BAT, COM.siteReference, COM.meter.deviceReference, 'dvc_000000000000', 'ste_unknown00000'),
    fc.string({ maxLength: 20 }),
  ),
  props: fc.oneof(
    fc.constantFrom('soc', 'soc,power', ['soc', 'power'], 'nope', 'soc,,', ['soc', 1]),
    fc.string({ maxLength: 12 }),
  ),
  time: fc.oneof(
    fc.constantFrom(
      '2026-01-01T00:00:00Z',
      Date.now() - 86_400_000,
      new Date(Date.now() - 3_600_000),
      'yesterday',
      -1,
      1e20,
    ),
    fc.integer(),
  ),
  power: fc.oneof(
    fc.double(),
    fc.integer({ min: -2_000_000, max: 2_000_000 }),
    fc.record({
      value: fc.oneof(fc.integer({ min: -500, max: 500 }), junk),
      unit: fc.constantFrom('W', 'kW', 'MW', 'GW', '%', 'kw', 'mW', 7),
    }),
  ),
};
const field = <T>(a: fc.Arbitrary<T>) => fc.option(fc.oneof(a, junk), { nil: undefined, freq: 2 });

const arbitraries: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  read: fc.record(
    {
      payload: junk,
      deviceReference: field(nearValid.ref),
      property: field(nearValid.props),
      properties: field(nearValid.props),
    },
    { requiredKeys: [] },
  ),
  series: fc.record(
    {
      payload: junk,
      deviceReference: field(nearValid.ref),
      property: field(nearValid.props),
      start: field(nearValid.time),
      end: field(nearValid.time),
      resolution: field(fc.oneof(fc.integer({ min: -5, max: 1000 }), fc.double())),
    },
    { requiredKeys: [] },
  ),
  steer: fc.record(
    {
      payload: fc.oneof(
        junk,
        nearValid.power,
        fc.record(
          {
            energyStorage: field(nearValid.power),
            curtailment: field(nearValid.power),
            maximizeGridImport: field(fc.boolean()),
            validUntil: field(nearValid.time),
            validFrom: field(nearValid.time),
            duration: field(fc.double()),
          },
          { requiredKeys: [] },
        ),
      ),
      site: field(nearValid.ref),
      maximizeGridImport: field(fc.boolean()),
      validUntil: field(nearValid.time),
      stop: field(fc.boolean()),
    },
    { requiredKeys: [] },
  ),
};

describe('reliability 3 and 6: fuzzing and safety', function () {
  this.timeout(180_000);
  useRuntime();
  const crashes = useCrashWatch();
  let simulator: StartedSimulator;
  before(async () => {
    simulator = await startSimulator({ seed: 5 });
  });
  after(async () => {
    await simulator.close();
  });

  const nodes: Record<string, Record<string, unknown>> = {
    read: {
      type: 'ems-device-read',
      device: BAT,
      deviceType: 'str',
      mode: 'map',
      properties: 'soc',
      propertiesType: 'str',
    },
    series: {
      type: 'ems-time-series',
      device: BAT,
      deviceType: 'str',
      property: 'soc',
      propertyType: 'str',
      range: 'last',
      last: 2,
      lastUnit: 'hours',
      resolution: 1,
      output: 'arrays',
    },
    steer: {
      type: 'ems-site-steer',
      site: COM.siteReference,
      siteType: 'str',
      mode: 'combined',
      essValue: 'payload',
      essValueType: 'msg',
      essUnit: 'kW',
      curtailmentValue: '',
      curtailmentUnit: 'kW',
      maximizeGridImport: 'msg',
      validity: 'duration',
      duration: 15,
      maxEssPower: 400_000,
    },
  };

  for (const [name, node] of Object.entries(nodes)) {
    it(`${name}: 2,000 arbitrary messages, each one output or one error naming a field`, async () => {
      const protoKeys = Object.getOwnPropertyNames(Object.prototype);
      await helper.load(NODES, [
        { id: 'cfg', type: 'ems-partner-config', baseUrl: simulator.url, simulator: false, retries: 0 },
        { id: 'n', z: 'f', x: 100, y: 100, server: 'cfg', wires: [['out']], ...node },
        { id: 'f', type: 'tab' },
        { id: 'out', z: 'f', type: 'helper' },
        { id: 'c', z: 'f', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
        { id: 'caught', z: 'f', type: 'helper' },
      ]);
      const fuzzNode = helper.getNode('n');
      const out = new Inbox(helper.getNode('out'));
      const caught = new Inbox(helper.getNode('caught'));
      const msgs = fc.sample(arbitraries[name], { numRuns: PER_NODE, seed: 1234 });
      for (let i = 0; i < msgs.length; i += CHUNK) {
        msgs.slice(i, i + CHUNK).forEach((m, k) => fuzzNode.receive({ ...m, seq: i + k }));
        await until(
          [out, caught],
          () => out.msgs.length + caught.msgs.length >= Math.min(i + CHUNK, msgs.length),
          60_000,
          () => `answers to ${i + CHUNK}; got ${out.msgs.length + caught.msgs.length}`,
        );
      }
      const seqs = [...out.msgs, ...caught.msgs].map((m) => m.seq).sort((a, b) => a - b);
      assert.deepEqual(
        seqs,
        msgs.map((_, i) => i),
        'exactly one answer per message',
      );
      const unnamed = caught.msgs.map((m) => m.error.message as string).filter((t) => !NAMES_A_FIELD.test(t));
      assert.deepEqual([...new Set(unnamed)].slice(0, 5), [], 'every error names a field');
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.deepEqual(Object.getOwnPropertyNames(Object.prototype), protoKeys);
      assert.deepEqual(crashes.events, []);
      // Node-RED keeps running: a good message still gets a good answer.
      const good = { read: {}, series: {}, steer: { payload: -10 } }[name];
      fuzzNode.receive({ ...good, seq: 'good' });
      await until(
        [out, caught],
        () => [...out.msgs, ...caught.msgs].some((m) => m.seq === 'good'),
        10_000,
        () => 'the good message',
      );
      assert.ok(
        out.msgs.some((m) => m.seq === 'good'),
        caught.msgs.find((m) => m.seq === 'good')?.error.message,
      );
      console.log(`      ${name}: ${out.msgs.length - 1} outputs, ${caught.msgs.length} errors`);
    });
  }

  it('500 unsafe steering messages: every one refused, zero requests reach the simulator', async () => {
    const now = Date.now();
    const unsafe = fc.oneof(
      fc.record({ payload: fc.oneof(fc.integer({ min: 101, max: 10_000 }), fc.integer({ min: -10_000, max: -101 })) }),
      fc.record({
        payload: fc.record({
          energyStorage: fc.record({ value: fc.integer({ min: 101, max: 1_000 }), unit: fc.constant('kW') }),
        }),
      }),
      fc.record({
        payload: fc.record({
          energyStorage: fc.record({ value: fc.double({ min: 0.11, max: 5, noNaN: true }), unit: fc.constant('MW') }),
        }),
      }),
      fc.record({ payload: fc.record({ curtailment: fc.integer({ min: 51, max: 100_000 }) }) }),
      fc.record({
        payload: fc.record({
          energyStorage: fc.integer({ min: -100, max: 100 }),
          validUntil: fc.integer({ min: 0, max: now - 1 }),
        }),
      }),
      fc.record({
        payload: fc.integer({ min: -100, max: 100 }),
        validUntil: fc.integer({ min: 0, max: now - 1 }).map((t) => new Date(t).toISOString()),
      }),
      fc
        .tuple(fc.integer({ min: now + 60_000, max: now + 3_600_000 }), fc.integer({ min: 0, max: 3_600_000 }))
        .map(([from, back]) => ({ payload: { energyStorage: 5, validFrom: from, validUntil: from - back } })),
    );
    await helper.load(NODES, [
      { id: 'cfg', type: 'ems-partner-config', baseUrl: simulator.url, simulator: false },
      {
        id: 'n',
        type: 'ems-site-steer',
        server: 'cfg',
        site: COM.siteReference,
        siteType: 'str',
        mode: 'combined',
        essValue: 'payload',
        essValueType: 'msg',
        essUnit: 'kW',
        curtailmentUnit: 'kW',
        validity: 'msg',
        maxEssPower: 100_000,
        maxCurtailment: 50_000,
        wires: [['out']],
      },
      { id: 'out', type: 'helper' },
      { id: 'c', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', type: 'helper' },
    ]);
    const before = simulator.sim.requestsReceived;
    const msgs = fc.sample(unsafe, { numRuns: 500, seed: 99 });
    const out = new Inbox(helper.getNode('out'));
    const caught = new Inbox(helper.getNode('caught'));
    msgs.forEach((m, i) =>
      helper
        .getNode('n')
        .receive({ ...m, validUntil: (m as { validUntil?: unknown }).validUntil ?? now + 600_000, seq: i }),
    );
    await caught.count(500, 30_000, 'refusals');
    assert.equal(out.msgs.length, 0);
    assert.equal(simulator.sim.requestsReceived, before, 'nothing reached the simulator');
    const reasons = caught.msgs.map((m) => m.error.message as string);
    assert.ok(
      reasons.every((r) =>
        /maxEssPower|maxCurtailment|validUntil must be in the future|validUntil must be after validFrom/.test(r),
      ),
      reasons.find((r) => !/max|validUntil/.test(r)),
    );
  });
});
