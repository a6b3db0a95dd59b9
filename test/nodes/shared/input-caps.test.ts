/**
 * Huge arrays into the nodes, in a real Node-RED (node-red-node-test-helper): a
 * 100,000-element price list, forecast, load history, schedule, site list or device list
 * (the longest array a message may hold: INPUTS.maxElements)
 * gives one error naming the field, the limit and the length found, nothing is sent, and the
 * array's elements are read once at most: by the one pass of every node's depth check over the
 * message (test/nodes/shared/deep-input.test.ts), never by the node's parsing (each is a Proxy counting reads of its
 * elements; the flows have no Catch node, whose copy of the message would read them all after the
 * refusal). The element-level proof that parsing reads none is test/acceptance/hostile/input-caps.test.ts; this shows
 * the nodes use it.
 */
import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../../../src/simulator';
import { callsOf, cfg, helper, NODES, siteSteer, turns, useRuntime, useSimulator } from '../../helpers/red';
import { scheduleNode } from '../../helpers/schedule';
import { countedReads } from '../../helpers/counted';

/** As long as a message's array may be (INPUTS.maxElements; longer: refused by every node before any work, test/nodes/shared/deep-input.test.ts), longer than every node's own cap. */
const HUGE_COUNT = 100_000;
const HOUR_MS = 3_600_000;
const SITE = DEFAULT_SITES[0].siteReference;
const T0 = Math.ceil((Date.now() + 24 * HOUR_MS) / HOUR_MS) * HOUR_MS;
const prices = (n: number) =>
  Array.from({ length: n }, (_, k) => ({ start: T0 + k * HOUR_MS, end: T0 + (k + 1) * HOUR_MS, price: 0.1 }));

/** An N-element array (each element `item`) that counts every read of an element. */
const counted = (item: unknown) => countedReads(HUGE_COUNT, item);

/** Node `n` (wired to `out`) and, when given, a config node; no Catch node. */
async function load(node: Record<string, unknown>, config?: Record<string, unknown>): Promise<any> {
  const at = { z: 'tab', x: 100, y: 100 };
  await helper.load(NODES, [
    { id: 'tab', type: 'tab', label: 'test' },
    { id: 'n', ...at, wires: [['out'], ['out']], ...(config ? { server: 'cfg' } : {}), ...node },
    ...(config ? [config] : []),
    { id: 'out', ...at, type: 'helper', wires: [] },
  ]);
  return helper.getNode('n');
}

/** Sends `msg(list)` with a counted huge list; the node's one error must match `expected`, each element read once at most (the depth check), nothing out. */
async function refused(
  node: any,
  item: unknown,
  msg: (list: any[]) => Record<string, unknown>,
  expected: RegExp,
): Promise<void> {
  const { list, reads } = counted(item);
  const out: unknown[] = [];
  helper.getNode('out').on('input', (m: unknown) => out.push(m));
  const before = callsOf('error', 'n').length;
  node.receive(msg(list));
  for (let i = 0; i < 2000 && callsOf('error', 'n').length === before; i++) await new Promise((r) => setImmediate(r));
  const errors = callsOf('error', 'n').slice(before);
  assert.equal(errors.length, 1, 'one error');
  const text = String(errors[0][0]?.message ?? errors[0][0]);
  assert.match(text, expected);
  assert.ok(reads() <= HUGE_COUNT, `each element read once at most, by the depth check: ${reads()} reads (${text})`);
  await turns();
  assert.deepEqual(out, [], 'nothing sent');
}

describe("nodes: a 100,000-element input is refused by its node's own cap, its elements read once at most", () => {
  const sim = useSimulator();
  useRuntime();

  it('price plan: prices as msg.payload, msg.payload.prices or a feed; pvForecast, loadForecast, loadHistory', async () => {
    const deployed = await load({ type: 'ems-plan', capacityKWh: '10', maxChargeKW: '5', priceUnit: 'kWh' });
    const slot = prices(1)[0];
    await refused(
      deployed,
      slot,
      (l) => ({ payload: l, soc: 50 }),
      /^msg\.payload must have at most 960 slots; got 100000$/,
    );
    await refused(
      deployed,
      slot,
      (l) => ({ payload: { prices: l }, soc: 50 }),
      /^msg\.payload\.prices must have at most 960 slots; got 100000$/,
    );
    await refused(
      deployed,
      slot,
      (l) => ({ payload: { priceData: l }, soc: 50 }),
      /^msg\.payload\.priceData must have at most 960 slots; got 100000$/,
    );
    await refused(
      deployed,
      1000,
      (l) => ({ payload: prices(4), pvForecast: l, soc: 50 }),
      /^msg\.pvForecast must have at most 50400 values .*; got 100000$/,
    );
    await refused(
      deployed,
      1000,
      (l) => ({ payload: prices(4), loadForecast: l, soc: 50 }),
      /^msg\.loadForecast must have at most 50400 values .*; got 100000$/,
    );
    await refused(
      deployed,
      { start: T0, value: 1 },
      (l) => ({ payload: prices(4), loadHistory: l, soc: 50 }),
      /^msg\.loadHistory must have at most 50400 points; got 100000$/,
    );
    await refused(
      deployed,
      1000,
      (l) => ({ payload: prices(4), gridImportMax: l, soc: 50 }),
      /^msg\.gridImportMax must have one value per price slot: 4; got 100000$/,
    );
  });

  it('schedule: msg.payload and msg.payload.slots', async () => {
    const deployed = await load(scheduleNode({ wires: [['out'], ['out']] }), cfg(sim.s.url));
    const one = { start: T0, end: T0 + HOUR_MS, energyStorage: 1 };
    await refused(
      deployed,
      one,
      (l) => ({ payload: l }),
      /^msg\.payload must have at most 2000 slots; got 100000; nothing was sent$/,
    );
    await refused(
      deployed,
      one,
      (l) => ({ payload: { slots: l } }),
      /^msg\.payload\.slots must have at most 2000 slots; got 100000; nothing was sent$/,
    );
  });

  it('site steer: msg.sites (a fleet, and a portfolio)', async () => {
    let deployed = await load(siteSteer(SITE), cfg(sim.s.url));
    await refused(
      deployed,
      SITE,
      (l) => ({ payload: 1, sites: l }),
      /^msg\.sites lists 100000 sites; one message steers at most 5000 /,
    );
    await helper.unload();
    deployed = await load(siteSteer(SITE, { mode: 'portfolio' }), cfg(sim.s.url));
    await refused(
      deployed,
      { site: SITE, maxPowerW: 1000 },
      (l) => ({ payload: 1, sites: l }),
      /^msg\.sites lists 100000 sites; one message steers at most 5000 /,
    );
  });

  it('device read: msg.deviceReference and msg.properties', async () => {
    const deployed = await load(
      {
        type: 'ems-device-read',
        device: DEFAULT_SITES[0].battery.deviceReference,
        deviceType: 'str',
        mode: 'map',
        properties: 'soc',
        propertiesType: 'str',
      },
      cfg(sim.s.url),
    );
    await refused(
      deployed,
      'dvc_a',
      (l) => ({ deviceReference: l }),
      /^msg\.deviceReference must name at most 5000 devices in one fleet read; got 100000$/,
    );
    await refused(
      deployed,
      'soc',
      (l) => ({ properties: l }),
      /^msg\.properties must name at most 100 properties per request; got 100000$/,
    );
  });
});
