/**
 * Reliability test 1: 2,000 device reads through the Node-RED runtime against a simulator
 * at 20 % 5xx, 10 % 429 (Retry-After: 1), 5 % connection resets and 0-200 ms latency.
 * Every message ends in exactly one output or one Catch-able error; at least 99 % succeed;
 * no unhandled rejection; the run ends within a fixed bound.
 */
import assert from 'node:assert/strict';
import { helper, NODES, Inbox, until, useRuntime } from '../../helpers/red';
import { useCrashWatch } from '../../helpers/faults';
import { startSimulator, DEFAULT_SITES, type StartedSimulator } from '../../../src/simulator';

const DEVICES = DEFAULT_SITES.flatMap((s) => [s.battery.deviceReference, s.meter.deviceReference]);
const TOTAL = 2_000;
const BURST = 100;

describe('reliability 1: reads under faults', function () {
  this.timeout(150_000);
  useRuntime();
  const crashes = useCrashWatch();
  let simulator: StartedSimulator;
  before(async () => {
    simulator = await startSimulator({
      seed: 7,
      faults: { rate500: 0.2, rate429: 0.1, retryAfterSeconds: 1, resetRate: 0.05, latencyMs: [0, 200] },
    });
  });
  after(async () => {
    await simulator.close();
  });

  it('answers every one of 2,000 reads exactly once, 99 % or more with data', async () => {
    await helper.load(NODES, [
      { id: 'cfg', type: 'ems-partner-config', baseUrl: simulator.url, simulator: false, retries: 5, concurrency: 6 },
      {
        id: 'n',
        type: 'ems-device-read',
        server: 'cfg',
        device: DEVICES[0],
        deviceType: 'str',
        mode: 'map',
        properties: 'power,totalEnergyConsumed',
        propertiesType: 'str',
        wires: [['out']],
      },
      { id: 'out', type: 'helper' },
      { id: 'c', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', type: 'helper' },
    ]);
    const node = helper.getNode('n');
    const out = new Inbox(helper.getNode('out'));
    const caught = new Inbox(helper.getNode('caught'));
    const started = Date.now();
    // Bursts of 100 (as an inject fanning out would send them); the next burst when this one is answered.
    for (let sent = 0; sent < TOTAL; sent += BURST) {
      for (let i = sent; i < sent + BURST; i++)
        node.receive({ _msgid: `m${i}`, seq: i, deviceReference: DEVICES[i % DEVICES.length] });
      await until(
        [out, caught],
        () => out.msgs.length + caught.msgs.length >= sent + BURST,
        60_000,
        () => `answers to burst ${sent / BURST}`,
      );
    }
    const seconds = (Date.now() - started) / 1000;
    const seqs = [...out.msgs.map((m) => m.seq), ...caught.msgs.map((m) => m.seq)].sort((a, b) => a - b);
    assert.equal(seqs.length, TOTAL, 'one answer per message');
    assert.deepEqual(
      seqs,
      Array.from({ length: TOTAL }, (_, i) => i),
      'no message answered twice or lost',
    );
    for (const m of out.msgs) {
      assert.equal(typeof m.payload.power, 'number');
      assert.equal(m.deviceReference, DEVICES[m.seq % DEVICES.length], "each read gets its own device's answer");
    }
    for (const m of caught.msgs) assert.match(m.error.message, /HTTP (500|429)|ECONNRESET|connection failed/);
    assert.ok(out.msgs.length >= TOTAL * 0.99, `${out.msgs.length} of ${TOTAL} succeeded`);
    assert.deepEqual(crashes.events, []);
    const stats = simulator.sim.stats();
    console.log(
      `      ${out.msgs.length}/${TOTAL} ok, ${caught.msgs.length} errors, ${stats.requests} HTTP requests (faults: ${JSON.stringify(stats.faults)}), ${seconds.toFixed(1)} s`,
    );
  });
});
